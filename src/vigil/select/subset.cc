#include "vigil/select/subset.h"

#include <algorithm>
#include <cmath>

#include "vigil/core/duration.h"
#include "vigil/core/stats.h"

namespace vigil::select {
namespace {

size_t IndexOf(std::vector<std::string>& names, const std::string& name) {
  auto it = std::find(names.begin(), names.end(), name);
  if (it != names.end()) return static_cast<size_t>(it - names.begin());
  names.push_back(name);
  return names.size() - 1;
}

}  // namespace

Result<SuiteStats> LearnSuite(const History& h) {
  if (h.validations.empty()) {
    return Status::InvalidArgument(
        "the history has no validation: no benchmark's cost or coverage "
        "can be learned from it");
  }
  if (h.incidents.empty()) {
    return Status::InvalidArgument(
        "the history has no incident: no incident penalty can be "
        "learned from it");
  }
  SuiteStats s;
  std::vector<std::vector<double>> times;
  for (const HistoryIncident& i : h.incidents) IndexOf(s.kinds, i.kind);
  for (const HistoryValidation& v : h.validations) {
    for (const BenchmarkRun& b : v.benchmarks) {
      const size_t index = IndexOf(s.benchmarks, b.name);
      if (index == times.size()) times.emplace_back();
      times[index].push_back(b.seconds);
    }
    for (const ValidationFinding& f : v.findings) IndexOf(s.kinds, f.kind);
  }
  for (const std::vector<double>& t : times) s.seconds.push_back(stats::Median(t));
  const auto nb = static_cast<Eigen::Index>(s.benchmarks.size());
  const auto nk = static_cast<Eigen::Index>(s.kinds.size());
  Eigen::MatrixXd present = Eigen::MatrixXd::Zero(nb, nk), caught = present;
  for (const HistoryValidation& v : h.validations) {
    std::vector<std::vector<char>> showed(static_cast<size_t>(nb),
                                          std::vector<char>(static_cast<size_t>(nk), 0));
    std::vector<char> found(static_cast<size_t>(nk), 0);
    for (const ValidationFinding& f : v.findings) {
      const size_t k = IndexOf(s.kinds, f.kind);
      found[k] = 1;
      showed[IndexOf(s.benchmarks, f.benchmark)][k] = 1;
    }
    for (const BenchmarkRun& run : v.benchmarks) {
      const size_t b = IndexOf(s.benchmarks, run.name);
      for (size_t k = 0; k < found.size(); ++k) {
        if (!found[k]) continue;
        present(static_cast<Eigen::Index>(b), static_cast<Eigen::Index>(k)) += 1;
        caught(static_cast<Eigen::Index>(b), static_cast<Eigen::Index>(k)) += showed[b][k];
      }
    }
  }
  s.coverage = (present.array() > 0).select(caught.array() / present.array().max(1), 0);
  s.incident_share.assign(s.kinds.size(), 0);
  for (const HistoryIncident& i : h.incidents) {
    s.incident_share[IndexOf(s.kinds, i.kind)] += 1.0 / static_cast<double>(h.incidents.size());
    s.mean_incident_cost += i.cost_node_hours / static_cast<double>(h.incidents.size());
  }
  s.incidents = static_cast<int>(h.incidents.size());
  return s;
}

SubsetChooser::SubsetChooser(const SuiteStats& stats, double budget_s)
    : stats_(stats), budget_s_(budget_s) {
  const auto nb = static_cast<int>(stats.benchmarks.size());
  if (nb > kExactBenchmarks) return;
  std::vector<Eigen::RowVectorXd> catches;
  for (uint32_t mask = 1; mask < (1u << nb); ++mask) {
    double seconds = 0;
    Eigen::RowVectorXd miss =
        Eigen::RowVectorXd::Ones(static_cast<Eigen::Index>(stats.kinds.size()));
    for (int b = 0; b < nb; ++b) {
      if (!(mask & (1u << b))) continue;
      seconds += stats.seconds[static_cast<size_t>(b)];
      miss = miss.cwiseProduct((1 - stats.coverage.row(b).array()).matrix());
    }
    if (seconds > budget_s) continue;
    masks_.push_back(mask);
    mask_seconds_.push_back(seconds);
    catches.push_back(Eigen::RowVectorXd::Ones(miss.size()) - miss);
  }
  mask_catch_.resize(static_cast<Eigen::Index>(catches.size()),
                     static_cast<Eigen::Index>(stats.kinds.size()));
  for (size_t i = 0; i < catches.size(); ++i)
    mask_catch_.row(static_cast<Eigen::Index>(i)) = catches[i];
}

Subset SubsetChooser::Evaluate(std::vector<int> benchmarks, double penalty,
                               const Eigen::VectorXd& w, double cost_weight) const {
  Subset s;
  Eigen::VectorXd miss = Eigen::VectorXd::Ones(w.size());
  for (int b : benchmarks) {
    s.seconds += stats_.seconds[static_cast<size_t>(b)];
    miss = miss.cwiseProduct((1 - stats_.coverage.row(b).array()).matrix().transpose());
  }
  s.averted = penalty * w.dot(Eigen::VectorXd::Ones(w.size()) - miss);
  s.net = s.averted - cost_weight * s.seconds / kSecondsPerHour;
  std::sort(benchmarks.begin(), benchmarks.end());
  s.benchmarks = std::move(benchmarks);
  return s;
}

Subset SubsetChooser::Choose(double penalty, const Eigen::VectorXd& kind_weights,
                             double cost_weight) const {
  if (static_cast<int>(stats_.benchmarks.size()) > kExactBenchmarks) {
    return Greedy(penalty, kind_weights, cost_weight);
  }
  if (masks_.empty()) return {};
  const Eigen::VectorXd net =
      penalty * (mask_catch_ * kind_weights) -
      Eigen::Map<const Eigen::VectorXd>(mask_seconds_.data(),
                                        static_cast<Eigen::Index>(mask_seconds_.size())) *
          (cost_weight / kSecondsPerHour);
  Eigen::Index best = 0;
  if (net.maxCoeff(&best) <= 0) return {};
  std::vector<int> chosen;
  for (int b = 0; b < static_cast<int>(stats_.benchmarks.size()); ++b) {
    if (masks_[static_cast<size_t>(best)] & (1u << b)) chosen.push_back(b);
  }
  return Evaluate(std::move(chosen), penalty, kind_weights, cost_weight);
}

Subset SubsetChooser::Greedy(double penalty, const Eigen::VectorXd& w, double cost_weight) const {
  const auto nb = static_cast<int>(stats_.benchmarks.size());
  Subset current;
  std::vector<char> used(static_cast<size_t>(nb), 0);
  Subset best_single;
  for (;;) {
    int pick = -1;
    double best_ratio = 0;
    Subset pick_value;
    for (int b = 0; b < nb; ++b) {
      const double seconds = stats_.seconds[static_cast<size_t>(b)];
      if (used[static_cast<size_t>(b)] || current.seconds + seconds > budget_s_) continue;
      std::vector<int> with = current.benchmarks;
      with.push_back(b);
      Subset value = Evaluate(with, penalty, w, cost_weight);
      if (current.benchmarks.empty() && value.net > best_single.net) best_single = value;
      const double ratio = (value.net - current.net) / std::max(seconds, 1.0);
      if (ratio > best_ratio) best_ratio = ratio, pick = b, pick_value = std::move(value);
    }
    if (pick < 0) break;
    used[static_cast<size_t>(pick)] = 1;
    current = std::move(pick_value);
  }
  return best_single.net > current.net ? best_single : current;
}

}  // namespace vigil::select
