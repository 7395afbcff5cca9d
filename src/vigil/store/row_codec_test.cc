#include "vigil/store/row_codec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace vigil::store {
namespace {

TEST(RowCodecTest, ValuesReadBackExactlyInOrder) {
  FleetRow row{"node-1",
               {{"gpu-gemm/fp16_tflops:3", 312.25},
                {"a/b", std::nan("")},
                {"c/d", -0.0},
                {"e/f", std::numeric_limits<double>::infinity()},
                {"g/h", 1e-300}},
               "8x A100"};
  FleetRow back;
  back.values = {{"stale/key", 1}};
  ASSERT_TRUE(DecodeRowValues(EncodeRowValues(row), "u", &back).ok());
  ASSERT_EQ(back.values.size(), row.values.size());
  for (size_t i = 0; i < row.values.size(); ++i) {
    EXPECT_EQ(back.values[i].first, row.values[i].first);
    const double a = row.values[i].second, b = back.values[i].second;
    EXPECT_TRUE(std::isnan(a) ? std::isnan(b) : a == b && std::signbit(a) == std::signbit(b));
  }
  EXPECT_TRUE(back.node.empty());  // names are columns of their own
}

TEST(RowCodecTest, TheFormIsLittleEndian) {
  const std::string bytes = EncodeRowValues(FleetRow{"n", {{"k/x", 1.0}}, ""});
  EXPECT_EQ(bytes,
            std::string("\x01\x00\x00\x00\x03\x00\x00\x00k/x\x00\x00\x00\x00\x00\x00\xf0\x3f",
                        4 + 4 + 3 + 8));
}

TEST(RowCodecTest, DamagedBytesAreAnIoErrorNamingTheRecord) {
  const std::string good = EncodeRowValues(FleetRow{"n", {{"k/x", 1.0}, {"k/y", 2.0}}, ""});
  FleetRow row;
  for (const std::string& bad : {std::string(), good.substr(0, good.size() - 1), good + "x",
                                 std::string("\xff\xff\xff\xff", 4)}) {
    const Status s = DecodeRowValues(bad, "upload 7", &row);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.code(), StatusCode::kIoError);
    EXPECT_EQ(s.message(), "upload 7: damaged stored row");
  }
  EXPECT_TRUE(DecodeRowValues(EncodeRowValues(FleetRow{}), "u", &row).ok());
  EXPECT_TRUE(row.values.empty());
}

}  // namespace
}  // namespace vigil::store
