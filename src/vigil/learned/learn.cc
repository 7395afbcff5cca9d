#include "vigil/learned/learn.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

#include "vigil/core/bounds.h"
#include "vigil/core/parallel.h"
#include "vigil/core/stats.h"
#include "vigil/core/text.h"
#include "vigil/learned/health.h"

namespace vigil::learned {
namespace {

using stats::kMadToSigma;
using stats::Mad;
using stats::Median;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr size_t kMinNoiseSamples = 16;  // values needed to estimate one node's own noise
constexpr size_t kMinTailSamples = 100;  // values needed to read the shape of a tail
constexpr int kMaxDecimals = 9;          // more than this: a value is not printed rounded
constexpr size_t kMaxModes = 4;          // of one family within one class
constexpr size_t kManyParts = 4;         // components a node has of a family measured per part
// A family judged by the balance inside the node has at least this many parts: the median of
// fewer moves with the value judged (of four, it is the mean of the middle two, whose ratios to it
// are then plus and minus half their gap, the extremes' larger: a mixture whose tail a robust
// spread underestimates; on eval/fleetgen's four disks a node's balance found fewer slow disks
// than the fleet alone).
constexpr size_t kMinBalanceParts = 5;
constexpr double kMaxLimit = 1e100;  // robust sigmas: no limit at all, as a tiny budget asks
// Two modes are told apart when their medians lie this many of the wider one's robust sigmas
// apart (docs/validate.md).
constexpr double kModeSeparation = 5;
constexpr size_t kNodesPerThread = 64;  // below that a second thread does not pay

// How far beyond the centre a value lies in the worse direction, in spreads.
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

struct Robust {
  double centre = 0, spread = 0;
};

Robust RobustOf(std::vector<double>& xs, double floor) {
  Robust r;
  if (xs.empty()) return r;
  r.centre = Median(xs);
  r.spread = std::max(Mad(xs) * kMadToSigma, floor);
  if (!(r.spread > 0)) r.spread = std::numeric_limits<double>::min();
  return r;
}

// The decimal places `v` is written with, kMaxDecimals + 1 when more.
int DecimalsOf(double v) {
  double scale = 1;
  for (int d = 0; d <= kMaxDecimals; ++d, scale *= 10) {
    const double s = v * scale;
    if (std::fabs(s - std::round(s)) <= 1e-9 * std::max(1.0, std::fabs(s))) return d;
  }
  return kMaxDecimals + 1;
}

// The step in which a family's values are printed (SuperBench rounds bandwidths to 2 decimals):
// 10^-d for the most decimals any of them has, when 99% of them have at most kMaxDecimals (0.1
// and 0.09 are both printed to 2 decimals); 0 when they are not rounded. Whole numbers that 99%
// of the values share are a state (a PCIe link's generation or width), not a measurement rounded:
// no step either, since one step away from it means something.
double QuantumOf(const std::vector<double>& xs) {
  if (xs.empty()) return 0;
  size_t rounded = 0;
  int most = 0;
  for (double v : xs) {
    const int d = DecimalsOf(v);
    if (d > kMaxDecimals) continue;
    ++rounded;
    most = std::max(most, d);
  }
  if (static_cast<double>(rounded) < 0.99 * static_cast<double>(xs.size())) return 0;
  if (most == 0) {
    const auto same = std::count(xs.begin(), xs.end(), Median(xs));
    if (static_cast<double>(same) >= 0.99 * static_cast<double>(xs.size())) return 0;
  }
  return std::pow(10.0, -most);
}

// Where the tail of `z` (sorted) goes beyond probability `p`, extrapolated from its quantiles at
// levels `a` < `b` by the Student t whose quantiles there stand in the same ratio (a normal at the
// light end, Cauchy at the heavy one), anchored at the quantile at `a`. NaN when they do not rise.
double Extrapolated(const std::vector<double>& z, double a, double b, double p) {
  namespace bm = boost::math;
  const double qa = stats::Quantile(z, a), qb = stats::Quantile(z, b);
  if (!(qa > 0) || !(qb > qa)) return std::nan("");
  const auto ratio = [&](double nu) {
    const bm::students_t t(nu);
    return bm::quantile(t, b) / bm::quantile(t, a);
  };
  constexpr double kMaxNu = 1000, kMinNu = 1;  // about normal; Cauchy
  const double r = qb / qa;
  if (r <= ratio(kMaxNu)) {
    const bm::normal n;
    return qa * bm::quantile(bm::complement(n, p)) / bm::quantile(n, a);
  }
  double lo = kMinNu, hi = kMaxNu;  // the ratio falls as nu grows: bisect on log nu
  if (r < ratio(kMinNu)) {          // heavier than Cauchy: Cauchy
    for (int it = 0; it < 30; ++it) {
      const double mid = std::sqrt(lo * hi);
      (ratio(mid) > r ? lo : hi) = mid;
    }
  }
  const bm::students_t t(lo);
  return qa * bm::quantile(bm::complement(t, p)) / bm::quantile(t, a);
}

// How far out TailLimit reads a tail: the farther, the more a rare wild value of healthy parts
// shows, and the more the values of defective parts do too.
enum class Tail {
  kBody,      // 90% and 97.5%
  kFar,       // also 97.5% and 99.5%: a mixture of noise levels
  kFarthest,  // also 99.5% and 99.9%: rare wild measurements under a body of part offsets
};

// Values beyond the 99.9% quantile that a family needs before its tail is read there.
constexpr double kFarthestTail = 10;

// The number of robust sigmas a healthy value exceeds with probability `p` (one-sided), read from
// the fleet's own values `z` (robust sigmas from their centre, worse direction positive): the
// largest of the extrapolations (Extrapolated) that `tail` asks for and the values support, one
// from the body of the tail (90% and 97.5%), one from further out (97.5% and 99.5%) where a
// mixture of noise levels shows, one from further still (99.5% and 99.9%, with kFarthestTail
// values beyond) where rare wild values under a body of part-to-part offsets show; never below the
// Student t's of one degree of freedom fewer than the class has `nodes` (the spread itself is
// estimated from them: a prediction interval). The far ones only where defects are too rare to
// reach them (a family measured on every GPU or NIC, where a defective part is one value of many:
// at a defect rate of more than a thousandth of the parts the farthest one reads the defects and
// widens the limit); a fleet too small or too rounded to show its tail gets the floor.
double TailLimit(std::vector<double>& z, double p, Tail tail, size_t nodes) {
  namespace bm = boost::math;
  double limit = bm::quantile(
      bm::complement(bm::students_t(static_cast<double>(std::max<size_t>(nodes, 2) - 1)), p));
  if (z.size() < kMinTailSamples) return limit;
  std::sort(z.begin(), z.end());
  const auto raise = [&](double a, double b) {
    const double e = Extrapolated(z, a, b, p);
    if (e > limit) limit = e;  // NaN: no tail to read
  };
  const auto beyond = [&](double q) { return static_cast<double>(z.size()) * (1 - q); };
  raise(0.9, 0.975);
  if (tail != Tail::kBody && beyond(0.995) >= 2) raise(0.975, 0.995);
  if (tail == Tail::kFarthest && beyond(0.999) >= kFarthestTail) raise(0.995, 0.999);
  return std::min(limit, kMaxLimit);
}

// Splits node values, sorted, into modes, as [begin, end) ranges in `out`: at the cut that leaves
// `min_count` on each side and separates them best (Otsu's: the largest variance between the two
// sides), when the sides' medians lie kModeSeparation or more of the wider side's robust sigmas
// apart; and again within each side, up to kMaxModes. One mode of any shape scores about 2 to 3.
void SplitModes(const std::vector<double>& sorted, size_t begin, size_t end, size_t min_count,
                double floor, std::vector<std::pair<size_t, size_t>>& out) {
  const auto keep = [&] { out.emplace_back(begin, end); };
  if (end - begin < 2 * min_count || out.size() + 1 >= kMaxModes) return keep();
  const double n = static_cast<double>(end - begin);
  double total = 0;
  for (size_t k = begin; k < end; ++k) total += sorted[k] - sorted[begin];
  double left_sum = 0, best = -1;
  size_t cut = 0;
  for (size_t k = begin; k + min_count < end; ++k) {
    left_sum += sorted[k] - sorted[begin];
    const size_t c = k + 1;  // the cut after k
    if (c - begin < min_count) continue;
    const double nl = static_cast<double>(c - begin), nr = n - nl;
    const double gap = (total - left_sum) / nr - left_sum / nl;
    const double between = nl * nr * gap * gap;
    if (between > best) {
      best = between;
      cut = c;
    }
  }
  const std::span<const double> left(sorted.data() + begin, cut - begin);
  const std::span<const double> right(sorted.data() + cut, end - cut);
  const double sigma = std::max({Mad(left) * kMadToSigma, Mad(right) * kMadToSigma, floor});
  if (Median(right) - Median(left) < kModeSeparation * sigma) return keep();
  SplitModes(sorted, begin, cut, min_count, floor, out);
  SplitModes(sorted, cut, end, min_count, floor, out);
}

// The metrics whose evidence is pooled per component (ComponentDistances): those of one benchmark
// (`part` empty), or those of one kind of part (HBM, PCIe...) that two or more benchmarks measure.
struct Pool {
  std::string benchmark;                // the benchmark's name, or the part's benchmarks joined
  std::string part;                     // "HBM", "PCIe", "GPU"...; "" for a benchmark's pool
  std::vector<std::string> benchmarks;  // those it pools, sorted
  std::vector<size_t> cols;
};

// The table's columns, parsed once and grouped: by family (one population) and by benchmark
// (the metrics the fleet's distribution judges only), with small integer ids so that the per-node
// loops do no string work.
struct Columns {
  std::vector<MetricAnatomy> anatomy;
  std::vector<int> family_of;                    // column -> family id
  std::vector<std::string> families;             // family id -> name
  std::vector<std::vector<size_t>> family_cols;  // family id -> columns
  std::map<std::string, std::vector<size_t>> benchmark_cols;
  std::vector<Pool> pools;  // each benchmark's, then each part's across benchmarks

  explicit Columns(const std::vector<std::string>& metrics) {
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
};

// One class's view of the table: each value divided by its member's factor (FamilyModel::factors),
// so that the parts of a family that differ by design (a pair of GPUs on one NVLink bridge, a GPU
// whose host link is slower) are one population. `divisor` is by column, 1 where none applies.
struct Scaled {
  const FleetTable& t;
  const std::vector<double>& divisor;
  double at(size_t i, size_t j) const { return t.at(i, j) / divisor[j]; }
};

// The median of node i's values in `cols`; NaN with fewer than `least`.
double NodeMedian(const Scaled& t, size_t i, const std::vector<size_t>& cols, size_t least,
                  std::vector<double>& scratch) {
  scratch.clear();
  for (size_t j : cols) {
    if (!std::isnan(t.at(i, j))) scratch.push_back(t.at(i, j));
  }
  return scratch.size() < least || scratch.empty() ? std::nan("") : Median(scratch);
}

// Node i's medians of the families the fleet's distribution judges, by family id (NaN elsewhere):
// `balance`, the reference of the balance inside the node, where the node has kMinBalanceParts or
// more of the family's values; `level`, which picks the family's mode, where it has one or more.
struct NodeCentres {
  std::vector<double> balance, level;
};

NodeCentres NodeCentresOf(const Scaled& t, size_t i, const Columns& c,
                          std::vector<double>& scratch) {
  NodeCentres m{std::vector<double>(c.families.size(), std::nan("")),
                std::vector<double>(c.families.size(), std::nan(""))};
  for (size_t f = 0; f < c.families.size(); ++f) {
    const std::vector<size_t>& cols = c.family_cols[f];
    if (!IsLearned(c.anatomy[cols[0]].direction)) continue;
    m.level[f] = NodeMedian(t, i, cols, 1, scratch);
    if (cols.size() >= kMinBalanceParts) {
      m.balance[f] = NodeMedian(t, i, cols, kMinBalanceParts, scratch);
    }
  }
  return m;
}

// How far node i's value in column j lies beyond healthy, in robust sigmas: from the node's
// balance where the family has one (it leaves the node's own offset out), else from the mode of
// the fleet that the node's level picks.
double ComponentSigmas(const Scaled& t, size_t i, size_t j, const FamilyModel& f,
                       const NodeCentres& m, size_t fid) {
  const double v = t.at(i, j);
  const double median = m.balance[fid];
  if (f.balanced && !std::isnan(median) && median != 0) {
    return WorseSigmas(f.direction, v / median - 1, f.balance_centre, f.balance_spread);
  }
  const Mode& mode = NearestMode(f, m.level[fid]);
  return WorseSigmas(f.direction, v, mode.centre, mode.spread);
}

// A component's metrics within one pool, pooled: the mean of their sigmas after a quarter of them
// is set aside at each end, so that one metric's noise does not move it, while a component that
// is slow on half of a sweep (a NIC slow at large messages only) still does.
constexpr double kComponentTrim = 0.25;

// The pooled sigmas of one component (sorted here), both ways of ComponentDistance: the trimmed
// mean, and the same with at least the worst metric set aside (a quarter of two or three metrics
// is none).
std::pair<double, double> PooledSigmas(std::vector<double>& zs) {
  std::sort(zs.begin(), zs.end());
  const size_t n = zs.size();
  const auto cut = static_cast<size_t>(std::floor(static_cast<double>(n) * kComponentTrim));
  const auto mean_of = [&](size_t top) {
    double sum = 0;
    for (size_t k = cut; k + top < n; ++k) sum += zs[k];
    return sum / static_cast<double>(n - cut - top);
  };
  return {mean_of(cut), mean_of(std::max<size_t>(cut, 1))};
}

// A component with at most this many metrics in a pool is also judged without its worst one
// (ComponentDistance::but_worst).
constexpr size_t kFewMetrics = 3;

// One component's pooled distance within one pool, two ways, each judged against a limit of its
// own. `mean`: PooledSigmas. `but_worst`: the same with the worst metric set aside, which differs
// from it for a component of two or three metrics only (HBM's device copy and self copy; a kernel
// launch's event and wall time): there one metric's wild value (heavy-tailed noise) moves the
// mean as far as a slow component does, and the mean's limit must then lie far out. Where the
// noise is near normal the mean finds more, where it is heavy-tailed the other: it needs both
// metrics to agree.
struct ComponentDistance {
  double mean = 0, but_worst = 0;
  size_t metrics = 0;
  std::string_view index;  // the index its keys carry
};

// For each component of node i with two or more metrics in `cols` (one pool), by the component's
// name (mem-bw measures PCIe 3 and HBM 3 apart, though both carry index 3): how far it lies beyond
// healthy, pooled over its metrics. Over a sweep this is the distance of the component's curve
// from the fleet's.
std::map<std::string_view, ComponentDistance> ComponentDistances(
    const Scaled& t, size_t i, const std::vector<size_t>& cols, const Columns& c,
    const std::vector<const FamilyModel*>& models, const NodeCentres& m) {
  std::map<std::string_view, std::pair<std::vector<double>, std::string_view>> sigmas;
  for (size_t j : cols) {
    const auto f = static_cast<size_t>(c.family_of[j]);
    if (std::isnan(t.at(i, j)) || models[f] == nullptr) continue;
    auto& [zs, index] = sigmas[c.anatomy[j].component];
    zs.push_back(ComponentSigmas(t, i, j, *models[f], m, f));
    index = c.anatomy[j].index;
  }
  std::map<std::string_view, ComponentDistance> d;
  for (auto& [component, group] : sigmas) {
    std::vector<double>& zs = group.first;
    if (zs.size() < 2) continue;
    const auto [mean, but_worst] = PooledSigmas(zs);
    d[component] = {mean, but_worst, zs.size(), group.second};
  }
  return d;
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
    const double median = centres.balance[f];
    if (m == nullptr || !m->balanced || std::isnan(median) || median == 0) continue;
    for (size_t j : cols.family_cols[f]) {
      const double v = t.at(i, j);
      if (!std::isnan(v)) own.push_back((v / median - 1 - m->balance_centre) / m->balance_spread);
    }
  }
  return own.size() >= kMinNoiseSamples ? std::max(1.0, Mad(own) * kMadToSigma) : 1.0;
}

Severity SeverityOf(double deviation) {
  const double a = std::fabs(deviation);
  if (a >= 0.5) return Severity::kCritical;
  if (a >= 0.1) return Severity::kMajor;
  return Severity::kMinor;
}

}  // namespace

namespace {

// The factors of a family's members (FamilyModel::factors), columns `member_cols`: each member's
// median ratio to its node's level over the class's `nodes` (a row and column of Tukey's median
// polish), normalised to a median of 1. Empty, so that the values are read as they are, when
// every factor lies within `resolution` of 1 (the parts are one population), when there are fewer
// than two members, or when a level is not positive (a ratio would mean nothing).
std::vector<double> MemberFactors(const Scaled& t, const std::vector<size_t>& nodes,
                                  const std::vector<size_t>& member_cols,
                                  const std::vector<NodeCentres>& centres, size_t fid,
                                  double resolution) {
  if (member_cols.size() < 2) return {};
  std::vector<double> factors, ratios;
  for (size_t j : member_cols) {
    ratios.clear();
    for (size_t k = 0; k < nodes.size(); ++k) {
      const double level = centres[k].level[fid], x = t.at(nodes[k], j);
      if (std::isnan(level) || std::isnan(x)) continue;
      if (!(level > 0)) return {};
      ratios.push_back(x / level);
    }
    if (ratios.empty()) return {};
    factors.push_back(Median(ratios));
  }
  const double middle = Median(factors);
  if (!(middle > 0)) return {};
  bool differ = false;
  for (double& f : factors) {
    f /= middle;
    differ = differ || !(std::fabs(f - 1) <= resolution);
  }
  return differ ? factors : std::vector<double>{};
}

// The modes of family `fid` over the class's `nodes` (their centres by position), into f.modes:
// split by the nodes' levels (SplitModes) when the family is judged by the fleet's distribution,
// else one. `xs` holds all the class's values of the family; it is reused as scratch.
void LearnModes(const Scaled& t, const std::vector<size_t>& nodes, const std::vector<size_t>& fcols,
                const std::vector<NodeCentres>& centres, size_t fid, size_t min_count,
                double resolution, FamilyModel& f, std::vector<double>& xs) {
  const auto floor = [&](double centre) {
    return std::max(resolution * std::fabs(centre), f.quantum);
  };
  const auto floored = [&](std::vector<double>& values) {
    const Robust r = RobustOf(values, 0);
    return Robust{r.centre, std::max(r.spread, floor(r.centre))};
  };
  if (!IsLearned(f.direction)) {
    const Robust r = floored(xs);
    f.modes.push_back(Mode{r.centre, r.spread, r.centre, r.spread, nodes.size()});
    return;
  }
  std::vector<std::pair<double, size_t>> levels;  // (level, position in nodes)
  for (size_t k = 0; k < nodes.size(); ++k) {
    if (!std::isnan(centres[k].level[fid])) levels.emplace_back(centres[k].level[fid], k);
  }
  std::sort(levels.begin(), levels.end());
  std::vector<double> sorted;
  for (const auto& l : levels) sorted.push_back(l.first);
  std::vector<std::pair<size_t, size_t>> ranges;
  SplitModes(sorted, 0, sorted.size(), min_count, floor(Median(sorted)), ranges);
  for (const auto& [begin, end] : ranges) {
    std::vector<double> node_levels(sorted.begin() + static_cast<long>(begin),
                                    sorted.begin() + static_cast<long>(end));
    const Robust by_node = floored(node_levels);
    xs.clear();
    for (size_t l = begin; l < end; ++l) {
      for (size_t j : fcols) {
        const double v = t.at(nodes[levels[l].second], j);
        if (!std::isnan(v)) xs.push_back(v);
      }
    }
    const Robust by_value = floored(xs);
    f.modes.push_back(
        Mode{by_value.centre, by_value.spread, by_node.centre, by_node.spread, end - begin});
  }
}

}  // namespace

std::vector<std::pair<std::string, std::vector<size_t>>> NodesByHardware(const FleetTable& t) {
  std::vector<std::pair<std::string, std::vector<size_t>>> out;
  std::map<std::string, size_t> at;
  for (size_t i = 0; i < t.node_count(); ++i) {
    auto [it, added] = at.try_emplace(t.hardware(i), out.size());
    if (added) out.push_back({t.hardware(i), {}});
    out[it->second].second.push_back(i);
  }
  return out;
}

Result<LearnedCriteria> Learn(const FleetTable& t, const LearnOptions& o,
                              std::vector<LeftOutClass>* left_out) {
  const size_t left_before = left_out != nullptr ? left_out->size() : 0;
  LearnedCriteria out;
  out.budget = o.budget;
  out.resolution = o.resolution;
  const Columns cols(t.metrics());
  std::vector<double> xs, scratch;
  for (const auto& [hardware, nodes] : NodesByHardware(t)) {
    if (nodes.size() < o.min_nodes) {
      std::string reason = fmt::format("{} node{}, fewer than the {} needed to learn from",
                                       nodes.size(), nodes.size() == 1 ? "" : "s", o.min_nodes);
      if (left_out == nullptr) {
        return Status::InvalidArgument(
            fmt::format("hardware class {} has {}", Quote(hardware), reason));
      }
      LeftOutClass& l = left_out->emplace_back();
      l.hardware = hardware;
      for (size_t i : nodes) l.nodes.push_back(t.node(i));
      l.reason = std::move(reason);
      continue;
    }
    ClassModel cm;
    cm.hardware = hardware;
    cm.nodes = nodes.size();
    // Each family's members (the columns that nearly every node reports) and, where its parts
    // differ by design, their factors, read from the raw values; every value is then read divided
    // by its member's factor, and the nodes' centres taken again.
    std::vector<double> divisor(cols.anatomy.size(), 1.0);
    const Scaled v{t, divisor};
    std::vector<NodeCentres> centres;  // by position in `nodes`
    for (size_t i : nodes) centres.push_back(NodeCentresOf(v, i, cols, scratch));
    std::vector<std::vector<size_t>> members(cols.families.size());  // columns, by family id
    std::vector<std::vector<double>> factors(cols.families.size());
    bool scaled = false;
    for (size_t fid = 0; fid < cols.families.size(); ++fid) {
      for (size_t j : cols.family_cols[fid]) {
        size_t present = 0;
        for (size_t i : nodes) present += !std::isnan(t.at(i, j));
        if (static_cast<double>(present) >= kExpectedShare * static_cast<double>(nodes.size())) {
          members[fid].push_back(j);
        }
      }
      if (!IsLearned(cols.anatomy[cols.family_cols[fid][0]].direction)) continue;
      factors[fid] = MemberFactors(v, nodes, members[fid], centres, fid, o.resolution);
      for (size_t m = 0; m < factors[fid].size(); ++m) divisor[members[fid][m]] = factors[fid][m];
      scaled = scaled || !factors[fid].empty();
    }
    if (scaled) {
      for (size_t k = 0; k < nodes.size(); ++k)
        centres[k] = NodeCentresOf(v, nodes[k], cols, scratch);
    }
    const size_t min_count = std::max(
        o.min_nodes,
        static_cast<size_t>(std::ceil(o.min_mode_share * static_cast<double>(nodes.size()))));
    std::vector<size_t> family_ids;  // of cm.families, in order
    for (size_t fid = 0; fid < cols.families.size(); ++fid) {
      const std::vector<size_t>& fcols = cols.family_cols[fid];
      FamilyModel f;
      f.family = cols.families[fid];
      f.direction = cols.anatomy[fcols[0]].direction;
      if (f.direction == Direction::kInfo) continue;  // never judged: nothing to learn
      xs.clear();
      for (size_t j : fcols) {
        for (size_t i : nodes) {
          if (!std::isnan(t.at(i, j))) xs.push_back(t.at(i, j));
        }
      }
      if (xs.empty()) continue;  // this class never reports it
      for (size_t j : members[fid]) f.members.push_back(t.metrics()[j]);
      f.factors = factors[fid];
      f.samples = xs.size();
      f.quantum = QuantumOf(xs);  // of the values as printed
      LearnModes(v, nodes, fcols, centres, fid, min_count, o.resolution, f, xs);
      if (fcols.size() >= kMinBalanceParts && IsLearned(f.direction)) {
        xs.clear();
        for (size_t k = 0; k < nodes.size(); ++k) {
          const double m = centres[k].balance[fid];
          if (std::isnan(m) || m == 0) continue;
          for (size_t j : fcols) {
            if (!std::isnan(v.at(nodes[k], j))) xs.push_back(v.at(nodes[k], j) / m - 1);
          }
        }
        if (!xs.empty()) {
          const double centre = std::fabs(f.modes.front().centre);
          const Robust b =
              RobustOf(xs, std::max(o.resolution, centre > 0 ? f.quantum / centre : 0.0));
          f.balanced = true;
          f.balance_centre = b.centre;
          f.balance_spread = b.spread;
        }
      }
      cm.families.push_back(std::move(f));
      family_ids.push_back(fid);
    }
    // The limits: each test's share of the budget of false findings per healthy node, read from
    // the tail of the fleet's own values. Half the budget goes to the tests of single values,
    // two (fleet and balance) per value a node reports, half to the components' pooled tests,
    // which find the defects of a few percent (below).
    double tests = 0;
    for (const FamilyModel& f : cm.families) {
      if (IsLearned(f.direction)) tests += 2 * static_cast<double>(f.members.size());
    }
    const double p = o.budget / 2 / std::max(1.0, tests);
    // Each node's own noise divides its deviations here as it will when the node is judged, so
    // that the tails below are those of the tests as they are made.
    // (cm.families is complete: the models' addresses stay; only their limits are set below.)
    const std::vector<const FamilyModel*> models = ModelsById(cols, cm);
    std::vector<double> noise;
    for (size_t k = 0; k < nodes.size(); ++k) {
      noise.push_back(NodeNoise(v, nodes[k], cols, models, centres[k]));
    }
    for (size_t m = 0; m < cm.families.size(); ++m) {
      FamilyModel& f = cm.families[m];
      if (!IsLearned(f.direction)) continue;
      const size_t fid = family_ids[m];
      std::vector<double> fleet, balance;
      for (size_t k = 0; k < nodes.size(); ++k) {
        const NodeCentres& c = centres[k];
        const Mode& mode = NearestMode(f, c.level[fid]);
        for (size_t j : cols.family_cols[fid]) {
          const double x = v.at(nodes[k], j);
          if (std::isnan(x)) continue;
          fleet.push_back(WorseSigmas(f.direction, x, mode.centre, mode.spread) / noise[k]);
          if (f.balanced && !std::isnan(c.balance[fid]) && c.balance[fid] != 0) {
            balance.push_back(ComponentSigmas(v, nodes[k], j, f, c, fid) / noise[k]);
          }
        }
      }
      // A family measured on several parts of every node: a defective part is one value of many.
      const bool far = f.members.size() >= kManyParts;
      const Tail tail = far ? Tail::kFarthest : Tail::kBody;
      f.limit = TailLimit(fleet, p, tail, nodes.size());
      if (f.balanced) f.balance_limit = TailLimit(balance, p, tail, nodes.size());
    }
    // Each pool's distances, both ways (ComponentDistance); the second way only for a pool where
    // some component has few metrics, since elsewhere it is the first.
    std::vector<std::vector<double>> means(cols.pools.size()), but_worsts(cols.pools.size());
    std::vector<bool> few(cols.pools.size(), false);
    for (size_t k = 0; k < nodes.size(); ++k) {
      for (size_t b = 0; b < cols.pools.size(); ++b) {
        for (const auto& [component, d] :
             ComponentDistances(v, nodes[k], cols.pools[b].cols, cols, models, centres[k])) {
          means[b].push_back(d.mean / noise[k]);
          but_worsts[b].push_back(d.but_worst / noise[k]);
          few[b] = few[b] || d.metrics <= kFewMetrics;
        }
      }
    }
    double pool_tests = 0;  // per node
    for (size_t b = 0; b < cols.pools.size(); ++b) {
      pool_tests += static_cast<double>(means[b].size() * (few[b] ? 2 : 1)) /
                    static_cast<double>(nodes.size());
    }
    const double pooled_p = o.budget / 2 / std::max(1.0, pool_tests);
    const size_t class_nodes = nodes.size();  // clang before 16 captures no structured binding
    const auto model = [&](const Pool& pool, std::vector<double>& ds, bool but_worst) {
      ComponentModel c;
      c.benchmark = pool.benchmark;
      c.part = pool.part;
      c.but_worst = but_worst;
      c.samples = ds.size();
      const Robust r = RobustOf(ds, 0.05);  // a twentieth of a sigma: the resolution of a mean
      c.centre = r.centre;
      c.spread = r.spread;
      for (double& d : ds) d = (d - c.centre) / c.spread;
      // Not the farthest tail: these are the tests that find defects of a few percent, and at
      // 99.9% they would read the defective parts' own distances (a thousandth of the parts
      // defective is enough) and widen their limits past them.
      c.limit =
          TailLimit(ds, pooled_p, ds.size() >= kManyParts * class_nodes ? Tail::kFar : Tail::kBody,
                    class_nodes);
      cm.components.push_back(std::move(c));
    };
    for (size_t b = 0; b < cols.pools.size(); ++b) {
      if (means[b].empty()) continue;
      model(cols.pools[b], means[b], false);
      if (few[b]) model(cols.pools[b], but_worsts[b], true);
    }
    out.classes.push_back(std::move(cm));
  }
  if (out.classes.empty()) {
    if (left_out == nullptr || left_out->size() == left_before) {
      return Status::InvalidArgument("no nodes to learn from");
    }
    std::vector<std::string> classes;
    for (size_t k = left_before; k < left_out->size(); ++k) {
      classes.push_back(
          fmt::format("{} ({})", Quote((*left_out)[k].hardware), (*left_out)[k].nodes.size()));
    }
    return Status::InvalidArgument(
        fmt::format("no hardware class has the {} nodes needed to learn from: {}", o.min_nodes,
                    fmt::join(classes, ", ")));
  }
  return out;
}

Json CriteriaToJson(const LearnedCriteria& c) {
  Json classes = Json::array();
  for (const ClassModel& cm : c.classes) {
    Json families = Json::array();
    for (const FamilyModel& f : cm.families) {
      Json modes = Json::array();
      for (const Mode& m : f.modes) {
        modes.push_back(Json{{"centre", m.centre},
                             {"spread", m.spread},
                             {"node_centre", m.node_centre},
                             {"node_spread", m.node_spread},
                             {"nodes", m.nodes}});
      }
      Json j = {{"family", f.family},  {"direction", DirectionName(f.direction)},
                {"modes", modes},      {"quantum", f.quantum},
                {"limit", f.limit},    {"samples", f.samples},
                {"members", f.members}};
      if (!f.factors.empty()) j["factors"] = f.factors;
      if (f.balanced) {
        j["balance_centre"] = f.balance_centre;
        j["balance_spread"] = f.balance_spread;
        j["balance_limit"] = f.balance_limit;
      }
      families.push_back(std::move(j));
    }
    Json components = Json::array();
    for (const ComponentModel& cv : cm.components) {
      Json j{{"benchmark", cv.benchmark},
             {"centre", cv.centre},
             {"spread", cv.spread},
             {"limit", cv.limit},
             {"samples", cv.samples}};
      if (!cv.part.empty()) j["part"] = cv.part;
      if (cv.but_worst) j["but_worst"] = true;
      components.push_back(std::move(j));
    }
    classes.push_back(Json{{"hardware", cm.hardware},
                           {"nodes", cm.nodes},
                           {"families", std::move(families)},
                           {"components", std::move(components)}});
  }
  return Json{{"schema", kCriteriaSchema},
              {"budget", c.budget},
              {"resolution", c.resolution},
              {"classes", std::move(classes)}};
}

Result<LearnedCriteria> CriteriaFromJson(std::string_view text, std::string_view source) {
  VIGIL_ASSIGN_OR_RETURN(Json j, ParseJson(text, source));
  const auto bad = [&](std::string_view what) {
    return Status::InvalidArgument(fmt::format("{}: {}", source, what));
  };
  if (!j.is_object() || !j.contains("schema") || !j["schema"].is_string()) {
    return bad("not a criteria file (no \"schema\")");
  }
  if (j["schema"] != kCriteriaSchema) {
    return bad(fmt::format("criteria of schema {}; this vigil reads {} (learn them again)",
                           Quote(j["schema"].get<std::string>()), kCriteriaSchema));
  }
  // Ranges of the numbers (docs/formats.md, "Ranges"): those `vigil learn` writes, and no more.
  constexpr Bounds kBudgetBounds{.lo = 0, .hi = 1, .lo_open = true};  // as learn --budget
  constexpr Bounds kResolutionBounds{.lo = 0, .hi = 1};
  constexpr Bounds kCountBounds{.lo = 0, .hi = 1099511627776.0};  // 2^40 nodes or samples
  constexpr Bounds kSpreadBounds{.lo = 0, .hi = kMetricValueBounds.hi, .lo_open = true};
  constexpr Bounds kQuantumBounds{.lo = 0, .hi = kMetricValueBounds.hi};
  constexpr Bounds kLimitBounds{.lo = 0, .hi = kMaxLimit};  // robust sigmas, as Learn writes them
  constexpr Bounds kFactorBounds{.lo = 1e-9, .hi = 1e9};    // a member's ratio to its family
  // A number within `bounds` (a count: also whole), the field named after `where` in errors.
  std::string where;
  const auto number = [&](const Json& obj, const char* field,
                          const Bounds& bounds) -> Result<double> {
    const Json& v = obj.at(field);  // throws when missing, as the getters below do
    if (!v.is_number()) return bad(fmt::format("{}{}: expected a number", where, field));
    const double d = v.get<double>();
    if (!bounds.Contains(d)) {
      return bad(fmt::format("{}{}: {}", where, field, DescribeOutside(d, bounds)));
    }
    return d;
  };
  const auto count = [&](const Json& obj, const char* field) -> Result<size_t> {
    VIGIL_ASSIGN_OR_RETURN(const double d, number(obj, field, kCountBounds));
    if (d != std::floor(d)) return bad(fmt::format("{}{}: expected a whole number", where, field));
    return static_cast<size_t>(d);
  };
  // nlohmann's typed getters throw on a wrong type; this reader reports it instead.
  try {
    LearnedCriteria c;
    VIGIL_ASSIGN_OR_RETURN(c.budget, number(j, "budget", kBudgetBounds));
    VIGIL_ASSIGN_OR_RETURN(c.resolution, number(j, "resolution", kResolutionBounds));
    for (const Json& cj : j.at("classes")) {
      ClassModel cm;
      cm.hardware = cj.at("hardware").get<std::string>();
      where = fmt::format("class {}: ", Quote(cm.hardware));
      VIGIL_ASSIGN_OR_RETURN(cm.nodes, count(cj, "nodes"));
      for (const Json& fj : cj.at("families")) {
        FamilyModel f;
        f.family = fj.at("family").get<std::string>();
        const std::string dir = fj.at("direction").get<std::string>();
        const Direction all[] = {Direction::kHigher, Direction::kLower, Direction::kZero,
                                 Direction::kEither, Direction::kClear, Direction::kInfo};
        auto d = std::find_if(std::begin(all), std::end(all),
                              [&](Direction x) { return DirectionName(x) == dir; });
        if (d == std::end(all)) return bad(fmt::format("family {}: bad direction", f.family));
        f.direction = *d;
        where = fmt::format("family {}: ", f.family);
        for (const Json& mj : fj.at("modes")) {
          Mode& m = f.modes.emplace_back();
          VIGIL_ASSIGN_OR_RETURN(m.centre, number(mj, "centre", kMetricValueBounds));
          VIGIL_ASSIGN_OR_RETURN(m.spread, number(mj, "spread", kSpreadBounds));
          VIGIL_ASSIGN_OR_RETURN(m.node_centre, number(mj, "node_centre", kMetricValueBounds));
          VIGIL_ASSIGN_OR_RETURN(m.node_spread, number(mj, "node_spread", kSpreadBounds));
          VIGIL_ASSIGN_OR_RETURN(m.nodes, count(mj, "nodes"));
        }
        if (f.modes.empty()) return bad(fmt::format("{}modes: none", where));
        VIGIL_ASSIGN_OR_RETURN(f.quantum, number(fj, "quantum", kQuantumBounds));
        VIGIL_ASSIGN_OR_RETURN(f.limit, number(fj, "limit", kLimitBounds));
        VIGIL_ASSIGN_OR_RETURN(f.samples, count(fj, "samples"));
        f.members = fj.at("members").get<std::vector<std::string>>();
        if (fj.contains("factors")) {
          for (const Json& x : fj.at("factors")) {
            if (!x.is_number()) return bad(fmt::format("{}factors: expected numbers", where));
            if (!kFactorBounds.Contains(x.get<double>())) {
              return bad(fmt::format("{}factors: {}", where,
                                     DescribeOutside(x.get<double>(), kFactorBounds)));
            }
            f.factors.push_back(x.get<double>());
          }
          if (f.factors.size() != f.members.size()) {
            return bad(fmt::format("{}factors: {} for {} members", where, f.factors.size(),
                                   f.members.size()));
          }
        }
        if (fj.contains("balance_centre")) {
          f.balanced = true;
          VIGIL_ASSIGN_OR_RETURN(f.balance_centre,
                                 number(fj, "balance_centre", kMetricValueBounds));
          VIGIL_ASSIGN_OR_RETURN(f.balance_spread, number(fj, "balance_spread", kSpreadBounds));
          VIGIL_ASSIGN_OR_RETURN(f.balance_limit, number(fj, "balance_limit", kLimitBounds));
        }
        cm.families.push_back(std::move(f));
      }
      for (const Json& vj : cj.at("components")) {
        ComponentModel cv;
        cv.benchmark = vj.at("benchmark").get<std::string>();
        if (vj.contains("part")) cv.part = vj.at("part").get<std::string>();
        if (vj.contains("but_worst")) cv.but_worst = vj.at("but_worst").get<bool>();
        where = fmt::format("component model {}: ", cv.benchmark);
        VIGIL_ASSIGN_OR_RETURN(cv.centre, number(vj, "centre", kMetricValueBounds));
        VIGIL_ASSIGN_OR_RETURN(cv.spread, number(vj, "spread", kSpreadBounds));
        VIGIL_ASSIGN_OR_RETURN(cv.limit, number(vj, "limit", kLimitBounds));
        VIGIL_ASSIGN_OR_RETURN(cv.samples, count(vj, "samples"));
        cm.components.push_back(std::move(cv));
      }
      c.classes.push_back(std::move(cm));
    }
    if (c.classes.empty()) return bad("no hardware classes");
    return c;
  } catch (const Json::exception& e) {
    return bad(fmt::format("malformed criteria: {}", e.what()));
  }
}

namespace {

constexpr std::pair<FindingTest, std::string_view> kFindingTests[] = {
    {FindingTest::kFleet, "fleet"},         {FindingTest::kBalance, "balance"},
    {FindingTest::kComponent, "component"}, {FindingTest::kReturnCode, "return_code"},
    {FindingTest::kMissing, "missing"},     {FindingTest::kClass, "class"},
    {FindingTest::kHealth, "health"}};

}  // namespace

std::string_view FindingTestName(FindingTest test) {
  for (const auto& [t, name] : kFindingTests) {
    if (t == test) return name;
  }
  return "fleet";  // not reached: every enumerator is in kFindingTests
}

Result<FindingTest> ParseFindingTest(std::string_view text) {
  for (const auto& [t, name] : kFindingTests) {
    if (name == text) return t;
  }
  return Status::InvalidArgument(fmt::format(
      "expected fleet, balance, component, return_code, missing, class or health, got {}",
      Quote(text)));
}

std::string_view SeverityName(Severity s) {
  switch (s) {
    case Severity::kMinor:
      return "minor";
    case Severity::kMajor:
      return "major";
    case Severity::kCritical:
      return "critical";
  }
  return "minor";
}

namespace {

// One class's models, by family id and by benchmark.
struct ClassIndex {
  const ClassModel* model = nullptr;
  std::vector<const FamilyModel*> families;
  std::vector<double> divisor;  // by column: its member's factor, 1 where none (Scaled)
  // By pool (part, benchmark): its models, the mean's and the one without the worst metric's.
  std::map<std::pair<std::string_view, std::string_view>,
           std::pair<const ComponentModel*, const ComponentModel*>>
      components;
};

// A node whose values leave the modes of more than this share of its families (and at least
// kMinClassFamilies) belongs to no class learned: one finding says so, not one per value.
constexpr double kStrangerShare = 0.5;
constexpr size_t kMinClassFamilies = 3;

// Judges node i against one class's models.
NodeFindings JudgeByClass(const FleetTable& t, size_t i, const Columns& cols,
                          const ClassIndex& ix) {
  const ClassModel& cm = *ix.model;
  const std::vector<const FamilyModel*>& models = ix.families;
  const auto& components = ix.components;
  NodeFindings nf;
  std::vector<double> scratch;
  const Scaled v{t, ix.divisor};
  const NodeCentres centres = NodeCentresOf(v, i, cols, scratch);
  // Benchmarks that failed or did not run: one finding each, from their return code, not one
  // per metric they did not produce. Unless the benchmark failed on some components only (it
  // reported the others): then the components it could not measure are named as missing too.
  std::set<std::string> down;
  for (const FamilyModel& f : cm.families) {
    if (f.direction != Direction::kZero) continue;
    const long j = t.column(f.family);
    if (j < 0 || std::isnan(t.at(i, static_cast<size_t>(j))) ||
        t.at(i, static_cast<size_t>(j)) != 0) {
      down.insert(BenchmarkOfKey(f.family));
    }
  }
  for (const auto& [benchmark, bcols] : cols.benchmark_cols) {
    if (!down.contains(benchmark)) continue;
    const bool partial =
        std::any_of(bcols.begin(), bcols.end(), [&](size_t j) { return !std::isnan(t.at(i, j)); });
    if (partial) down.erase(benchmark);
  }
  const double widen = NodeNoise(v, i, cols, models, centres);

  size_t judged = 0, strange = 0;  // families judged by the fleet; those with a value off its mode
  for (size_t fid = 0; fid < cols.families.size(); ++fid) {
    // Nothing learned, nothing to judge by (records are never judged; criteria written by hand
    // may give them no mode).
    if (models[fid] == nullptr || models[fid]->modes.empty()) continue;
    const FamilyModel& f = *models[fid];
    const Mode& mode = NearestMode(f, centres.level[fid]);
    bool off = false;
    for (size_t j : cols.family_cols[fid]) {
      const double x = v.at(i, j), factor = ix.divisor[j];
      if (std::isnan(x)) continue;  // judged below, from the expected members
      Finding fd;
      fd.component = ParseComponent(cols.anatomy[j].component);
      fd.metric = t.metrics()[j];
      fd.value = t.at(i, j);
      if (!IsLearned(f.direction)) {  // a return code; health readings are HealthRules'
        if (x == 0 || f.direction != Direction::kZero) continue;
        fd.test = FindingTest::kReturnCode;
        fd.sigmas = kInf;
        fd.severity = Severity::kCritical;
        nf.findings.push_back(std::move(fd));
        continue;
      }
      const double z_fleet = WorseSigmas(f.direction, x, mode.centre, mode.spread) / widen;
      const double z_balance = f.balanced ? ComponentSigmas(v, i, j, f, centres, fid) / widen : 0.0;
      const bool fleet = z_fleet > f.limit, balance = f.balanced && z_balance > f.balance_limit;
      // Off its mode either way: a node of another class may be better as well as worse.
      off |= std::fabs(x - mode.centre) / mode.spread / widen > f.limit;
      if (!fleet && !balance) continue;
      fd.test = fleet ? FindingTest::kFleet : FindingTest::kBalance;
      fd.sigmas = fleet ? z_fleet : z_balance;
      const bool low = f.direction == Direction::kHigher || f.direction == Direction::kEither;
      const bool high = f.direction == Direction::kLower || f.direction == Direction::kEither;
      fd.expected_low = low ? (mode.centre - f.limit * mode.spread) * factor : -kInf;
      fd.expected_high = high ? (mode.centre + f.limit * mode.spread) * factor : kInf;
      fd.deviation = mode.centre != 0 ? x / mode.centre - 1 : 0;
      fd.severity = SeverityOf(fd.deviation);
      nf.findings.push_back(std::move(fd));
    }
    if (IsLearned(f.direction)) {
      ++judged;
      strange += off;
    }
  }
  // Expected components that reported nothing, whether or not the table has their column.
  for (const FamilyModel& f : cm.families) {
    if (f.direction == Direction::kInfo) continue;  // never judged, even when absent
    if (down.contains(BenchmarkOfKey(f.family)) && f.direction != Direction::kZero) continue;
    for (size_t m = 0; m < f.members.size(); ++m) {
      const std::string& key = f.members[m];
      const long j = t.column(key);
      if (j >= 0 && !std::isnan(t.at(i, static_cast<size_t>(j)))) continue;
      const double centre = f.modes.empty()
                                ? std::nan("")
                                : f.modes.front().centre * (f.factors.empty() ? 1.0 : f.factors[m]);
      nf.findings.push_back(Finding{ParseComponent(Anatomize(key).component), key,
                                    FindingTest::kMissing, std::nan(""), centre, centre, -1, kInf,
                                    Severity::kCritical});
    }
  }
  for (const Pool& pool : cols.pools) {
    auto it = components.find({pool.part, pool.benchmark});
    if (it == components.end() ||
        std::any_of(pool.benchmarks.begin(), pool.benchmarks.end(),
                    [&](const std::string& b) { return down.contains(b); })) {
      continue;
    }
    const auto& [mean, but_worst] = it->second;
    for (const auto& [component, d] : ComponentDistances(v, i, pool.cols, cols, models, centres)) {
      // The way that lies further beyond its limit, of those that apply.
      const ComponentModel* worst = nullptr;
      double value = 0, z = 0;
      for (const ComponentModel* cv : {mean, but_worst}) {
        if (cv == nullptr || (cv->but_worst && d.metrics > kFewMetrics)) continue;
        const double distance = cv->but_worst ? d.but_worst : d.mean;
        const double zv = (distance / widen - cv->centre) / cv->spread;
        if (zv > cv->limit && (worst == nullptr || zv / cv->limit > z / worst->limit)) {
          worst = cv;
          value = distance;
          z = zv;
        }
      }
      if (worst == nullptr) continue;
      const std::string key =
          pool.benchmark + "/*" +
          (d.index.empty() || !pool.part.empty() ? "" : ":" + std::string(d.index));
      nf.findings.push_back(Finding{ParseComponent(component), key, FindingTest::kComponent, value,
                                    -kInf, worst->centre + worst->limit * worst->spread, 0, z,
                                    Severity::kMinor});
    }
  }
  if (judged >= kMinClassFamilies &&
      static_cast<double>(strange) > kStrangerShare * static_cast<double>(judged)) {
    std::erase_if(nf.findings, [](const Finding& f) {
      return f.test == FindingTest::kFleet || f.test == FindingTest::kBalance ||
             f.test == FindingTest::kComponent;
    });
    nf.findings.push_back(Finding{ComponentId{"node", std::nullopt},
                                  fmt::format("{} of {} families", strange, judged),
                                  FindingTest::kClass, static_cast<double>(strange) / judged, 0, 0,
                                  0, kInf, Severity::kCritical});
  }
  nf.defective = !nf.findings.empty();
  return nf;
}

}  // namespace

LearnedCriteria RestrictToBenchmarks(LearnedCriteria c,
                                     const std::vector<std::string>& benchmarks) {
  const auto kept = [&](std::string_view benchmark) {
    return std::find(benchmarks.begin(), benchmarks.end(), benchmark) != benchmarks.end();
  };
  for (ClassModel& cm : c.classes) {
    std::erase_if(cm.families,
                  [&](const FamilyModel& f) { return !kept(BenchmarkOfKey(f.family)); });
    // A part's pool is kept only with every benchmark it pools: with fewer it is another test.
    std::erase_if(cm.components, [&](const ComponentModel& m) {
      for (std::string_view rest = m.benchmark;;) {
        const size_t plus = rest.find('+');
        if (!kept(rest.substr(0, plus))) return true;
        if (plus == std::string_view::npos) return false;
        rest.remove_prefix(plus + 1);
      }
    });
  }
  return c;
}

Json FindingToJson(const Finding& f) {
  const auto number = [](double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); };
  return Json{{"component", ComponentName(f.component)}, {"metric", f.metric},
              {"test", FindingTestName(f.test)},         {"value", number(f.value)},
              {"expected_low", number(f.expected_low)},  {"expected_high", number(f.expected_high)},
              {"deviation", number(f.deviation)},        {"sigmas", number(f.sigmas)},
              {"severity", SeverityName(f.severity)}};
}

const Mode& NearestMode(const FamilyModel& f, double m) {
  const Mode* best = &f.modes.front();
  if (std::isnan(m)) return *best;
  for (const Mode& mode : f.modes) {
    if (std::fabs(m - mode.node_centre) / mode.node_spread <
        std::fabs(m - best->node_centre) / best->node_spread) {
      best = &mode;
    }
  }
  return *best;
}

double MemberFactor(const FamilyModel& f, std::string_view key) {
  for (size_t m = 0; m < f.factors.size(); ++m) {
    if (f.members[m] == key) return f.factors[m];
  }
  return 1;
}

const ClassModel* ClassFor(const LearnedCriteria& c, std::string_view hardware) {
  for (const ClassModel& cm : c.classes) {
    if (cm.hardware == hardware) return &cm;
  }
  return c.classes.size() == 1 ? &c.classes.front() : nullptr;
}

struct Judgement::Prepared {
  Prepared(const std::vector<std::string>& metrics, const LearnedCriteria& c)
      : criteria(c), cols(metrics), health(cols.anatomy) {
    std::unordered_map<std::string_view, size_t> column;
    for (size_t j = 0; j < metrics.size(); ++j) column.emplace(metrics[j], j);
    for (const ClassModel& cm : c.classes) {
      auto [slot, fresh] = classes.try_emplace(cm.hardware);
      if (!fresh) continue;  // a class listed twice: the first judges, as ClassFor says
      ClassIndex& ix = slot->second;
      ix.model = &cm;
      ix.families = ModelsById(cols, cm);
      ix.divisor.assign(metrics.size(), 1.0);
      for (const FamilyModel& f : cm.families) {
        for (size_t m = 0; m < f.factors.size(); ++m) {
          if (auto it = column.find(f.members[m]); it != column.end()) {
            ix.divisor[it->second] = f.factors[m];
          }
        }
      }
      for (const ComponentModel& cv : cm.components) {
        auto& [mean, but_worst] = ix.components[{cv.part, cv.benchmark}];
        (cv.but_worst ? but_worst : mean) = &cv;
      }
    }
  }

  const LearnedCriteria& criteria;
  const Columns cols;
  const HealthRules health;
  std::map<std::string, ClassIndex, std::less<>> classes;  // every class's models, indexed
};

Judgement::Judgement(const std::vector<std::string>& metrics, const LearnedCriteria& criteria)
    : prepared_(std::make_unique<const Prepared>(metrics, criteria)) {}

Judgement::~Judgement() = default;

std::vector<NodeFindings> Judgement::Judge(const FleetTable& t, int threads) const {
  const Prepared& p = *prepared_;
  std::vector<NodeFindings> out(t.node_count());
  const size_t n = t.node_count();
  const size_t workers = WorkerCount(n, kNodesPerThread, threads);
  RunWorkers(workers, [&](size_t w) {
    const auto [begin, end] = ShareOf(n, w, workers);
    for (size_t i = begin; i < end; ++i) {
      const ClassModel* cm = ClassFor(p.criteria, t.hardware(i));
      if (cm == nullptr) {
        out[i].findings.push_back(Finding{ComponentId{"node", std::nullopt}, t.hardware(i),
                                          FindingTest::kClass, 0, 0, 0, 0, 0, Severity::kCritical});
      } else {
        out[i] = JudgeByClass(t, i, p.cols, p.classes.find(cm->hardware)->second);
      }
      for (Finding& f : p.health.Findings(t, i)) out[i].findings.push_back(std::move(f));
      out[i].defective = !out[i].findings.empty();
    }
  });
  return out;
}

std::vector<NodeFindings> Judge(const FleetTable& t, const LearnedCriteria& c, int threads) {
  return Judgement(t.metrics(), c).Judge(t, threads);
}

NodeJudgement JudgeNode(const FleetTable& node, const Judgement* criteria) {
  NodeJudgement out;
  // One thread: a node alone, and the server already judges one request per thread.
  out.findings = criteria != nullptr ? criteria->Judge(node, 1)[0] : JudgeHealth(node);
  if (out.findings.defective) {
    out.verdict = Verdict::kDefective;
  } else {
    out.verdict = criteria != nullptr ? Verdict::kHealthy : Verdict::kUnjudged;
  }
  return out;
}

NodeJudgement JudgeNode(const FleetTable& node, const LearnedCriteria* criteria) {
  if (criteria == nullptr) return JudgeNode(node, static_cast<const Judgement*>(nullptr));
  const Judgement prepared(node.metrics(), *criteria);
  return JudgeNode(node, &prepared);
}

}  // namespace vigil::learned
