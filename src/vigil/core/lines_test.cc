#include "vigil/core/lines.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace vigil {
namespace {

std::vector<std::string> All(std::string_view text, int64_t* last_line_no = nullptr) {
  LineReader reader(text);
  std::vector<std::string> lines;
  std::string_view line;
  while (reader.Next(line)) lines.emplace_back(line);
  if (last_line_no) *last_line_no = reader.line_no();
  return lines;
}

using Lines = std::vector<std::string>;

TEST(LineReaderTest, SplitsAndNumbers) {
  int64_t n = 0;
  EXPECT_EQ(All("a\nb\r\n\nc", &n), Lines({"a", "b", "", "c"}));
  EXPECT_EQ(n, 4);
  EXPECT_EQ(All("a\n"), Lines({"a"}));
  EXPECT_EQ(All(""), Lines{});
  EXPECT_EQ(All("\n\n"), Lines({"", ""}));
  EXPECT_EQ(All("x\r"), Lines({"x"}));
}

TEST(LineReaderTest, APieceIsNumberedOnFromTheLinesBeforeIt) {
  LineReader reader("c\nd", 2);
  std::string_view line;
  ASSERT_TRUE(reader.Next(line));
  EXPECT_EQ(line, "c");
  EXPECT_EQ(reader.line_no(), 3);
  ASSERT_TRUE(reader.Next(line));
  EXPECT_EQ(reader.line_no(), 4);
  EXPECT_FALSE(reader.Next(line));
}

}  // namespace
}  // namespace vigil
