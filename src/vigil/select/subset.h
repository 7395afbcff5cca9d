// Which benchmarks to run: each benchmark's cost (its measured run time) and its coverage (the
// share of past findings of each component kind it caught), learned from the history, and the
// subset that maximises expected penalty averted minus validation cost within a time budget.
#pragma once

#include <Eigen/Dense>
#include <string>
#include <vector>

#include "vigil/select/history.h"

namespace vigil::select {

struct SuiteStats {
  std::vector<std::string> benchmarks;  // every benchmark the history ran
  std::vector<double> seconds;          // the median of its measured run times
  std::vector<std::string> kinds;       // every component kind of an incident or finding
  // coverage(b, k): of the validations that ran b and found a component of kind k, the share in
  // which b was among the benchmarks that showed it. 0 without such a validation.
  Eigen::MatrixXd coverage;
  std::vector<double> incident_share;  // each kind's share of the incidents (sums to 1)
  double mean_incident_cost = 0;       // node-hours
  int incidents = 0;
};

// Learns the suite's costs and coverage from `history`. InvalidArgument when the history has no
// validation or no incident (nothing to learn a cost or a penalty from).
Result<SuiteStats> LearnSuite(const History& history);

// A chosen subset and its value.
struct Subset {
  std::vector<int> benchmarks;  // indices into SuiteStats::benchmarks, ascending
  double seconds = 0;
  double averted = 0;  // expected penalty averted, node-hours
  double net = 0;      // averted - cost_weight x seconds / 3600
};

// Chooses benchmarks for one node. `penalty` is the node's expected incident penalty over the
// horizon (node-hours); `kind_weights` the probability of each of stats.kinds being what would
// fail. The value of a subset S is penalty * sum_k w_k * (1 - prod_{b in S} (1 - coverage(b, k)))
// - seconds(S) / 3600: the chance that at least one of its benchmarks catches the failure, with
// benchmarks taken as independent. That is not additive over benchmarks, so a knapsack over their
// times is not exact for it: with at most kExactBenchmarks benchmarks every subset within
// `budget_s` is searched (exact); with more, greedy by gain per second, kept only if it beats the
// best single benchmark, which for a monotone submodular value under a budget is within
// (1 - 1/e) / 2 of the optimum (Khuller, Moss and Naor, 1999). The empty subset (net 0) when
// nothing pays.
inline constexpr int kExactBenchmarks = 16;
class SubsetChooser {
 public:
  // REQUIRES: stats outlives this.
  SubsetChooser(const SuiteStats& stats, double budget_s);
  // `cost_weight` prices a validation node-hour in incident node-hours (1: at face value).
  Subset Choose(double penalty, const Eigen::VectorXd& kind_weights, double cost_weight = 1) const;

 private:
  Subset Greedy(double penalty, const Eigen::VectorXd& kind_weights, double cost_weight) const;
  Subset Evaluate(std::vector<int> benchmarks, double penalty, const Eigen::VectorXd& w,
                  double cost_weight) const;

  const SuiteStats& stats_;
  double budget_s_;
  // For the exact search: every subset within the budget (a bit mask), its seconds and its
  // probability of catching each kind.
  std::vector<uint32_t> masks_;
  std::vector<double> mask_seconds_;
  Eigen::MatrixXd mask_catch_;  // masks x kinds
};

}  // namespace vigil::select
