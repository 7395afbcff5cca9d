// Synthetic pair measurements with planted culprits, for localise's tests and
// perf/pattern_bench.cc: n nodes in racks, a pattern's pairs measured both ways, lognormal noise,
// healthy cross-rack pairs slower than pairs inside a rack (an oversubscribed uplink), and bad
// nodes, links and switches chosen at random with a slowdown factor each.
//
// Header-only and pure: the randomness comes from the seed, and each call owns its generator, so
// calls are thread-safe.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "vigil/cluster/localise.h"
#include "vigil/cluster/patterns.h"
#include "vigil/core/random.h"

namespace vigil::cluster {

struct SyntheticShape {
  int nodes = 1024;
  int racks = 32;            // 0: no rack labels; else nodes are dealt to racks in blocks
  double intra = 100;        // a healthy pair inside a rack (bandwidth, or latency's inverse)
  double inter_share = 0.8;  // a healthy cross-rack pair measures intra x this
  double noise_sd = 0.05;    // sd of the log of the lognormal noise of every measurement
  bool latency = false;      // values are latencies (1 / speed), higher_is_better = false
  uint64_t seed = 1;
};

// How many culprits of each kind to plant, and how slow: factors drawn uniformly in
// [min_factor, max_factor] (links: up to max_link_factor; one pair carries less evidence than
// a node's many).
struct SyntheticPlan {
  int nodes_send = 0, nodes_receive = 0, nodes_both = 0;
  int links_one_way = 0, links_both = 0;
  int switches_send = 0, switches_receive = 0, switches_both = 0;
  double min_factor = 0.05;
  double max_factor = 0.4;
  double max_link_factor = 0.4;
};

// Every kind of culprit at once, 13 in all: two bad nodes of each direction, two one-way and two
// two-way links, a bad switch of each direction (the tests' and the benchmark's plan).
inline constexpr SyntheticPlan kEveryKindPlan{.nodes_send = 2,
                                              .nodes_receive = 2,
                                              .nodes_both = 2,
                                              .links_one_way = 2,
                                              .links_both = 2,
                                              .switches_send = 1,
                                              .switches_receive = 1,
                                              .switches_both = 1};

// A planted culprit as Localise should name it (a link slow both ways: subject "a-b" with the
// smaller index first; Localise may give the names in either order).
struct PlantedCulprit {
  CulpritKind kind;
  std::string subject;
  std::string direction;
  double factor;
};

struct SyntheticPairs {
  PairSet set;
  std::vector<PlantedCulprit> planted;
};

inline std::string SyntheticNodeName(int i) { return fmt::format("node{:05d}", i); }
inline std::string SyntheticRackName(int r) { return fmt::format("rack{:03d}", r); }

// The host list of a shape: node i in rack i * racks / nodes (blocks of nearly equal size).
inline std::vector<PatternHost> SyntheticHosts(const SyntheticShape& shape) {
  std::vector<PatternHost> hosts;
  for (int i = 0; i < shape.nodes; ++i) {
    const int64_t rack = static_cast<int64_t>(i) * shape.racks / shape.nodes;
    hosts.push_back(
        {SyntheticNodeName(i), shape.racks > 0 ? SyntheticRackName(static_cast<int>(rack)) : ""});
  }
  return hosts;
}

// The unordered pairs that a schedule's pair rounds measure.
inline std::vector<std::pair<int, int>> PairsOf(const std::vector<Round>& rounds) {
  std::vector<std::pair<int, int>> pairs;
  for (const Round& round : rounds) {
    for (const auto& group : round) {
      for (size_t i = 0; i < group.size(); ++i) {
        for (size_t j = i + 1; j < group.size(); ++j) pairs.emplace_back(group[i], group[j]);
      }
    }
  }
  return pairs;
}

namespace synthetic_internal {

// Per-node, per-rack and per-directed-pair slowdown factors (1 = healthy).
struct Factors {
  std::vector<double> send, receive;            // per node
  std::vector<double> rack_send, rack_receive;  // per rack
  std::map<std::pair<int, int>, double> link;   // per directed pair
};

inline double Draw(Rng& rng, double lo, double hi) { return lo + (hi - lo) * rng.Uniform(); }

// `count` distinct values of [0, n) not in `taken`, added to it.
inline std::vector<int> Distinct(Rng& rng, int n, int count, std::set<int>& taken) {
  std::vector<int> out;
  while (static_cast<int>(out.size()) < count && static_cast<int>(taken.size()) < n) {
    const int v = static_cast<int>(rng.Below(static_cast<uint64_t>(n)));
    if (taken.insert(v).second) out.push_back(v);
  }
  return out;
}

inline void PlantGroups(Rng& rng, const SyntheticPlan& plan, int n, bool racks, Factors& f,
                        SyntheticPairs& out) {
  const auto kind = racks ? CulpritKind::kSwitch : CulpritKind::kNode;
  auto& send = racks ? f.rack_send : f.send;
  auto& receive = racks ? f.rack_receive : f.receive;
  const int counts[3] = {racks ? plan.switches_send : plan.nodes_send,
                         racks ? plan.switches_receive : plan.nodes_receive,
                         racks ? plan.switches_both : plan.nodes_both};
  const char* words[3] = {"send", "receive", "both"};
  std::set<int> taken;
  for (int d = 0; d < 3; ++d) {
    for (int g : Distinct(rng, n, counts[d], taken)) {
      const double factor = Draw(rng, plan.min_factor, plan.max_factor);
      if (d != 1) send[static_cast<size_t>(g)] = factor;
      if (d != 0) receive[static_cast<size_t>(g)] = factor;
      out.planted.push_back(
          {kind, racks ? SyntheticRackName(g) : SyntheticNodeName(g), words[d], factor});
    }
  }
}

// Links between healthy nodes, and across racks only between racks with a healthy switch, so
// that nothing named before explains them.
inline void PlantLinks(Rng& rng, const SyntheticPlan& plan, const std::vector<int>& rack_of,
                       const std::vector<std::pair<int, int>>& measured, Factors& f,
                       SyntheticPairs& out) {
  auto healthy = [&](int v) {
    const auto r = static_cast<size_t>(rack_of[static_cast<size_t>(v)]);
    return f.send[static_cast<size_t>(v)] == 1 && f.receive[static_cast<size_t>(v)] == 1 &&
           (f.rack_send.empty() || (f.rack_send[r] == 1 && f.rack_receive[r] == 1));
  };
  std::set<int> used;
  for (int l = 0; l < plan.links_one_way + plan.links_both; ++l) {
    for (int tries = 0; tries < 1000; ++tries) {
      auto [a, b] = measured[rng.Below(measured.size())];
      if (rng.Bernoulli(0.5)) std::swap(a, b);
      if (!healthy(a) || !healthy(b) || used.count(a) || used.count(b)) continue;
      used.insert(a);
      used.insert(b);
      const double factor = Draw(rng, plan.min_factor, plan.max_link_factor);
      const bool both = l >= plan.links_one_way;
      f.link[{a, b}] = factor;
      if (both) f.link[{b, a}] = factor;
      const std::string an = SyntheticNodeName(a), bn = SyntheticNodeName(b);
      out.planted.push_back({CulpritKind::kLink, fmt::format("{}-{}", an, bn),
                             both ? "both" : fmt::format("{}->{}", an, bn), factor});
      break;
    }
  }
}

}  // namespace synthetic_internal

// Measures every pair of `measured` in both directions. The value of a -> b is the healthy value
// of its kind times the factors of a's sending, b's receiving, (across racks) a's rack sending
// and b's rack receiving, and the link a -> b, times exp(N(0, noise_sd)).
inline SyntheticPairs MakeSyntheticPairs(const SyntheticShape& shape, const SyntheticPlan& plan,
                                         const std::vector<std::pair<int, int>>& measured) {
  namespace si = synthetic_internal;
  SyntheticPairs out;
  Rng rng(shape.seed, 0);
  std::vector<int> rack_of;
  for (const PatternHost& h : SyntheticHosts(shape)) {
    out.set.nodes.push_back(h.name);
    if (shape.racks > 0) out.set.racks.push_back(h.rack);
    rack_of.push_back(shape.racks > 0 ? std::stoi(h.rack.substr(4)) : 0);
  }
  out.set.higher_is_better = !shape.latency;
  const auto n = static_cast<size_t>(shape.nodes);
  si::Factors f{std::vector<double>(n, 1.0), std::vector<double>(n, 1.0), {}, {}, {}};
  if (shape.racks > 0) {
    f.rack_send.assign(static_cast<size_t>(shape.racks), 1.0);
    f.rack_receive.assign(static_cast<size_t>(shape.racks), 1.0);
    si::PlantGroups(rng, plan, shape.racks, true, f, out);
  }
  si::PlantGroups(rng, plan, shape.nodes, false, f, out);
  si::PlantLinks(rng, plan, rack_of, measured, f, out);
  out.set.pairs.reserve(measured.size() * 2);
  for (const auto& [x, y] : measured) {
    for (const auto& [a, b] : {std::pair{x, y}, std::pair{y, x}}) {
      const auto ra = static_cast<size_t>(rack_of[static_cast<size_t>(a)]);
      const auto rb = static_cast<size_t>(rack_of[static_cast<size_t>(b)]);
      double speed =
          shape.intra * f.send[static_cast<size_t>(a)] * f.receive[static_cast<size_t>(b)];
      if (ra != rb) speed *= shape.inter_share * f.rack_send[ra] * f.rack_receive[rb];
      if (auto it = f.link.find({a, b}); it != f.link.end()) speed *= it->second;
      speed *= std::exp(rng.Normal(0, shape.noise_sd));
      out.set.pairs.push_back({a, b, shape.latency ? 1.0 / speed : speed});
    }
  }
  return out;
}

}  // namespace vigil::cluster
