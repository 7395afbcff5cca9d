#include "vigil/select/subset.h"

#include <gtest/gtest.h>

namespace vigil::select {
namespace {

// Three benchmarks: "gpu" catches GPU faults, "net" network ones, "all" both but costs most.
SuiteStats ThreeBenchmarks() {
  SuiteStats s;
  s.benchmarks = {"gpu", "net", "all"};
  s.seconds = {600, 300, 3600};
  s.kinds = {"GPU", "network"};
  s.coverage.resize(3, 2);
  s.coverage << 0.9, 0.0,  //
      0.0, 0.8,            //
      0.7, 0.7;
  s.incident_share = {0.5, 0.5};
  s.mean_incident_cost = 50;
  return s;
}

TEST(SubsetChooserTest, PicksWhatCoversTheLikelyKindAndPays) {
  const SuiteStats s = ThreeBenchmarks();
  const SubsetChooser chooser(s, 1e9);
  const Subset gpu = chooser.Choose(10, Eigen::Vector2d(1, 0));
  EXPECT_EQ(gpu.benchmarks, std::vector<int>({0}));
  EXPECT_NEAR(gpu.averted, 9, 1e-9);
  EXPECT_NEAR(gpu.net, 9 - 600.0 / 3600, 1e-9);
  // Both kinds likely: the two cheap benchmarks (net 5 x 0.85 - 0.25 = 4.0) beat adding "all"
  // (5 x 0.955 - 1.25 = 3.53).
  const Subset both = chooser.Choose(5, Eigen::Vector2d(0.5, 0.5));
  EXPECT_EQ(both.benchmarks, std::vector<int>({0, 1}));
  EXPECT_NEAR(both.net, 4.0, 1e-9);
  // At twice the penalty the third benchmark's extra catch pays for its hour.
  EXPECT_EQ(chooser.Choose(10, Eigen::Vector2d(0.5, 0.5)).benchmarks, std::vector<int>({0, 1, 2}));
}

TEST(SubsetChooserTest, NothingWhenNoSubsetPays) {
  const SuiteStats s = ThreeBenchmarks();
  const Subset none = SubsetChooser(s, 1e9).Choose(0.1, Eigen::Vector2d(1, 0));
  EXPECT_TRUE(none.benchmarks.empty());
  EXPECT_EQ(none.net, 0);
}

TEST(SubsetChooserTest, RespectsTheTimeBudgetAndTheCostWeight) {
  const SuiteStats s = ThreeBenchmarks();
  const Subset within = SubsetChooser(s, 400).Choose(10, Eigen::Vector2d(0.5, 0.5));
  EXPECT_EQ(within.benchmarks, std::vector<int>({1}));
  // At 100 incident node-hours per validation node-hour only the cheap, sure benchmark pays.
  const Subset dear = SubsetChooser(s, 1e9).Choose(10, Eigen::Vector2d(1, 0), 50);
  EXPECT_EQ(dear.benchmarks, std::vector<int>({0}));
  EXPECT_TRUE(SubsetChooser(s, 1e9).Choose(10, Eigen::Vector2d(1, 0), 100).benchmarks.empty());
}

TEST(SubsetChooserTest, GreedyAboveTheExactLimitStaysNearTheExactAnswer) {
  // 18 benchmarks (greedy) whose best subset is known: each of kinds 0..5 has one sure benchmark.
  SuiteStats s;
  const int kinds = 6, benchmarks = kExactBenchmarks + 2;
  for (int k = 0; k < kinds; ++k) s.kinds.push_back("k" + std::to_string(k));
  s.coverage = Eigen::MatrixXd::Zero(benchmarks, kinds);
  for (int b = 0; b < benchmarks; ++b) {
    s.benchmarks.push_back("b" + std::to_string(b));
    s.seconds.push_back(b < kinds ? 360 : 1800);
    if (b < kinds)
      s.coverage(b, b) = 1;
    else
      s.coverage(b, b % kinds) = 0.5;
  }
  const Subset g = SubsetChooser(s, 1e9).Choose(60, Eigen::VectorXd::Constant(kinds, 1.0 / kinds));
  EXPECT_EQ(g.benchmarks, std::vector<int>({0, 1, 2, 3, 4, 5}));
  EXPECT_NEAR(g.net, 60 - 6 * 0.1, 1e-9);
}

TEST(LearnSuiteTest, CoverageIsTheShareOfFindingsEachBenchmarkShowed) {
  History h;
  h.end_s = 100;
  h.nodes = {{"n1", "H100", 0}};
  const std::vector<BenchmarkRun> both = {{"gemm", 600}, {"burn", 900}};
  h.validations.push_back({0, 10, both, {}, {{"GPU 1", "GPU", "gemm"}, {"GPU 1", "GPU", "burn"}}});
  h.validations.push_back({0, 20, both, {}, {{"GPU 2", "GPU", "gemm"}}});
  h.validations.push_back({0, 30, {{"burn", 1100}}, {}, {}});
  h.incidents.push_back({0, 40, "GPU", 30});
  h.incidents.push_back({0, 50, "software", 10});
  const Result<SuiteStats> s = LearnSuite(h);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->benchmarks, std::vector<std::string>({"gemm", "burn"}));
  EXPECT_EQ(s->seconds[1], 900);  // the median of 900, 900 and 1100
  EXPECT_EQ(s->coverage(0, 0), 1.0);
  EXPECT_EQ(s->coverage(1, 0), 0.5);
  EXPECT_EQ(s->incident_share, std::vector<double>({0.5, 0.5}));
  EXPECT_EQ(s->mean_incident_cost, 20);
}

TEST(LearnSuiteTest, RefusesAHistoryWithoutValidationsOrIncidents) {
  History h;
  h.nodes = {{"n1", "H100", 0}};
  EXPECT_EQ(LearnSuite(h).status().code(), StatusCode::kInvalidArgument);
  h.validations.push_back({0, 10, {{"gemm", 600}}, {}, {}});
  EXPECT_EQ(LearnSuite(h).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace vigil::select
