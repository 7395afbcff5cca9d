#include "vigil/core/csv.h"

#include <gtest/gtest.h>

#include <array>

namespace vigil {
namespace {

constexpr std::array<std::string_view, 3> kKnown = {"a", "b", "c"};

TEST(CsvColumnsTest, ColumnsInAnyOrderOptionalOnesAbsent) {
  Result<CsvColumns> c = CsvColumns::Parse("b,a", kKnown, 2, "f.csv");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_FALSE(c->has(2));
  std::vector<std::string_view> f;
  ASSERT_TRUE(c->Split("2,1", 2, &f).ok());
  EXPECT_EQ(f[0], "1");
  EXPECT_EQ(f[1], "2");
  EXPECT_EQ(f[2], "");
}

TEST(CsvColumnsTest, BadHeadersAndLinesNameTheFileAndLine) {
  EXPECT_EQ(CsvColumns::Parse("a,x", kKnown, 1, "f.csv").status().message(),
            "f.csv:1: header: unknown column \"x\" (the columns are a, b, c)");
  EXPECT_EQ(CsvColumns::Parse("a,a", kKnown, 1, "f.csv").status().message(),
            "f.csv:1: header: column \"a\" named twice");
  EXPECT_EQ(CsvColumns::Parse("a", kKnown, 2, "f.csv").status().message(),
            "f.csv:1: header: no b column");
  Result<CsvColumns> c = CsvColumns::Parse("a,b\r", kKnown, 2, "f.csv");
  ASSERT_TRUE(c.ok());
  std::vector<std::string_view> f;
  EXPECT_EQ(c->Split("1,2,3", 7, &f).message(), "f.csv:7: 3 fields, the header has 2");
}

}  // namespace
}  // namespace vigil
