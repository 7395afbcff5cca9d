#include "vigil/learned/measures.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <utility>

#include "vigil/core/stats.h"

namespace vigil::learned {
namespace {

using stats::kMadToSigma;
using stats::Mad;

// Node i's values in `cols`, sorted, into `sorted`.
void SortedValues(const Scaled& t, size_t i, const std::vector<size_t>& cols,
                  std::vector<double>& sorted) {
  sorted.clear();
  for (size_t j : cols) {
    if (!std::isnan(t.at(i, j))) sorted.push_back(t.at(i, j));
  }
  std::sort(sorted.begin(), sorted.end());
}

// A component's metrics within one pool, pooled, where it has more than kFewMetrics: the larger of
// two means of their sigmas, each robust to one metric's wild value (heavy-tailed noise).
// - The held mean: each sigma held within kComponentHold of their median (one step of Huber's
//   estimate of location), then all averaged. Every metric a slow part moves counts, where most
//   of them move: a disk 8% slow moves its two IOPS (3% noise) by 2.7 sigmas and its six latency
//   percentiles (5%) by 1.6, and the held mean reads 1.9. Held about the median, not about 0, so
//   that a part whose metrics move together (an offset its GEMM types share) is not capped.
// - The quarter-trimmed mean: a quarter set aside at each end. Where a defect moves fewer than
//   half of the metrics (a GPU slow at its three non-tensor-core GEMM types of nine; a NIC slow at
//   the largest 8 of 23 message sizes) the median, and with it the held mean, stays among the
//   metrics that did not move, while the trimmed mean keeps those of the moved ones beyond the
//   quarter and grows with the defect.
// The larger of the two rises with each metric (both do), and its limit is learned from the
// fleet's own values of it, as each test's is.
constexpr double kComponentHold = 2;
constexpr double kComponentTrim = 0.25;

}  // namespace

ComponentDistance PooledSigmas(std::vector<double>& zs) {
  std::sort(zs.begin(), zs.end());
  const size_t n = zs.size();
  const auto mean_of = [&](size_t top) {
    double sum = 0;
    for (size_t k = 0; k + top < n; ++k) sum += zs[k];
    return sum / static_cast<double>(n - top);
  };
  ComponentDistance d;
  if (n > kFewMetrics) {
    const double median = (zs[(n - 1) / 2] + zs[n / 2]) / 2;
    double held = 0;
    for (double z : zs) held += std::clamp(z, median - kComponentHold, median + kComponentHold);
    held /= static_cast<double>(n);
    const auto cut = static_cast<size_t>(std::floor(static_cast<double>(n) * kComponentTrim));
    double trimmed = 0;
    for (size_t k = cut; k + cut < n; ++k) trimmed += zs[k];
    trimmed /= static_cast<double>(n - 2 * cut);
    d.mean = d.but_worst = std::max(held, trimmed);
  } else {
    d.mean = mean_of(0);
    d.but_worst = mean_of(1);
  }
  d.worst = zs.back();
  d.metrics = n;
  return d;
}

double WorseSigmas(Direction d, double v, double centre, double spread) {
  switch (d) {
    case Direction::kHigher:
      return (centre - v) / spread;
    case Direction::kLower:
      return (v - centre) / spread;
    case Direction::kEither:
      return std::fabs(v - centre) / spread;
    case Direction::kZero:
    case Direction::kClear:
      return v != 0 ? kInf : 0;
    case Direction::kInfo:
      return 0;
  }
  return 0;
}

Columns::Columns(const std::vector<std::string>& metrics) {
  std::unordered_map<std::string, int> ids;
  for (size_t j = 0; j < metrics.size(); ++j) {
    anatomy.push_back(Anatomize(metrics[j]));
    const MetricAnatomy& a = anatomy.back();
    auto [it, added] = ids.try_emplace(a.family, static_cast<int>(families.size()));
    if (added) {
      families.push_back(a.family);
      family_cols.emplace_back();
    }
    family_of.push_back(it->second);
    family_cols[static_cast<size_t>(it->second)].push_back(j);
    if (IsLearned(a.direction)) benchmark_cols[BenchmarkOfKey(a.family)].push_back(j);
  }
  std::map<std::string, Pool> parts;
  for (const auto& [benchmark, bcols] : benchmark_cols) {
    pools.push_back(Pool{benchmark, "", {benchmark}, {}});
    for (size_t j : bcols) {
      pools.back().cols.push_back(j);
      const std::string& component = anatomy[j].component;
      const size_t space = component.find(' ');
      if (space == std::string::npos) continue;
      Pool& part = parts[component.substr(0, space)];
      if (part.benchmarks.empty() || part.benchmarks.back() != benchmark) {
        part.benchmarks.push_back(benchmark);
      }
      part.cols.push_back(j);
    }
  }
  for (auto& [name, part] : parts) {
    if (part.benchmarks.size() < 2) continue;  // the benchmark's own pool is the same
    part.part = name;
    part.benchmark = fmt::format("{}", fmt::join(part.benchmarks, "+"));
    pools.push_back(std::move(part));
  }
}

double OthersMedian(const BalanceMiddle& m, double v) {
  if (m.n == 0) return std::nan("");
  if (m.n % 2 == 0) return v <= m.lo ? m.hi : m.lo;  // v below the middle: the upper one is left
  if (v < m.mid) return (m.mid + m.hi) / 2;
  if (v > m.mid) return (m.lo + m.mid) / 2;
  return (m.lo + m.hi) / 2;
}

double BalanceRatio(const BalanceMiddle& m, double v) {
  const double median = OthersMedian(m, v);
  return median != 0 ? v / median - 1 : std::nan("");  // NaN stays NaN
}

NodeCentres NodeCentresOf(const Scaled& t, size_t i, const Columns& c,
                          std::vector<double>& scratch) {
  NodeCentres m{std::vector<BalanceMiddle>(c.families.size()),
                std::vector<double>(c.families.size(), std::nan(""))};
  for (size_t f = 0; f < c.families.size(); ++f) {
    const std::vector<size_t>& cols = c.family_cols[f];
    if (!IsLearned(c.anatomy[cols[0]].direction)) continue;
    SortedValues(t, i, cols, scratch);
    const size_t n = scratch.size();
    if (n == 0) continue;
    m.level[f] = scratch[(n - 1) / 2] + (scratch[n / 2] - scratch[(n - 1) / 2]) / 2;
    if (n < kMinBalanceParts) continue;
    BalanceMiddle& b = m.balance[f];
    b.n = n;
    b.lo = scratch[(n - 1) / 2 - (n % 2)];
    b.mid = scratch[(n - 1) / 2];
    b.hi = scratch[n / 2 + (n % 2)];
  }
  return m;
}

double BalanceSigmas(double v, const FamilyModel& f, const NodeCentres& m, size_t fid) {
  if (!f.balanced) return std::nan("");
  const double ratio = BalanceRatio(m.balance[fid], v);
  return std::isnan(ratio) ? ratio
                           : WorseSigmas(f.direction, ratio, f.balance_centre, f.balance_spread);
}

double ComponentSigmas(const Scaled& t, size_t i, size_t j, const FamilyModel& f,
                       const NodeCentres& m, size_t fid, double* limit) {
  const double v = t.at(i, j);
  const double balance = BalanceSigmas(v, f, m, fid);
  const bool balanced = !std::isnan(balance);
  if (limit != nullptr) *limit = balanced ? f.balance_limit : f.limit;
  if (balanced) return balance;
  const Mode& mode = NearestMode(f, m.level[fid]);
  return WorseSigmas(f.direction, v, mode.centre, mode.spread);
}

std::map<std::string_view, ComponentDistance> ComponentDistances(
    const Scaled& t, size_t i, const std::vector<size_t>& cols, const Columns& c,
    const std::vector<const FamilyModel*>& models, const NodeCentres& m, double noise) {
  struct Metrics {
    std::vector<double> zs;
    std::string_view index;
    double worst = -kInf, worst_limit = kInf;  // the largest of zs, and its single test's limit
  };
  std::map<std::string_view, Metrics> sigmas;
  for (size_t j : cols) {
    const auto f = static_cast<size_t>(c.family_of[j]);
    if (std::isnan(t.at(i, j)) || models[f] == nullptr) continue;
    Metrics& g = sigmas[c.anatomy[j].component];
    double limit = kInf;
    const double z = ComponentSigmas(t, i, j, *models[f], m, f, &limit) / noise;
    g.zs.push_back(z);
    g.index = c.anatomy[j].index;
    if (z > g.worst) {
      g.worst = z;
      g.worst_limit = limit;
    }
  }
  std::map<std::string_view, ComponentDistance> d;
  for (auto& [component, g] : sigmas) {
    if (g.zs.size() < 2) continue;
    ComponentDistance& cd = d[component] = PooledSigmas(g.zs);
    cd.index = g.index;
    cd.worst_limit = g.worst_limit;
  }
  return d;
}

std::set<std::string> DownBenchmarks(const FleetTable& t, size_t i, const Columns& c,
                                     const ClassModel& cm) {
  std::set<std::string> down;
  for (const FamilyModel& f : cm.families) {
    if (f.direction != Direction::kZero) continue;
    const long j = t.column(f.family);
    if (j < 0 || std::isnan(t.at(i, static_cast<size_t>(j))) ||
        t.at(i, static_cast<size_t>(j)) != 0) {
      down.insert(BenchmarkOfKey(f.family));
    }
  }
  for (const auto& [benchmark, bcols] : c.benchmark_cols) {
    if (!down.contains(benchmark)) continue;
    const bool partial =
        std::any_of(bcols.begin(), bcols.end(), [&](size_t j) { return !std::isnan(t.at(i, j)); });
    if (partial) down.erase(benchmark);
  }
  return down;
}

bool AnyDown(const Pool& pool, const std::set<std::string>& down) {
  return std::any_of(pool.benchmarks.begin(), pool.benchmarks.end(),
                     [&](const std::string& b) { return down.contains(b); });
}

// Family models by family id, for one class (null where the class learned none).
std::vector<const FamilyModel*> ModelsById(const Columns& c, const ClassModel& cm) {
  std::unordered_map<std::string_view, const FamilyModel*> by_name;
  for (const FamilyModel& f : cm.families) by_name[f.family] = &f;
  std::vector<const FamilyModel*> out(c.families.size(), nullptr);
  for (size_t f = 0; f < c.families.size(); ++f) {
    auto it = by_name.find(c.families[f]);
    if (it != by_name.end()) out[f] = it->second;
  }
  return out;
}

// The node's own noise: the robust spread of its balance deviations, pooled over all its
// families, in their spreads; at least 1. A node that is noisy everywhere (healthy, but jittery)
// gets its limits widened by that factor; one bad component among many does not move it.
double NodeNoise(const Scaled& t, size_t i, const Columns& cols,
                 const std::vector<const FamilyModel*>& models, const NodeCentres& centres) {
  std::vector<double> own;
  for (size_t f = 0; f < cols.families.size(); ++f) {
    const FamilyModel* m = models[f];
    if (m == nullptr || !m->balanced || centres.balance[f].n == 0) continue;
    for (size_t j : cols.family_cols[f]) {
      const double ratio = BalanceRatio(centres.balance[f], t.at(i, j));
      if (!std::isnan(ratio)) own.push_back((ratio - m->balance_centre) / m->balance_spread);
    }
  }
  return own.size() >= kMinNoiseSamples ? std::max(1.0, Mad(own) * kMadToSigma) : 1.0;
}

}  // namespace vigil::learned
