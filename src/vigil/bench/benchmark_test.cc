#include "vigil/bench/benchmark.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

TEST(BenchmarkTest, ParsesSuites) {
  EXPECT_EQ(*ParseSuite("quick"), Suite::kQuick);
  EXPECT_EQ(*ParseSuite("full"), Suite::kFull);
  EXPECT_EQ(ParseSuite("fast").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(SuiteName(Suite::kFull), "full");
  EXPECT_EQ(*ParseSuite("health"), Suite::kHealth);
  EXPECT_EQ(SuiteName(Suite::kHealth), "health");
  EXPECT_EQ(ParseSuite("fast").status().message(),
            "unknown suite \"fast\" (expected health, quick or full)");
}

TEST(BenchmarkTest, TheHealthSuiteHasItsOwnDefaultsOrTheQuickOnes) {
  const ParamSpec own{"size", ParamKind::kInt, "8192", "16384", "m = n = k", "2048"};
  EXPECT_EQ(own.Default(Suite::kHealth), "2048");
  EXPECT_EQ(own.Default(Suite::kQuick), "8192");
  EXPECT_EQ(own.Default(Suite::kFull), "16384");
  const ParamSpec quick{"reps", ParamKind::kInt, "10", "30", "timed runs"};
  EXPECT_EQ(quick.Default(Suite::kHealth), "10");
}

TEST(BenchmarkTest, ParsesParamValues) {
  EXPECT_EQ(*ParseParamValue(ParamKind::kInt, "16"), 16.0);
  EXPECT_EQ(*ParseParamValue(ParamKind::kBytes, "4K"), 4096.0);
  EXPECT_EQ(*ParseParamValue(ParamKind::kBytes, "256m"), 256.0 * 1024 * 1024);
  EXPECT_EQ(*ParseParamValue(ParamKind::kBytes, "2G"), 2.0 * 1024 * 1024 * 1024);
  EXPECT_EQ(*ParseParamValue(ParamKind::kBytes, "4096"), 4096.0);
  EXPECT_EQ(*ParseParamValue(ParamKind::kSeconds, "0.25"), 0.25);
  EXPECT_EQ(*ParseParamValue(ParamKind::kFraction, "0.9"), 0.9);
  EXPECT_EQ(*ParseParamValue(ParamKind::kFraction, "1"), 1.0);
  for (const char* bad : {"0", "1.5", "-0.1", "half"}) {
    EXPECT_FALSE(ParseParamValue(ParamKind::kFraction, bad).ok()) << bad;
  }
  for (const char* bad : {"", "abc", "-1", "1.5x", "K", "nan", "inf"}) {
    EXPECT_FALSE(ParseParamValue(ParamKind::kBytes, bad).ok()) << bad;
  }
  EXPECT_FALSE(ParseParamValue(ParamKind::kInt, "1.5").ok());
  EXPECT_FALSE(ParseParamValue(ParamKind::kInt, "4K").ok());
}

TEST(BenchmarkTest, MedianMetricKeepsItsSamplesInOrder) {
  const Metric m = MedianMetric(MetricKey{"gpu-copy", "h2d_gbps", ComponentIndex{3, {}}}, "GB/s",
                                true, {30.0, 10.0, 20.0, 40.0});
  EXPECT_EQ(m.key.benchmark, "gpu-copy");
  EXPECT_EQ(m.key.metric, "h2d_gbps");
  ASSERT_TRUE(m.key.index.has_value());
  EXPECT_EQ(m.key.index->first, 3);
  EXPECT_DOUBLE_EQ(m.value, 25.0);  // the mean of the middle two
  EXPECT_EQ(m.unit, "GB/s");
  EXPECT_TRUE(m.higher_is_better);
  EXPECT_EQ(m.samples, (std::vector<double>{30.0, 10.0, 20.0, 40.0}));
}

// Values a node never needs, and that would run for hours or overflow further in, are refused.
TEST(BenchmarkTest, ParamValuesHaveRanges) {
  EXPECT_EQ(*ParseParamValue(ParamKind::kInt, "1048576"), 1048576.0);
  EXPECT_EQ(ParseParamValue(ParamKind::kInt, "1e9").status().message(),
            "1e9 is outside [0, 1048576]");
  EXPECT_EQ(*ParseParamValue(ParamKind::kBytes, "16T"), 17592186044416.0);
  EXPECT_EQ(ParseParamValue(ParamKind::kBytes, "17T").status().message(),
            "17T is outside [0, 17592186044416]");
  EXPECT_EQ(*ParseParamValue(ParamKind::kSeconds, "86400"), 86400.0);
  EXPECT_EQ(ParseParamValue(ParamKind::kSeconds, "1e300").status().message(),
            "1e300 is outside [0s, 1d]");
}

}  // namespace
}  // namespace vigil
