#include "vigil/core/stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace vigil::stats {
namespace {

// Every expected value below was worked out by hand from the samples written beside it.

TEST(StatsTest, EmptyInputIsNaN) {
  const std::vector<double> none;
  EXPECT_TRUE(std::isnan(Mean(none)));
  EXPECT_TRUE(std::isnan(Median(none)));
  EXPECT_TRUE(std::isnan(Quantile(none, 0.5)));
  EXPECT_TRUE(std::isnan(Mad(none)));
  EXPECT_TRUE(std::isnan(StdDev(none)));
  EXPECT_TRUE(std::isnan(Min(none)));
  EXPECT_TRUE(std::isnan(Max(none)));
}

TEST(StatsTest, MedianOddAndEven) {
  EXPECT_DOUBLE_EQ(Median(std::vector<double>{5, 1, 3}), 3.0);
  EXPECT_DOUBLE_EQ(Median(std::vector<double>{4, 1, 3, 2}), 2.5);  // (2 + 3) / 2
  EXPECT_DOUBLE_EQ(Median(std::vector<double>{7}), 7.0);
}

TEST(StatsTest, MeanMinMaxStdDev) {
  const std::vector<double> x{2, 4, 4, 4, 5, 5, 7, 9};
  EXPECT_DOUBLE_EQ(Mean(x), 5.0);  // 40 / 8
  EXPECT_DOUBLE_EQ(Min(x), 2.0);
  EXPECT_DOUBLE_EQ(Max(x), 9.0);
  // Squared deviations sum to 32; 32 / 7 under the sample convention.
  EXPECT_DOUBLE_EQ(StdDev(x), std::sqrt(32.0 / 7.0));
  EXPECT_DOUBLE_EQ(StdDev(std::vector<double>{3}), 0.0);
}

TEST(StatsTest, QuantileInterpolatesLinearly) {
  const std::vector<double> x{10, 20, 30, 40, 50};  // positions 0..4
  EXPECT_DOUBLE_EQ(Quantile(x, 0.0), 10.0);
  EXPECT_DOUBLE_EQ(Quantile(x, 1.0), 50.0);
  EXPECT_DOUBLE_EQ(Quantile(x, 0.5), 30.0);
  EXPECT_DOUBLE_EQ(Quantile(x, 0.1), 14.0);   // pos 0.4: 10 + 0.4 * 10
  EXPECT_DOUBLE_EQ(Quantile(x, 0.95), 48.0);  // pos 3.8: 40 + 0.8 * 10
  EXPECT_DOUBLE_EQ(Quantile(std::vector<double>{3, 1, 2, 4}, 0.25), 1.75);  // pos 0.75
}

TEST(StatsTest, QuantileOfSortedValuesReadsThemInPlace) {
  const std::vector<double> x{10, 20, 30, 40, 50};
  for (const double q : {0.0, 0.1, 0.5, 0.95, 1.0}) {
    EXPECT_DOUBLE_EQ(QuantileOfSorted(x, q), Quantile(x, q)) << q;
  }
  EXPECT_TRUE(std::isnan(QuantileOfSorted(std::vector<double>{}, 0.5)));
  EXPECT_DOUBLE_EQ(QuantileOfSorted(std::vector<double>{7}, 0.9), 7.0);
}

TEST(StatsTest, MadIgnoresOutliers) {
  // Median 3; absolute deviations {2, 1, 0, 1, 97}; their median is 1.
  const std::vector<double> x{1, 2, 3, 4, 100};
  EXPECT_DOUBLE_EQ(Mad(x), 1.0);
  // Median 2.5; deviations {1.5, 0.5, 0.5, 1.5}; median 1.0.
  EXPECT_DOUBLE_EQ(Mad(std::vector<double>{1, 2, 3, 4}), 1.0);
  EXPECT_NEAR(kMadToSigma, 1.0 / 0.6744897501960817, 1e-12);
}

}  // namespace
}  // namespace vigil::stats
