#include "vigil/learned/measures.h"

#include <gtest/gtest.h>

#include <vector>

namespace vigil::learned {
namespace {

// Of a component of many metrics, every metric that a slow part moves counts where most of them
// move: a disk 8% slow moves its two IOPS (noise 3%) by 2.7 sigmas and its six latency
// percentiles (5%) by 1.6. A quarter-trimmed mean alone set aside the two IOPS and read 1.6.
TEST(MeasuresTest, EveryMetricASlowPartMovesCountsInItsPool) {
  std::vector<double> disk{1.6, 2.7, 1.6, 1.6, 2.7, 1.6, 1.6, 1.6};
  const ComponentDistance d = PooledSigmas(disk);
  EXPECT_NEAR(d.mean, (2 * 2.7 + 6 * 1.6) / 8, 1e-12);
  EXPECT_EQ(d.but_worst, d.mean);
  EXPECT_EQ(d.worst, 2.7);
  EXPECT_EQ(d.metrics, 8u);
}

// Where a defect moves fewer than half of the metrics (a GPU slow at three GEMM types of nine),
// the median stays among those that did not move, and the mean held about it could not exceed
// 2 x 3 / 9 sigmas however slow the part: the quarter-trimmed mean keeps the moved metrics beyond
// the quarter and grows with the defect.
TEST(MeasuresTest, ADefectOfAFewOfManyMetricsIsNotCapped) {
  std::vector<double> gemm{6, 0, 0, 6, 0, 0, 6, 0, 0};
  EXPECT_NEAR(PooledSigmas(gemm).mean, 6.0 / 5, 1e-12);  // the middle five: 0, 0, 0, 0, 6
  std::vector<double> slower{30, 0, 0, 30, 0, 0, 30, 0, 0};
  EXPECT_NEAR(PooledSigmas(slower).mean, 30.0 / 5, 1e-12);
}

// One metric's wild value (heavy-tailed noise) moves the pool by little either way; of an even
// count the median is the mean of the two middle values (here 2 and 3.5, held to 0.75..4.75).
TEST(MeasuresTest, OneWildMetricMovesThePoolByLittle) {
  std::vector<double> high{0.1, -0.2, 40, 0.0, 0.3, -0.1, 0.2, 0.1};
  EXPECT_NEAR(PooledSigmas(high).mean, (0.1 - 0.2 + 0.0 + 0.3 - 0.1 + 0.2 + 0.1 + (0.1 + 2)) / 8,
              1e-12);
  std::vector<double> even{4, 0, 3.5, 10, 2, 1};
  EXPECT_NEAR(PooledSigmas(even).mean, (0.75 + 1 + 2 + 3.5 + 4 + 4.75) / 6, 1e-12);
  // A slow part with one metric wild the other way: held, 2.76; trimmed, 3.0.
  std::vector<double> low{3.1, 2.9, -40, 3.0, 3.2, 2.8, 3.0, 3.1};
  EXPECT_NEAR(PooledSigmas(low).mean, (2.9 + 3.0 + 3.0 + 3.1) / 4, 1e-12);
}

// A part whose metrics all move far (an offset its GEMM types share, a gross defect) is not capped:
// held about the metrics' median, not about 0.
TEST(MeasuresTest, APartWhoseMetricsMoveTogetherIsNotCapped) {
  std::vector<double> gross{10, 10.5, 11, 9.5, 10};
  EXPECT_NEAR(PooledSigmas(gross).mean, 10.2, 1e-12);
}

// Four metrics are many (a quarter is one at each end); of two or three, the plain mean and the
// mean without the worst one.
TEST(MeasuresTest, AFewMetricsArePooledByTheirMeanAndWithoutTheWorst) {
  std::vector<double> four{0, 1, 2, 9};
  EXPECT_NEAR(PooledSigmas(four).mean, (0.0 + 1 + 2 + 3.5) / 4, 1e-12);  // held to -0.5..3.5
  std::vector<double> three{3, 1, 2};
  EXPECT_NEAR(PooledSigmas(three).mean, 2, 1e-12);
  EXPECT_NEAR(PooledSigmas(three).but_worst, 1.5, 1e-12);
  std::vector<double> launch{4.2, 2.8};
  const ComponentDistance d = PooledSigmas(launch);
  EXPECT_NEAR(d.mean, 3.5, 1e-12);
  EXPECT_NEAR(d.but_worst, 2.8, 1e-12);
  EXPECT_EQ(d.worst, 4.2);
}

}  // namespace
}  // namespace vigil::learned
