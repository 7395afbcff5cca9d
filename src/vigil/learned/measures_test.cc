#include "vigil/learned/measures.h"

#include <gtest/gtest.h>

#include <vector>

namespace vigil::learned {
namespace {

// Of a component of many metrics, every metric that a slow part moves counts: a disk 8% slow
// moves its two IOPS (noise 3%) by 2.7 sigmas and its six latency percentiles (5%) by 1.6. A
// quarter-trimmed mean set aside the two IOPS and read 1.6.
TEST(MeasuresTest, EveryMetricASlowPartMovesCountsInItsPool) {
  std::vector<double> disk{1.6, 2.7, 1.6, 1.6, 2.7, 1.6, 1.6, 1.6};
  const ComponentDistance d = PooledSigmas(disk);
  EXPECT_NEAR(d.mean, (2 * 2.7 + 6 * 1.6) / 8, 1e-12);
  EXPECT_EQ(d.but_worst, d.mean);
  EXPECT_EQ(d.worst, 2.7);
  EXPECT_EQ(d.metrics, 8u);
}

// One metric's wild value (heavy-tailed noise) moves the pool by at most 2 sigmas of its share,
// either way.
TEST(MeasuresTest, OneWildMetricMovesThePoolByLittle) {
  std::vector<double> high{0.1, -0.2, 40, 0.0, 0.3, -0.1, 0.2, 0.1};
  EXPECT_NEAR(PooledSigmas(high).mean, (0.1 - 0.2 + 0.0 + 0.3 - 0.1 + 0.2 + 0.1 + (0.1 + 2)) / 8,
              1e-12);
  std::vector<double> low{3.1, 2.9, -40, 3.0, 3.2, 2.8, 3.0, 3.1};  // a slow part, one metric low
  EXPECT_GT(PooledSigmas(low).mean, 2.5);
}

// Held about the metrics' median, not about 0: a part whose metrics all move far (a GPU's offset
// that its GEMM types share, a gross defect) is not capped.
TEST(MeasuresTest, APartWhoseMetricsMoveTogetherIsNotCapped) {
  std::vector<double> gross{10, 10.5, 11, 9.5, 10};
  EXPECT_NEAR(PooledSigmas(gross).mean, 10.2, 1e-12);
}

// Of two or three metrics: the plain mean, and the mean without the worst one.
TEST(MeasuresTest, AFewMetricsArePooledByTheirMeanAndWithoutTheWorst) {
  std::vector<double> launch{4.2, 2.8};
  const ComponentDistance d = PooledSigmas(launch);
  EXPECT_NEAR(d.mean, 3.5, 1e-12);
  EXPECT_NEAR(d.but_worst, 2.8, 1e-12);
  EXPECT_EQ(d.worst, 4.2);
}

}  // namespace
}  // namespace vigil::learned
