#include "vigil/core/duration.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

TEST(ParseDurationTest, UnitsAndBareSeconds) {
  EXPECT_DOUBLE_EQ(*ParseDuration("90s"), 90);
  EXPECT_DOUBLE_EQ(*ParseDuration("5m"), 300);
  EXPECT_DOUBLE_EQ(*ParseDuration("5min"), 300);
  EXPECT_DOUBLE_EQ(*ParseDuration("2h"), 7200);
  EXPECT_DOUBLE_EQ(*ParseDuration("1.5d"), 129600);
  EXPECT_DOUBLE_EQ(*ParseDuration("1w"), 604800);
  EXPECT_DOUBLE_EQ(*ParseDuration("250ms"), 0.25);
  EXPECT_DOUBLE_EQ(*ParseDuration("42"), 42);
  EXPECT_DOUBLE_EQ(*ParseDuration(" 3 h "), 10800);
  EXPECT_DOUBLE_EQ(*ParseDuration("0"), 0);
}

TEST(ParseDurationTest, RejectsWhatItCannotRead) {
  for (const char* bad : {"", "h", "-5m", "5 parsecs", "nan", "inf", "1e400s", "5m3s", "\xff"}) {
    const Result<double> r = ParseDuration(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("bad duration"), std::string::npos);
  }
}

TEST(FormatDurationTest, PicksTheLargestFittingUnit) {
  EXPECT_EQ(FormatDuration(45), "45 s");
  EXPECT_EQ(FormatDuration(90), "1.5 min");
  EXPECT_EQ(FormatDuration(548.4), "9.14 min");
  EXPECT_EQ(FormatDuration(6490.8), "1.8 h");
  EXPECT_EQ(FormatDuration(216000), "2.5 d");
}

}  // namespace
}  // namespace vigil
