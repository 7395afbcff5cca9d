#include "vigil/learned/learn.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <span>

#include "vigil/core/json.h"
#include "vigil/core/parallel.h"
#include "vigil/core/stats.h"
#include "vigil/core/text.h"
#include "vigil/learned/measures.h"

namespace vigil::learned {
namespace {

using stats::kMadToSigma;
using stats::Mad;
using stats::Median;

constexpr size_t kMinTailSamples = 100;  // values needed to read the shape of a tail
constexpr int kMaxDecimals = 9;          // more than this: a value is not printed rounded
constexpr size_t kMaxModes = 4;          // of one family within one class
constexpr size_t kManyParts = 4;         // components a node has of a family measured per part
// Two modes are told apart when their medians lie this many of the wider one's robust sigmas
// apart (docs/validate.md).
constexpr double kModeSeparation = 5;

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

// The decimal places `v` is written with, kMaxDecimals + 1 when more: v times 10^d is a whole
// number within what a double's rounding leaves (a few of its last bits, and a millionth). A
// tolerance relative to the scaled value itself (a billionth of it, before session 55) read every
// value of 0.5 or more as written with 9 decimals, so that a family of values printed to two
// decimals among which a few were not rounded read a step of 1e-9.
int DecimalsOf(double v) {
  double scale = 1;
  for (int d = 0; d <= kMaxDecimals; ++d, scale *= 10) {
    const double s = v * scale;
    const double off = std::fabs(s - std::round(s));
    if (off <= 1e-6 + 8 * std::numeric_limits<double>::epsilon() * std::fabs(s)) return d;
  }
  return kMaxDecimals + 1;
}

// The share of a family's values that must be printed rounded (or sit on one whole number) for
// QuantumOf to read a step (or a state) in them: a few values of another origin do not hide it.
constexpr double kRoundedShare = 0.99;

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
  if (static_cast<double>(rounded) < kRoundedShare * static_cast<double>(xs.size())) return 0;
  if (most == 0) {
    const auto same = std::count(xs.begin(), xs.end(), Median(xs));
    if (static_cast<double>(same) >= kRoundedShare * static_cast<double>(xs.size())) return 0;
  }
  return std::pow(10.0, -most);
}

// Where the tail of `z` (sorted) goes beyond probability `p`, extrapolated from its quantiles at
// levels `a` < `b` by the Student t whose quantiles there stand in the same ratio (a normal at the
// light end, Cauchy at the heavy one), anchored at the quantile at `a`. NaN when they do not rise.
double Extrapolated(std::span<const double> z, double a, double b, double p) {
  namespace bm = boost::math;
  const double qa = stats::QuantileOfSorted(z, a), qb = stats::QuantileOfSorted(z, b);
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
  // The same three readings, taken below the gaps at the top (SetApart): parts of one metric,
  // where no other test would find a defect that the farthest reading took for a wild value.
  kFarthestBelowGap,
};

// The quantile from which TailLimit sorts the values it reads the tail from: below the 90% its
// readings start at, by as much as the values set apart at the top may take (kMostApart).
constexpr double kSortedFrom = 0.85;

// Values beyond the 99.9% quantile that a family needs before its tail is read there.
constexpr double kFarthestTail = 10;

// How rarely the healthy tail shows a gap as wide as one that sets values apart (SetApart), over
// all the ranks tried.
constexpr double kGapLevel = 1e-3;

// The quantile beyond which WidestGap looks for a gap: up to half the values beyond it (0.5% of a
// family's values, the defect rate the far readings assume of parts) can be set apart at once.
constexpr double kGapTail = 0.99;

// The share of a tail's spacings that may be ties (0) before its spacings say nothing of a gap:
// values printed rounded, on nodes of no noise of their own (NodeNoise's floor of 1), tie by the
// dozen, the mean of the spacings shrinks, and nearly every rounded fleet showed a "gap" (a
// reviewer's simulation: 99.97% of fleets at half-sigma steps, about 48 healthy values each).
constexpr double kMaxTiedShare = 0.1;

// How many of the largest values of `z` (sorted) the most significant gap of the tail beyond its
// quantile at kGapTail sets apart from the values below it; 0 where no gap is significant. Read
// from the tail's log-spacings, each times its rank from the top (Renyi's representation): under
// a tail like a Pareto's, or lighter, they are independent and exponential with one mean (under a
// lighter one, the mean shrinks toward the top). A spacing is a gap where it exceeds the mean of
// those below it by more than their F distribution gives with probability kGapLevel over the
// ranks tried (the upper half of the tail). None where more than kMaxTiedShare of them are ties.
size_t WidestGap(std::span<const double> z) {
  const size_t n = z.size();
  const auto tail = static_cast<size_t>(static_cast<double>(n) * (1 - kGapTail));
  if (tail < 2 || !(z[n - 1 - tail] > 0)) return 0;
  std::vector<double> spacing(tail);  // [i]: (i + 1) log(z_(i+1) / z_(i+2)), z_(1) the largest
  for (size_t i = 0; i < tail; ++i) {
    spacing[i] = static_cast<double>(i + 1) * std::log(z[n - 1 - i] / z[n - 2 - i]);
  }
  const auto ties = std::count(spacing.begin(), spacing.end(), 0.0);
  if (static_cast<double>(ties) > kMaxTiedShare * static_cast<double>(tail)) return 0;
  const double tried = static_cast<double>(tail / 2);
  double below = 0;  // the sum of the spacings below the one tried
  for (size_t k = tail / 2; k < tail; ++k) below += spacing[k];
  size_t widest = 0;
  double least = std::log(kGapLevel / tried);  // the log probability a gap must be under
  for (size_t k = tail / 2; k >= 1; --k) {     // k values above the gap
    const auto m = static_cast<double>(tail - k);
    if (below > 0) {
      // log P(F(2, 2m) > spacing / mean) = -m log(1 + spacing / (m mean))
      const double log_p = -m * std::log1p(spacing[k - 1] / below);
      if (log_p < least) {
        least = log_p;
        widest = k;
      }
    }
    below += spacing[k - 1];
  }
  return widest;
}

// The largest share of a family's values that gaps may set apart (SetApart): defects of a few
// parts in a hundred, not a population of their own. With kSortedFrom below 0.9 x (1 - this), the
// tail's readings below them lie among the values TailLimit sorts.
constexpr double kMostApart = 0.05;

// How many of the largest values of `z` (sorted from its kSortedFrom quantile up) gaps set apart
// from the rest of the tail, which the farthest reading would otherwise take for the healthy
// tail: a defect rate above a thousandth of the parts puts the defects' own values there. The
// widest gap first (WidestGap), then again among the values below it until none is left, or until
// the next would set apart more than kMostApart of the values: the spacings of healthy values just
// below the defects, ranked from the top with the defects above them, read wider than they are,
// and the deepest significant gap would set some of them apart too. Assumes the healthy tail does
// not turn heavier toward its top than a Pareto's (wild values of a population of their own far
// beyond the body are set apart, and the limit read beneath them); defects on more than half a
// percent of the values (one search sets apart at most that many), or under a heavy healthy tail
// that shows no gap, can still widen the limit.
size_t SetApart(std::span<const double> z) {
  const auto most = static_cast<size_t>(kMostApart * static_cast<double>(z.size()));
  size_t apart = 0;
  for (size_t k = 0; (k = WidestGap(z.first(z.size() - apart))) > 0 && apart + k <= most;) {
    apart += k;
  }
  return apart;
}

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
// widens the limit, unless the parts have one metric each, gaps set the defects apart and the
// whole tail is read below them: SetApart); a fleet too small or too rounded to show its tail
// gets the floor. Reorders `z`.
double TailLimit(std::vector<double>& z, double p, Tail tail, size_t nodes) {
  namespace bm = boost::math;
  double limit = bm::quantile(
      bm::complement(bm::students_t(static_cast<double>(std::max<size_t>(nodes, 2) - 1)), p));
  if (z.size() < kMinTailSamples) return limit;
  // Only the top is read: from the 90% quantile up of what lies below the values set apart (at
  // most kMostApart of them), and the gaps' search above that. So only the values from the
  // kSortedFrom quantile up are sorted, the others partitioned below them.
  const auto first_sorted = static_cast<size_t>(kSortedFrom * static_cast<double>(z.size() - 1));
  std::nth_element(z.begin(), z.begin() + static_cast<long>(first_sorted), z.end());
  std::sort(z.begin() + static_cast<long>(first_sorted), z.end());
  // Read below the values that gaps set apart: the far reading too takes defects for the tail
  // once they are a few thousandths of the values.
  const size_t apart = tail == Tail::kFarthestBelowGap ? SetApart(z) : 0;
  const std::span<const double> read = std::span<const double>(z).first(z.size() - apart);
  const auto raise = [&](double a, double b) {
    const double e = Extrapolated(read, a, b, p);
    if (e > limit) limit = e;  // NaN: no tail to read
  };
  const auto beyond = [&](double q) { return static_cast<double>(read.size()) * (1 - q); };
  raise(0.9, 0.975);
  if (tail != Tail::kBody && beyond(0.995) >= 2) raise(0.975, 0.995);
  const bool farthest = tail == Tail::kFarthest || tail == Tail::kFarthestBelowGap;
  if (farthest && beyond(0.999) >= kFarthestTail) raise(0.995, 0.999);
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

// The factors of a family's members (FamilyModel::factors), columns `member_cols`: each member's
// median ratio to its node's level over the class's `nodes` (a row and column of Tukey's median
// polish), normalised to a median of 1. Empty, so that the values are read as they are, when
// every factor lies within `resolution` of 1 (the parts are one population), when there are fewer
// than two members, or when a level or a factor is not positive or a factor is out of range
// (kMinFactor to kMaxFactor: a ratio would mean nothing).
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
    if (!(f >= kMinFactor && f <= kMaxFactor)) return {};
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

namespace {

// Runs fn(i, scratch) for every i in [0, n) over the hardware's threads, each thread with a scratch
// vector of its own, the i interleaved among them (families differ in size, and neighbours
// alike). For independent work only: each fn writes the i-th result and reads what no fn writes.
void InParallel(size_t n, const std::function<void(size_t, std::vector<double>&)>& fn) {
  const size_t workers = WorkerCount(n, 1, 0);
  RunWorkers(workers, [&](size_t w) {
    std::vector<double> scratch;
    for (size_t i = w; i < n; i += workers) fn(i, scratch);
  });
}

// What learning one class reads, made once per class: its nodes, each value divided by its
// member's factor (Scaled), each node's centres over those values and its own noise.
struct ClassData {
  ClassData(const FleetTable& table, const Columns& columns, const std::vector<size_t>& class_nodes)
      : t(table), cols(columns), nodes(class_nodes), divisor(cols.anatomy.size(), 1.0) {}
  ClassData(const ClassData&) = delete;
  ClassData& operator=(const ClassData&) = delete;

  const FleetTable& t;
  const Columns& cols;
  const std::vector<size_t>& nodes;
  std::vector<double> divisor;       // by column: its member's factor, 1 where none
  const Scaled v{t, divisor};        // the values divided by their members' factors
  std::vector<NodeCentres> centres;  // by position in `nodes`
  std::vector<double> noise;         // by position in `nodes` (NodeNoise); set with the limits
};

// Each family's members (the columns that at least kExpectedShare of the class's nodes report),
// by family id, and where its parts differ by design their factors, read from the raw values
// (MemberFactors); the factors go into d.divisor, and the nodes' centres are taken again over the
// values divided by them. And its parts: the columns that kExpectedShare of the nodes that report
// the family at all report, where at least as many nodes do as a mode needs (`min_count`); none
// where fewer do (an accident of a few nodes' results, another SuperBench version: its members are
// none too). They are its members where every node runs it; where only some do (int4 GEMM, which
// an A100 runs and an H100 does not, in a fleet whose two hardware classes are not labelled), a
// family of eight parts a node has no members, and yet each node that runs it makes eight tests
// of it, whose tail the limits must read as that of a family measured per part.
struct Members {
  std::vector<std::vector<size_t>> cols;     // by family id
  std::vector<std::vector<double>> factors;  // by family id, parallel to cols; empty: all 1
  std::vector<std::vector<size_t>> parts;    // by family id
  std::vector<size_t> reporting;             // by family id: the nodes that report any of it
};

// Each node's centres (NodeCentresOf), into d.centres.
void SetCentres(ClassData& d) {
  d.centres.resize(d.nodes.size());
  InParallel(d.nodes.size(), [&](size_t k, std::vector<double>& scratch) {
    d.centres[k] = NodeCentresOf(d.v, d.nodes[k], d.cols, scratch);
  });
}

Members LearnMembers(ClassData& d, double resolution, size_t min_count) {
  const Columns& cols = d.cols;
  SetCentres(d);
  Members m{std::vector<std::vector<size_t>>(cols.families.size()),
            std::vector<std::vector<double>>(cols.families.size()),
            std::vector<std::vector<size_t>>(cols.families.size()),
            std::vector<size_t>(cols.families.size())};
  const auto expected = [](size_t present, size_t of) {
    return static_cast<double>(present) >= kExpectedShare * static_cast<double>(of);
  };
  bool scaled = false;
  std::vector<size_t> present;  // by position in the family's columns
  for (size_t fid = 0; fid < cols.families.size(); ++fid) {
    const std::vector<size_t>& fcols = cols.family_cols[fid];
    present.assign(fcols.size(), 0);
    size_t reporting = 0;  // nodes that report any of the family
    for (size_t i : d.nodes) {
      bool any = false;
      for (size_t c = 0; c < fcols.size(); ++c) {
        const bool has = !std::isnan(d.t.at(i, fcols[c]));
        present[c] += has;
        any = any || has;
      }
      reporting += any;
    }
    m.reporting[fid] = reporting;
    for (size_t c = 0; c < fcols.size(); ++c) {
      if (expected(present[c], d.nodes.size())) m.cols[fid].push_back(fcols[c]);
      if (reporting >= min_count && expected(present[c], reporting)) {
        m.parts[fid].push_back(fcols[c]);
      }
    }
    if (!IsLearned(cols.anatomy[cols.family_cols[fid][0]].direction)) continue;
    m.factors[fid] = MemberFactors(d.v, d.nodes, m.cols[fid], d.centres, fid, resolution);
    for (size_t k = 0; k < m.factors[fid].size(); ++k) {
      d.divisor[m.cols[fid][k]] = m.factors[fid][k];
    }
    scaled = scaled || !m.factors[fid].empty();
  }
  if (scaled) SetCentres(d);
  return m;
}

// The balance inside the node of family `fid` (FamilyModel::balanced), for a family of
// kMinBalanceParts or more parts judged by the fleet's distribution: the robust centre and spread
// of each value's ratio to the median of its node's other values, minus 1 (BalanceRatio). `xs` is
// scratch.
void LearnBalance(const ClassData& d, size_t fid, double resolution, FamilyModel& f,
                  std::vector<double>& xs) {
  const std::vector<size_t>& fcols = d.cols.family_cols[fid];
  if (fcols.size() < kMinBalanceParts || !IsLearned(f.direction)) return;
  xs.clear();
  for (size_t k = 0; k < d.nodes.size(); ++k) {
    for (size_t j : fcols) {
      const double ratio = BalanceRatio(d.centres[k].balance[fid], d.v.at(d.nodes[k], j));
      if (!std::isnan(ratio)) xs.push_back(ratio);
    }
  }
  if (xs.empty()) return;
  const double centre = std::fabs(f.modes.front().centre);
  const Robust b = RobustOf(xs, std::max(resolution, centre > 0 ? f.quantum / centre : 0.0));
  f.balanced = true;
  f.balance_centre = b.centre;
  f.balance_spread = b.spread;
}

// The model of family `fid` over the class (its limits are set later, SetFamilyLimits); nullopt
// when it is never judged (kInfo) or the class never reports it.
std::optional<FamilyModel> LearnFamily(const ClassData& d, const Members& members, size_t fid,
                                       size_t min_count, double resolution,
                                       std::vector<double>& xs) {
  const std::vector<size_t>& fcols = d.cols.family_cols[fid];
  FamilyModel f;
  f.family = d.cols.families[fid];
  f.direction = d.cols.anatomy[fcols[0]].direction;
  if (f.direction == Direction::kInfo) return std::nullopt;  // never judged: nothing to learn
  xs.clear();
  for (size_t j : fcols) {
    for (size_t i : d.nodes) {
      if (!std::isnan(d.t.at(i, j))) xs.push_back(d.t.at(i, j));
    }
  }
  if (xs.empty()) return std::nullopt;  // this class never reports it
  for (size_t j : members.cols[fid]) f.members.push_back(d.t.metrics()[j]);
  f.factors = members.factors[fid];
  f.samples = xs.size();
  f.quantum = QuantumOf(xs);  // of the values as printed
  LearnModes(d.v, d.nodes, fcols, d.centres, fid, min_count, resolution, f, xs);
  LearnBalance(d, fid, resolution, f, xs);
  return f;
}

// A step this many of a population's sigmas wide or wider is coarse (TieShifts).
constexpr double kCoarseStep = 2;

// Where values printed rounded would lie unrounded (TieShifts): each one's offset from its printed
// figure; and whether a population's step is coarse.
struct TieReading {
  std::vector<double> shift;
  bool coarse = false;
};

// For values printed in steps of `quantum`, in their order, each of population `group` (a mode):
// where each would lie, as an offset from its printed figure, had it not been rounded. What a
// population's printed figures tell exactly is its distribution at their boundaries (the share of
// its values below each); within a figure, the values' ranks are spread between the boundaries as
// a normal's would be (linear in the normal's quantile of their share), which is exact for a
// normal population whatever the step, and close for a heavier tail where the step is narrower
// than 2 sigmas. A figure at either end of its population has one boundary: its values are placed
// at the scale of the figure next to it, within their own; a population of one or two figures is
// spread evenly over them. A population is coarse where the figure that holds its median is
// kCoarseStep or more of its normal quantiles wide (a step of 2 sigmas or more), or has one
// boundary: there a heavy tail between boundaries 1.5 and 4.5 sigmas out reads heavier than it is,
// and values tied within one node (a GPU's eight) are set apart by ranks of the whole population.
TieReading TieShifts(const std::vector<double>& xs, const std::vector<size_t>& group,
                     double quantum) {
  namespace bm = boost::math;
  const bm::normal normal;
  std::vector<size_t> order(xs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::pair{group[a], xs[a]} < std::pair{group[b], xs[b]};
  });
  TieReading out{std::vector<double>(xs.size(), 0.0)};
  // Per population: each figure's first rank, then n; the normal quantile of each figure's lower
  // boundary (0 for the first).
  std::vector<size_t> begins;
  std::vector<double> bound;
  for (size_t first = 0; first < order.size();) {
    size_t last = first;
    while (last < order.size() && group[order[last]] == group[order[first]]) ++last;
    const size_t n = last - first;
    const auto probit = [&](double rank) {
      return bm::quantile(normal, rank / static_cast<double>(n));
    };
    begins.clear();
    for (size_t r = 0; r < n; ++r) {
      if (r == 0 || xs[order[first + r]] != xs[order[first + r - 1]]) begins.push_back(r);
    }
    const size_t figures = begins.size();
    if (figures == n) {  // no value shares its figure: nothing to place (a step below the noise)
      first = last;
      continue;
    }
    begins.push_back(n);
    bound.assign(figures + 1, 0.0);
    for (size_t k = 1; k < figures; ++k) bound[k] = probit(static_cast<double>(begins[k]));
    // The width of figure k in the normal's quantiles; 0 at either end of the population.
    const auto width = [&](size_t k) {
      return k == 0 || k + 1 == figures ? 0.0 : bound[k + 1] - bound[k];
    };
    const auto middle = static_cast<size_t>(std::upper_bound(begins.begin(), begins.end(), n / 2) -
                                            begins.begin() - 1);
    if (!(width(middle) > 0 && width(middle) < kCoarseStep)) out.coarse = true;
    for (size_t k = 0; k < figures; ++k) {
      const size_t begin = begins[k], end = begins[k + 1];
      const auto m = static_cast<double>(end - begin);
      const double inner = width(k);
      double beside = inner;
      if (k == 0) beside = figures > 1 ? width(1) : 0.0;
      if (k + 1 == figures && k > 0) beside = width(k - 1);
      for (size_t r = begin; r < end; ++r) {
        double offset = (static_cast<double>(r - begin) + 0.5) / m;  // in steps from the bottom
        if (beside > 0 && m > 1) {
          const double z = probit(static_cast<double>(r) + 0.5);
          if (inner > 0) {
            offset = (z - bound[k]) / inner;
          } else if (begin > 0) {  // the top figure
            offset = std::min(1.0, (z - bound[k]) / beside);
          } else {  // the bottom figure
            offset = std::max(0.0, 1 - (bound[k + 1] - z) / beside);
          }
        }
        out.shift[order[first + r]] = quantum * (offset - 0.5);
      }
    }
    first = last;
  }
  return out;
}

// By column of the families in `learned` (family ids): how many of the values the class's nodes
// report are the only value of their component on their node that those families judge it by.
std::vector<size_t> AloneOnTheirNode(const ClassData& d, const std::vector<size_t>& learned) {
  std::vector<size_t> cols, component_of(d.cols.anatomy.size());
  std::map<std::string_view, size_t> ids;
  for (size_t fid : learned) {
    for (size_t j : d.cols.family_cols[fid]) {
      cols.push_back(j);
      component_of[j] = ids.try_emplace(d.cols.anatomy[j].component, ids.size()).first->second;
    }
  }
  std::vector<size_t> alone(d.cols.anatomy.size());
  std::vector<size_t> metrics(ids.size());  // of one node, by component
  for (size_t i : d.nodes) {
    for (size_t j : cols) metrics[component_of[j]] += !std::isnan(d.t.at(i, j));
    for (size_t j : cols) {
      if (!std::isnan(d.t.at(i, j))) alone[j] += metrics[component_of[j]] == 1;
    }
    for (size_t j : cols) metrics[component_of[j]] = 0;
  }
  return alone;
}

// The limits of the tests of single values (fleet and balance), each family's, and each node's
// own noise into d.noise. Half the budget of false findings per healthy node goes to these tests,
// two (fleet and balance) per value a node reports, on average over the class's nodes; each
// test's share is read from the tail of the fleet's own values. `members`: the class's
// (LearnMembers); `family_ids`: the family id of each of cm.families.
void SetFamilyLimits(ClassData& d, const Members& members, double budget,
                     const std::vector<size_t>& family_ids, ClassModel& cm) {
  double tests = 0;
  std::vector<size_t> learned;  // family ids
  for (size_t m = 0; m < cm.families.size(); ++m) {
    if (!IsLearned(cm.families[m].direction)) continue;
    tests += 2 * static_cast<double>(cm.families[m].samples);
    learned.push_back(family_ids[m]);
  }
  const double p = budget / 2 / std::max(1.0, tests / static_cast<double>(d.nodes.size()));
  // Each node's own noise divides its deviations here as it will when the node is judged, so
  // that the tails below are those of the tests as they are made.
  // (cm.families is complete: the models' addresses stay; only their limits are set below.)
  const std::vector<const FamilyModel*> models = ModelsById(d.cols, cm);
  d.noise.resize(d.nodes.size());
  InParallel(d.nodes.size(), [&](size_t k, std::vector<double>&) {
    d.noise[k] = NodeNoise(d.v, d.nodes[k], d.cols, models, d.centres[k]);
  });
  const std::vector<size_t> alone = AloneOnTheirNode(d, learned);
  InParallel(cm.families.size(), [&](size_t m, std::vector<double>&) {
    FamilyModel& f = cm.families[m];
    if (!IsLearned(f.direction)) return;
    const size_t fid = family_ids[m];
    const std::vector<size_t>& fcols = d.cols.family_cols[fid];
    // Values printed rounded are read where they would lie unrounded (TieShifts, each mode's
    // values a population): the quantiles of a tail a step or two wide are otherwise ratios of
    // small whole numbers of steps. Where a mode's step is coarse, the reading of the printed
    // figures counts too, the nearer of the two (`limit` below).
    TieReading ties;
    if (f.quantum > 0) {
      std::vector<double> printed;
      std::vector<size_t> mode_of;
      for (size_t k = 0; k < d.nodes.size(); ++k) {
        const Mode& mode = NearestMode(f, d.centres[k].level[fid]);
        for (size_t j : fcols) {
          if (std::isnan(d.t.at(d.nodes[k], j))) continue;
          printed.push_back(d.t.at(d.nodes[k], j));
          mode_of.push_back(static_cast<size_t>(&mode - f.modes.data()));
        }
      }
      ties = TieShifts(printed, mode_of, f.quantum);
    }
    const std::vector<double>& shift = ties.shift;
    // The sigmas of the fleet and balance tests, of the values placed ([0]) and as printed ([1]).
    std::array<std::vector<double>, 2> fleet, balance;
    size_t n = 0;  // the values read so far, by which shift is indexed
    for (size_t k = 0; k < d.nodes.size(); ++k) {
      const NodeCentres& c = d.centres[k];
      const Mode& mode = NearestMode(f, c.level[fid]);
      for (size_t j : fcols) {
        if (std::isnan(d.t.at(d.nodes[k], j))) continue;
        const double x = d.v.at(d.nodes[k], j);
        const double placed = shift.empty() ? x : (d.t.at(d.nodes[k], j) + shift[n]) / d.divisor[j];
        ++n;
        for (size_t r = 0; r < (ties.coarse ? 2 : 1); ++r) {
          const double v = r == 0 ? placed : x;
          fleet[r].push_back(WorseSigmas(f.direction, v, mode.centre, mode.spread) / d.noise[k]);
          const double b = f.balanced ? BalanceSigmas(v, f, c, fid) : std::nan("");
          if (!std::isnan(b)) balance[r].push_back(b / d.noise[k]);
        }
      }
    }
    // A family measured on several parts of every node that runs it: a defective part is one
    // value of many. Where that value is all there is of its part on its node, for most of the
    // family's values (v02's HBM: mem-bw/D2D_Mem_BW; a few nodes, or fewer than half, that also
    // run a benchmark of another SuperBench version that names the part do not change it), a
    // value set apart at the top is taken for a defect, not a wild measurement: a part of several
    // metrics has the component test for a defect the family's tests let pass, a part of one has
    // none.
    const bool far = members.parts[fid].size() >= kManyParts;
    size_t single = 0;
    for (size_t j : fcols) single += alone[j];
    const bool one_metric = 2 * single > f.samples;  // samples: the family's values reported
    const Tail tail = !far ? Tail::kBody : (one_metric ? Tail::kFarthestBelowGap : Tail::kFarthest);
    const auto limit = [&](std::array<std::vector<double>, 2>& z) {
      const double placed = TailLimit(z[0], p, tail, members.reporting[fid]);
      return ties.coarse ? std::min(placed, TailLimit(z[1], p, tail, members.reporting[fid]))
                         : placed;
    };
    f.limit = limit(fleet);
    if (f.balanced) f.balance_limit = limit(balance);
  });
}

// A twentieth of a sigma: the floor of a component model's spread, the resolution of a mean of
// sigmas.
constexpr double kComponentSpreadFloor = 0.05;

// The component models (ComponentModel) of each pool, into cm.components, with the other half of
// the budget: the tests that find the defects of a few percent. Each way (Pooling) is learned from
// the components it judges, and, as judging does, a node's pool is left out where one of its
// benchmarks is down there (DownBenchmarks). REQUIRES: SetFamilyLimits ran (d.noise, the limits).
void LearnComponentModels(const ClassData& d, double budget, ClassModel& cm) {
  const Columns& cols = d.cols;
  const std::vector<const FamilyModel*> models = ModelsById(cols, cm);
  const auto way = [](Pooling p) { return static_cast<size_t>(p); };
  // By pool, each way's distances, and how many nodes have components in it: any, of many
  // metrics, of few, of three.
  std::vector<std::array<std::vector<double>, 3>> ways(cols.pools.size());
  struct Nodes {
    size_t any = 0, many = 0, few = 0, three = 0;
  };
  std::vector<Nodes> nodes_with(cols.pools.size());
  // By pool, the single sigmas of its components of two metrics, both of each.
  std::vector<std::vector<double>> singles(cols.pools.size());
  for (size_t k = 0; k < d.nodes.size(); ++k) {
    const std::set<std::string> down = DownBenchmarks(d.t, d.nodes[k], cols, cm);
    for (size_t b = 0; b < cols.pools.size(); ++b) {
      if (AnyDown(cols.pools[b], down)) continue;
      bool many = false, few = false, three = false;
      for (const auto& [component, c] : ComponentDistances(
               d.v, d.nodes[k], cols.pools[b].cols, cols, models, d.centres[k], d.noise[k])) {
        if (c.metrics > kFewMetrics) {
          many = true;
          ways[b][way(Pooling::kTrimmedOrHeld)].push_back(c.mean);
        } else {
          few = true;
          ways[b][way(Pooling::kMean)].push_back(c.mean);
          ways[b][way(Pooling::kButWorst)].push_back(c.but_worst);
          if (c.metrics == 2) {
            singles[b].push_back(c.but_worst);  // of two: the better one
            singles[b].push_back(c.worst);
          } else {
            three = true;
          }
        }
      }
      nodes_with[b].any += many || few;
      nodes_with[b].many += many;
      nodes_with[b].few += few;
      nodes_with[b].three += three;
    }
  }
  // A kind of component that half the nodes with the pool do not have in it is an accident of a
  // few nodes' results (a part whose metrics some did not report), not the class's layout: it
  // gets no model, and such components are judged by their single values.
  for (size_t b = 0; b < cols.pools.size(); ++b) {
    if (2 * nodes_with[b].many < nodes_with[b].any) ways[b][way(Pooling::kTrimmedOrHeld)].clear();
    if (2 * nodes_with[b].few < nodes_with[b].any) {
      ways[b][way(Pooling::kMean)].clear();
      ways[b][way(Pooling::kButWorst)].clear();
    }
  }
  double pool_tests = 0;  // per node
  for (const auto& pool : ways) {
    for (const std::vector<double>& ds : pool) pool_tests += static_cast<double>(ds.size());
  }
  pool_tests /= static_cast<double>(d.nodes.size());
  const double pooled_p = budget / 2 / std::max(1.0, pool_tests);
  const auto model = [&](size_t b, std::vector<double>& ds, Pooling pooling) {
    const Pool& pool = cols.pools[b];
    // The nodes that have such components in the pool (an unlabelled hardware class may have them
    // and another not).
    const size_t with = pooling == Pooling::kTrimmedOrHeld ? nodes_with[b].many : nodes_with[b].few;
    ComponentModel c;
    c.benchmark = pool.benchmark;
    c.part = pool.part;
    c.pooling = pooling;
    c.samples = ds.size();
    const Robust r = RobustOf(ds, kComponentSpreadFloor);
    c.centre = r.centre;
    c.spread = r.spread;
    for (double& x : ds) x = (x - c.centre) / c.spread;
    // Components of a part a node has several of (GPUs, NICs), where a defective part is one of
    // many.
    const bool per_part = ds.size() >= kManyParts * with;
    // Not the farthest tail: these are the tests that find defects of a few percent, and at
    // 99.9% they would read the defective parts' own distances (a thousandth of the parts
    // defective is enough) and widen their limits past them.
    c.limit = TailLimit(ds, pooled_p, per_part ? Tail::kFar : Tail::kBody, with);
    // The mean of two metrics keeps the tail of one of them (one far out, the other at 0), while
    // its body, which the limit above is read from, looks lighter under heavy-tailed noise: no
    // lower than the limit that one metric alone would need to pass it with the other at 0, half
    // the limit its single sigmas give at this probability, read as far out as the tests of
    // single values read theirs (the farthest for components per part). A pooled test names no
    // component on the strength of one metric that those call healthy. Not where half the nodes
    // with the pool's few-metric components have them of three metrics (one moves their mean by
    // a third): a few nodes that report a third metric are an accident, as above.
    if (pooling == Pooling::kMean && 2 * nodes_with[b].three < nodes_with[b].few) {
      const double single =
          TailLimit(singles[b], pooled_p, per_part ? Tail::kFarthest : Tail::kBody, with);
      c.limit = std::min(std::max(c.limit, (single / 2 - c.centre) / c.spread), kMaxLimit);
    }
    cm.components.push_back(std::move(c));
  };
  for (size_t b = 0; b < cols.pools.size(); ++b) {
    for (const Pooling p : {Pooling::kTrimmedOrHeld, Pooling::kMean, Pooling::kButWorst}) {
      std::vector<double>& ds = ways[b][way(p)];
      if (!ds.empty()) model(b, ds, p);
    }
  }
}

// One class's criteria: its families' members and factors, their models, their limits, then the
// components' pooled models.
ClassModel LearnClass(const FleetTable& t, const Columns& cols, const std::string& hardware,
                      const std::vector<size_t>& nodes, const LearnOptions& o) {
  ClassModel cm;
  cm.hardware = hardware;
  cm.nodes = nodes.size();
  ClassData d(t, cols, nodes);
  const size_t min_count = std::max(
      o.min_nodes,
      static_cast<size_t>(std::ceil(o.min_mode_share * static_cast<double>(nodes.size()))));
  const Members members = LearnMembers(d, o.resolution, min_count);
  std::vector<std::optional<FamilyModel>> learned(cols.families.size());
  InParallel(learned.size(), [&](size_t fid, std::vector<double>& scratch) {
    learned[fid] = LearnFamily(d, members, fid, min_count, o.resolution, scratch);
  });
  std::vector<size_t> family_ids;  // of cm.families, in order
  for (size_t fid = 0; fid < learned.size(); ++fid) {
    if (!learned[fid]) continue;
    cm.families.push_back(std::move(*learned[fid]));
    family_ids.push_back(fid);
  }
  SetFamilyLimits(d, members, o.budget, family_ids, cm);
  LearnComponentModels(d, o.budget, cm);
  return cm;
}

// "N nodes, fewer than the M needed to learn from": why a class is too small.
std::string TooFewReason(size_t nodes, size_t min_nodes) {
  return fmt::format("{} node{}, fewer than the {} needed to learn from", nodes,
                     nodes == 1 ? "" : "s", min_nodes);
}

// The error when no class was learned: no nodes at all, or every class (those appended to
// *left_out from `left_before` on) too small.
Status NothingLearned(const std::vector<LeftOutClass>* left_out, size_t left_before,
                      size_t min_nodes) {
  if (left_out == nullptr || left_out->size() == left_before) {
    return Status::InvalidArgument("no nodes to learn from");
  }
  std::vector<std::string> classes;
  for (size_t k = left_before; k < left_out->size(); ++k) {
    classes.push_back(
        fmt::format("{} ({})", Quote((*left_out)[k].hardware), (*left_out)[k].nodes.size()));
  }
  return Status::InvalidArgument(
      fmt::format("no hardware class has the {} nodes needed to learn from: {}", min_nodes,
                  fmt::join(classes, ", ")));
}

}  // namespace

Result<LearnedCriteria> Learn(const FleetTable& t, const LearnOptions& o,
                              std::vector<LeftOutClass>* left_out) {
  const size_t left_before = left_out != nullptr ? left_out->size() : 0;
  LearnedCriteria out;
  out.budget = o.budget;
  out.resolution = o.resolution;
  const Columns cols(t.metrics());
  for (const auto& [hardware, nodes] : NodesByHardware(t)) {
    if (nodes.size() < o.min_nodes) {
      std::string reason = TooFewReason(nodes.size(), o.min_nodes);
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
    out.classes.push_back(LearnClass(t, cols, hardware, nodes, o));
  }
  if (out.classes.empty()) return NothingLearned(left_out, left_before, o.min_nodes);
  // What `vigil learn` writes, `vigil validate` reads. Values spread over the whole range a result
  // may take (1e100 either way) give spreads and ratios beyond what a criteria file holds: such a
  // fleet is refused, naming the family and the number, not learned into criteria no one can read.
  const Result<LearnedCriteria> readable =
      CriteriaFromJson(DumpJson(CriteriaToJson(out)), "the criteria learned");
  if (!readable.ok()) {
    return Status::InvalidArgument(
        fmt::format("{} (the values of one metric lie too far apart to learn from)",
                    readable.status().message()));
  }
  return out;
}

}  // namespace vigil::learned
