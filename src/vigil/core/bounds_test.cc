#include "vigil/core/bounds.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace vigil {
namespace {

TEST(BoundsTest, ContainsHonoursOpenEnds) {
  const Bounds closed{.lo = 1, .hi = 8};
  EXPECT_TRUE(closed.Contains(1));
  EXPECT_TRUE(closed.Contains(8));
  EXPECT_FALSE(closed.Contains(0.5));
  EXPECT_FALSE(closed.Contains(std::nan("")));
  const Bounds open{.lo = 0, .hi = 1, .lo_open = true, .hi_open = true};
  EXPECT_FALSE(open.Contains(0));
  EXPECT_FALSE(open.Contains(1));
  EXPECT_TRUE(open.Contains(0.5));
  EXPECT_FALSE(kMetricValueBounds.Contains(std::numeric_limits<double>::infinity()));
}

TEST(BoundsTest, WritesIntervals) {
  EXPECT_EQ((Bounds{.lo = 1, .hi = 1048576}).ToString(), "[1, 1048576]");
  EXPECT_EQ((Bounds{.lo = 0, .hi = 1, .lo_open = true, .hi_open = true}).ToString(), "(0, 1)");
  EXPECT_EQ((Bounds{.lo = 0.01, .hi = 3600, .seconds = true}).ToString(), "[10ms, 1h]");
  EXPECT_EQ((Bounds{.lo = 0, .hi = 3650 * 86400.0, .seconds = true}).ToString(), "[0s, 3650d]");
  EXPECT_EQ((Bounds{.lo = 90, .hi = 1.5, .seconds = true}).ToString(), "[90s, 1500ms]");
  EXPECT_EQ(kMetricValueBounds.ToString(), "[-1e+100, 1e+100]");
  EXPECT_EQ(kUnixTimeBounds.ToString(), "[0, 7258118400] (Unix seconds, years 1970 to 2200)");
}

TEST(BoundsTest, CheckNamesWhatAndShowsTheText) {
  const Bounds gpus{.lo = 1, .hi = 1048576};
  EXPECT_TRUE(CheckBounds("--gpus", 8, gpus).ok());
  Status s = CheckBounds("--gpus", 1e12, gpus);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "--gpus: 1000000000000 is outside [1, 1048576]");
  EXPECT_EQ(CheckBounds("--gpus", 1e12, gpus, "1e12").message(),
            "--gpus: 1e12 is outside [1, 1048576]");
  EXPECT_EQ(CheckBounds("t.csv:3: timestamp", 9.2e18, kUnixTimeBounds).message(),
            "t.csv:3: timestamp: 9.2e+18 is outside [0, 7258118400] (Unix seconds, years 1970 to "
            "2200)");
  EXPECT_EQ(CheckBounds("x", std::nan(""), gpus).message(), "x: NaN is outside [1, 1048576]");
  const Bounds step{.lo = 0.01, .hi = 3600, .seconds = true};
  EXPECT_EQ(CheckBounds("--step", 7200, step).message(), "--step: 2h is outside [10ms, 1h]");
}

}  // namespace
}  // namespace vigil
