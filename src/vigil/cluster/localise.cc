#include "vigil/cluster/localise.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "vigil/core/stats.h"

namespace vigil::cluster {
namespace {

// What is known of each pair, one byte a pair (10,000 nodes pair-wise: 1e8 pairs).
constexpr uint8_t kSlow = 1;         // below slow_ratio of its expected speed
constexpr uint8_t kBeyondNoise = 2;  // and too slow for its kind's noise to explain
constexpr uint8_t kExplained = 4;    // by a switch or node already named

// The reference of a kind is the median of at most this many of its pairs, taken at an even
// stride: the median of a million is within a thousandth of a sigma of the median of all, and a
// sample keeps the scratch copy at 8 MB for 1e8 pairs.
constexpr size_t kReferenceSample = size_t{1} << 20;

constexpr int kSend = 1;
constexpr int kReceive = 2;

struct Work {
  std::vector<int> rack_of;  // node -> rack index; empty without racks
  std::vector<float> ratio;  // per pair: speed relative to its kind's expected (1 = as expected)
  std::vector<uint8_t> flags;
};

Status Validate(const PairSet& set, const LocaliseOptions& o) {
  if (!(o.slow_ratio > 0 && o.slow_ratio < 1) || !(o.share > 0 && o.share <= 1) ||
      o.min_pairs < 1 || !(o.link_false_rate > 0 && o.link_false_rate < 1)) {
    return Status::InvalidArgument(
        "localise options: slow_ratio and link_false_rate must be in (0, 1), share in (0, 1], "
        "min_pairs at least 1");
  }
  if (!set.racks.empty() && set.racks.size() != set.nodes.size()) {
    return Status::InvalidArgument(
        fmt::format("{} rack labels for {} nodes: give one per node or none", set.racks.size(),
                    set.nodes.size()));
  }
  const auto n = static_cast<int64_t>(set.nodes.size());
  for (size_t i = 0; i < set.pairs.size(); ++i) {
    const PairMeasure& p = set.pairs[i];
    if (p.from < 0 || p.from >= n || p.to < 0 || p.to >= n || p.from == p.to) {
      return Status::InvalidArgument(fmt::format(
          "pair {}: {} -> {} is not a pair of two of the {} nodes", i, p.from, p.to, n));
    }
    if (!std::isfinite(p.value) || p.value < 0) {
      return Status::InvalidArgument(fmt::format(
          "pair {} ({} -> {}): value {} is not a finite number >= 0", i,
          set.nodes[static_cast<size_t>(p.from)], set.nodes[static_cast<size_t>(p.to)], p.value));
    }
  }
  return Status::Ok();
}

std::vector<int> RackIndices(const std::vector<std::string>& racks,
                             std::vector<std::string>* labels) {
  std::map<std::string, int> index;
  std::vector<int> rack_of;
  rack_of.reserve(racks.size());
  for (const std::string& r : racks) {
    auto [it, added] = index.emplace(r, static_cast<int>(labels->size()));
    if (added) labels->push_back(r);
    rack_of.push_back(it->second);
  }
  return rack_of;
}

// 0 inside a rack (or without racks), 1 across racks.
int KindOf(const Work& w, const PairMeasure& p) {
  if (w.rack_of.empty()) return 0;
  return w.rack_of[static_cast<size_t>(p.from)] != w.rack_of[static_cast<size_t>(p.to)] ? 1 : 0;
}

// Log of the value as a speed: larger is better whatever the metric; log(0) is -inf for a dead
// bandwidth, +inf for a zero latency.
double SpeedLog(double value, bool higher_is_better) {
  const double l = std::log(value);
  return higher_is_better ? l : -l;
}

// z such that a standard normal exceeds it with probability p (bisection on erfc: precise to
// 1e-9 and called twice a call).
double NormalUpperQuantile(double p) {
  double lo = 0, hi = 40;
  if (p >= 0.5) return 0;
  for (int i = 0; i < 100; ++i) {
    const double mid = 0.5 * (lo + hi);
    (0.5 * std::erfc(mid / std::sqrt(2.0)) > p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

struct Reference {
  double median = 0;  // of the speed logs
  double sigma = 0;   // their MAD as a normal's sigma: the noise of a healthy pair
  size_t count = 0;   // pairs of the kind
};

// The median of a kind's pairs, and the noise of its healthy ones: the MAD of the pairs that are
// not slow, so that slow pairs (up to half of them) do not widen the noise that a link must
// stand out from, and two nodes, one direction slow, still have a noise (zero) to judge by.
Reference ReferenceOf(const PairSet& set, const Work& w, int kind, double slow_ratio) {
  Reference ref;
  for (const PairMeasure& p : set.pairs) ref.count += KindOf(w, p) == kind ? 1 : 0;
  const size_t stride = std::max<size_t>(1, ref.count / kReferenceSample);
  std::vector<double> sample;
  size_t seen = 0;
  for (const PairMeasure& p : set.pairs) {
    if (KindOf(w, p) != kind) continue;
    if (seen++ % stride == 0) sample.push_back(SpeedLog(p.value, set.higher_is_better));
  }
  if (sample.empty()) return ref;
  ref.median = stats::Median(sample);
  if (!std::isfinite(ref.median)) return ref;
  std::erase_if(sample, [&](double l) { return l - ref.median < std::log(slow_ratio); });
  ref.sigma = stats::kMadToSigma * stats::Mad(sample);
  return ref;
}

// Fills ratio and the kSlow and kBeyondNoise flags of every pair.
void JudgePairs(const PairSet& set, const LocaliseOptions& o, Work& w) {
  w.ratio.assign(set.pairs.size(), 1.0f);
  w.flags.assign(set.pairs.size(), 0);
  for (int kind = 0; kind < 2; ++kind) {
    const Reference ref = ReferenceOf(set, w, kind, o.slow_ratio);
    // Without a finite median (more than half the pairs dead) there is no healthy reference:
    // nothing of this kind is judged (the header's assumption).
    if (ref.count == 0 || !std::isfinite(ref.median) || !std::isfinite(ref.sigma)) continue;
    const double z = NormalUpperQuantile(o.link_false_rate / static_cast<double>(ref.count));
    for (size_t i = 0; i < set.pairs.size(); ++i) {
      const PairMeasure& p = set.pairs[i];
      if (KindOf(w, p) != kind) continue;
      const double d = SpeedLog(p.value, set.higher_is_better) - ref.median;
      w.ratio[i] = static_cast<float>(std::exp(d));
      if (std::exp(d) >= o.slow_ratio) continue;
      w.flags[i] |= kSlow;
      if (ref.sigma == 0 || d < -z * ref.sigma) w.flags[i] |= kBeyondNoise;
    }
  }
}

// Switches and nodes are both groups of nodes: a rack, or a node alone.
struct Grouping {
  CulpritKind kind;
  std::vector<int> group_of;       // node -> group
  std::vector<std::string> names;  // group -> name
  bool cross_only;                 // only pairs between two groups count (a switch's uplink)
};

struct Tally {
  int64_t slow[2] = {0, 0};  // [0] sending, [1] receiving
  int64_t total[2] = {0, 0};
};

bool Counts(const Grouping& g, const Work& w, const PairMeasure& p, size_t i) {
  if (w.flags[i] & kExplained) return false;
  return !g.cross_only ||
         g.group_of[static_cast<size_t>(p.from)] != g.group_of[static_cast<size_t>(p.to)];
}

std::vector<Tally> CountTallies(const PairSet& set, const Work& w, const Grouping& g) {
  std::vector<Tally> tallies(g.names.size());
  for (size_t i = 0; i < set.pairs.size(); ++i) {
    const PairMeasure& p = set.pairs[i];
    if (!Counts(g, w, p, i)) continue;
    const int64_t slow = (w.flags[i] & kSlow) ? 1 : 0;
    Tally& from = tallies[static_cast<size_t>(g.group_of[static_cast<size_t>(p.from)])];
    Tally& to = tallies[static_cast<size_t>(g.group_of[static_cast<size_t>(p.to)])];
    from.slow[0] += slow;
    ++from.total[0];
    to.slow[1] += slow;
    ++to.total[1];
  }
  return tallies;
}

// The directions (kSend | kReceive) in which a group is slow enough to be named.
int QualifyingDirections(const Tally& t, const LocaliseOptions& o) {
  int dirs = 0;
  for (int d = 0; d < 2; ++d) {
    if (t.total[d] >= o.min_pairs && t.slow[d] > 0 &&
        static_cast<double>(t.slow[d]) >= o.share * static_cast<double>(t.total[d])) {
      dirs |= d == 0 ? kSend : kReceive;
    }
  }
  return dirs;
}

std::string_view DirectionWord(int dirs) {
  return dirs == (kSend | kReceive) ? "both" : dirs == kSend ? "send" : "receive";
}

std::string_view DirectionPhrase(int dirs) {
  return dirs == (kSend | kReceive) ? "sending and receiving"
         : dirs == kSend            ? "when sending"
                                    : "when receiving";
}

// Names group `g` in `dirs`: marks its pairs in those directions explained, takes them out of
// the other groups' tallies, and returns the culprit with its evidence.
Culprit NameGroup(const PairSet& set, const Grouping& grouping, int g, int dirs, Work& w,
                  std::vector<Tally>& tallies) {
  std::vector<double> slow_ratios;
  int64_t pairs = 0;
  for (size_t i = 0; i < set.pairs.size(); ++i) {
    const PairMeasure& p = set.pairs[i];
    if (!Counts(grouping, w, p, i)) continue;
    const int from = grouping.group_of[static_cast<size_t>(p.from)];
    const int to = grouping.group_of[static_cast<size_t>(p.to)];
    if (!((dirs & kSend) && from == g) && !((dirs & kReceive) && to == g)) continue;
    const bool slow = w.flags[i] & kSlow;
    if (slow) slow_ratios.push_back(w.ratio[i]);
    ++pairs;
    w.flags[i] |= kExplained;
    for (const auto& [group, d] : {std::pair{from, 0}, std::pair{to, 1}}) {
      --tallies[static_cast<size_t>(group)].total[d];
      tallies[static_cast<size_t>(group)].slow[d] -= slow ? 1 : 0;
    }
  }
  Culprit c;
  c.kind = grouping.kind;
  c.subject = grouping.names[static_cast<size_t>(g)];
  c.direction = DirectionWord(dirs);
  c.ratio = stats::Median(slow_ratios);
  c.slow_pairs = static_cast<int>(slow_ratios.size());
  c.pairs = static_cast<int>(pairs);
  c.evidence =
      fmt::format("slow on {} of {} {}pairs {}: median {:.2g} of expected", c.slow_pairs, c.pairs,
                  grouping.cross_only ? "cross-rack " : "", DirectionPhrase(dirs), c.ratio);
  return c;
}

// Names groups one at a time, the one whose slow pairs are most numerous first, counting only
// pairs that nothing named so far explains: two slow racks make every third rack's pairs with
// them slow, and naming the first takes those pairs away from the others' shares.
void ExplainGroups(const PairSet& set, const Grouping& grouping, const LocaliseOptions& o, Work& w,
                   std::vector<Culprit>& out) {
  std::vector<Tally> tallies = CountTallies(set, w, grouping);
  std::vector<char> named(tallies.size(), 0);
  while (true) {
    int best = -1, best_dirs = 0;
    int64_t best_slow = 0;
    for (size_t g = 0; g < tallies.size(); ++g) {
      const int dirs = named[g] ? 0 : QualifyingDirections(tallies[g], o);
      if (dirs == 0) continue;
      const int64_t slow =
          ((dirs & kSend) ? tallies[g].slow[0] : 0) + ((dirs & kReceive) ? tallies[g].slow[1] : 0);
      if (slow > best_slow)
        std::tie(best, best_dirs, best_slow) = std::tuple(static_cast<int>(g), dirs, slow);
    }
    if (best < 0) return;
    named[static_cast<size_t>(best)] = 1;
    out.push_back(NameGroup(set, grouping, best, best_dirs, w, tallies));
  }
}

// The two directions of one unordered pair of nodes, `a` the sender of its first measurement
// beyond noise.
struct LinkSides {
  int a = 0, b = 0;
  int measured[2] = {0, 0};  // [0] a -> b, [1] b -> a
  std::vector<double> slow[2];
};

Culprit LinkCulprit(const PairSet& set, const LinkSides& l) {
  const std::string& a = set.nodes[static_cast<size_t>(l.a)];
  const std::string& b = set.nodes[static_cast<size_t>(l.b)];
  const bool both = !l.slow[0].empty() && !l.slow[1].empty();
  const int side = l.slow[0].empty() ? 1 : 0;
  Culprit c;
  c.kind = CulpritKind::kLink;
  std::vector<double> ratios = l.slow[side];
  if (both) ratios.insert(ratios.end(), l.slow[1].begin(), l.slow[1].end());
  c.ratio = stats::Median(ratios);
  c.slow_pairs = static_cast<int>(ratios.size());
  c.pairs = both ? l.measured[0] + l.measured[1] : l.measured[side];
  const std::string& first = side == 0 ? a : b;
  const std::string& second = side == 0 ? b : a;
  c.subject = fmt::format("{}-{}", first, second);
  c.direction = both ? "both" : fmt::format("{}->{}", first, second);
  const int other = l.measured[1 - side];
  c.evidence =
      both ? fmt::format("slow both ways on {} of {} measurements: median {:.2g} of expected",
                         c.slow_pairs, c.pairs, c.ratio)
           : fmt::format("slow from {} to {} on {} of {}: median {:.2g} of expected; {} to {} {}",
                         first, second, c.slow_pairs, c.pairs, c.ratio, second, first,
                         other == 0 ? "not measured" : "not slow");
  return c;
}

// Every slow pair beyond noise that no switch or node explains is a link; its other direction
// is read too, so that a link slow both ways is named once.
void ExplainLinks(const PairSet& set, const Work& w, std::vector<Culprit>& out) {
  std::map<std::pair<int, int>, LinkSides> links;
  std::vector<char> in_link(set.nodes.size(), 0);
  for (size_t i = 0; i < set.pairs.size(); ++i) {
    if ((w.flags[i] & (kSlow | kBeyondNoise | kExplained)) != (kSlow | kBeyondNoise)) continue;
    const PairMeasure& p = set.pairs[i];
    auto [it, added] = links.try_emplace({std::min(p.from, p.to), std::max(p.from, p.to)});
    if (added) std::tie(it->second.a, it->second.b) = std::pair(p.from, p.to);
    in_link[static_cast<size_t>(p.from)] = in_link[static_cast<size_t>(p.to)] = 1;
  }
  if (links.empty()) return;
  for (size_t i = 0; i < set.pairs.size(); ++i) {
    const PairMeasure& p = set.pairs[i];
    if (!in_link[static_cast<size_t>(p.from)] || !in_link[static_cast<size_t>(p.to)]) continue;
    auto it = links.find({std::min(p.from, p.to), std::max(p.from, p.to)});
    if (it == links.end()) continue;
    const int side = p.from == it->second.a ? 0 : 1;
    ++it->second.measured[side];
    if ((w.flags[i] & (kSlow | kExplained)) == kSlow) it->second.slow[side].push_back(w.ratio[i]);
  }
  for (const auto& [key, sides] : links) out.push_back(LinkCulprit(set, sides));
}

int KindRank(CulpritKind k) {
  return k == CulpritKind::kSwitch ? 0 : k == CulpritKind::kNode ? 1 : 2;
}

}  // namespace

Result<std::vector<Culprit>> Localise(const PairSet& set, const LocaliseOptions& o) {
  VIGIL_RETURN_IF_ERROR(Validate(set, o));
  Work w;
  std::vector<std::string> rack_labels;
  w.rack_of = RackIndices(set.racks, &rack_labels);
  JudgePairs(set, o, w);
  std::vector<Culprit> out;
  if (rack_labels.size() > 1) {
    ExplainGroups(set, Grouping{CulpritKind::kSwitch, w.rack_of, rack_labels, true}, o, w, out);
  }
  std::vector<int> identity(set.nodes.size());
  for (size_t i = 0; i < identity.size(); ++i) identity[i] = static_cast<int>(i);
  ExplainGroups(set, Grouping{CulpritKind::kNode, std::move(identity), set.nodes, false}, o, w,
                out);
  ExplainLinks(set, w, out);
  std::stable_sort(out.begin(), out.end(), [](const Culprit& x, const Culprit& y) {
    return std::tuple(KindRank(x.kind), x.ratio, x.subject) <
           std::tuple(KindRank(y.kind), y.ratio, y.subject);
  });
  return out;
}

std::string_view CulpritKindName(CulpritKind kind) {
  switch (kind) {
    case CulpritKind::kNode:
      return "node";
    case CulpritKind::kLink:
      return "link";
    case CulpritKind::kSwitch:
      return "switch";
  }
  return "node";
}

Result<std::vector<NamedCulprit>> LocaliseNetwork(const NetworkPairs& pairs,
                                                  const LocaliseOptions& o) {
  std::vector<NamedCulprit> named;
  for (const bool bandwidth : {true, false}) {
    const PairSet set{pairs.nodes, pairs.racks, bandwidth ? pairs.bandwidth : pairs.latency,
                      bandwidth};
    VIGIL_ASSIGN_OR_RETURN(std::vector<Culprit> found, Localise(set, o));
    for (Culprit& c : found) named.push_back({bandwidth ? "bandwidth" : "latency", std::move(c)});
  }
  for (const RailPairs& rail : pairs.rdma) {
    for (const bool bandwidth : {true, false}) {
      const PairSet set{pairs.nodes, pairs.racks, bandwidth ? rail.bandwidth : rail.latency,
                        bandwidth};
      VIGIL_ASSIGN_OR_RETURN(std::vector<Culprit> found, Localise(set, o));
      for (Culprit& c : found) {
        named.push_back({(bandwidth ? "rdma " : "rdma latency ") + rail.name, std::move(c)});
      }
    }
  }
  return named;
}

Json CulpritJson(const NamedCulprit& named) {
  const Culprit& c = named.culprit;
  return {{"measure", named.measure}, {"kind", CulpritKindName(c.kind)},
          {"subject", c.subject},     {"direction", c.direction},
          {"ratio", c.ratio},         {"slow_pairs", c.slow_pairs},
          {"pairs", c.pairs},         {"evidence", c.evidence}};
}

}  // namespace vigil::cluster
