#include "vigil/cluster/localise.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "vigil/cluster/patterns.h"
#include "vigil/cluster/synthetic_pairs.h"

namespace vigil::cluster {
namespace {

// What a culprit says, with a link slow both ways under one name whatever the order of its ends.
using Named = std::tuple<CulpritKind, std::string, std::string>;

Named Normalised(CulpritKind kind, const std::string& subject, const std::string& direction) {
  if (kind != CulpritKind::kLink || direction != "both") return {kind, subject, direction};
  const size_t dash = subject.find('-');
  std::string a = subject.substr(0, dash), b = subject.substr(dash + 1);
  if (b < a) std::swap(a, b);
  return {kind, a + "-" + b, direction};
}

std::set<Named> NamedOf(const std::vector<Culprit>& culprits) {
  std::set<Named> out;
  for (const Culprit& c : culprits) out.insert(Normalised(c.kind, c.subject, c.direction));
  return out;
}

std::string Describe(const std::vector<Culprit>& culprits) {
  std::string s;
  for (const Culprit& c : culprits) s += c.subject + " " + c.direction + ": " + c.evidence + "\n";
  return s;
}

// Every directed pair of n nodes "n0".."n{n-1}" at `value`, then `edit` applied to each.
PairSet AllPairs(int n, double value, const std::function<double(int, int, double)>& edit) {
  PairSet set;
  for (int i = 0; i < n; ++i) set.nodes.push_back("n" + std::to_string(i));
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      if (a != b) set.pairs.push_back({a, b, edit(a, b, value)});
    }
  }
  return set;
}

std::vector<Culprit> LocaliseOk(const PairSet& set, const LocaliseOptions& o = {}) {
  auto result = Localise(set, o);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? *result : std::vector<Culprit>{};
}

struct PlantedCase {
  Pattern pattern;
  double noise_sd;
};

class LocalisePlantedTest : public ::testing::TestWithParam<PlantedCase> {};

// 1,024 nodes in 32 racks, with two bad nodes of each direction, two one-way and two two-way
// links, and a bad switch of each direction. The factors' upper bounds are where one pair's noise
// stops hiding them (docs/multinode.md): with 20% noise a node at 0.4 of expected has one pair in
// eight above slow_ratio, and a link must be beyond the noise of a million pairs.
TEST_P(LocalisePlantedTest, NamesEveryPlantedCulpritAndNothingElse) {
  const PlantedCase& param = GetParam();
  const bool noisy = param.noise_sd > 0.1;
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    SyntheticShape shape{.nodes = 1024, .racks = 32, .noise_sd = param.noise_sd, .seed = seed};
    SyntheticPlan plan = kEveryKindPlan;
    plan.max_factor = noisy ? 0.3 : 0.4;
    plan.max_link_factor = noisy ? 0.15 : 0.4;
    auto rounds = Schedule(param.pattern, SyntheticHosts(shape), {});
    ASSERT_TRUE(rounds.ok());
    const SyntheticPairs data = MakeSyntheticPairs(shape, plan, PairsOf(*rounds));
    const std::vector<Culprit> culprits = LocaliseOk(data.set);
    std::set<Named> expected;
    for (const PlantedCulprit& p : data.planted) {
      expected.insert(Normalised(p.kind, p.subject, p.direction));
    }
    ASSERT_EQ(data.planted.size(), 3u + 6u + 4u);
    EXPECT_EQ(NamedOf(culprits), expected) << Describe(culprits);
    for (const PlantedCulprit& p : data.planted) {
      for (const Culprit& c : culprits) {
        if (Normalised(c.kind, c.subject, c.direction) !=
            Normalised(p.kind, p.subject, p.direction)) {
          continue;
        }
        // The ratio measures the planted slowdown, within the noise of one pair.
        EXPECT_NEAR(std::log(c.ratio), std::log(p.factor), 5 * param.noise_sd) << c.evidence;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    PatternsAndNoise, LocalisePlantedTest,
    ::testing::Values(PlantedCase{Pattern::kPairWise, 0.05}, PlantedCase{Pattern::kPairWise, 0.2},
                      PlantedCase{Pattern::kTopology, 0.05}, PlantedCase{Pattern::kTopology, 0.2}),
    [](const ::testing::TestParamInfo<PlantedCase>& test) {
      return std::string(test.param.pattern == Pattern::kPairWise ? "PairWise" : "Topology") +
             (test.param.noise_sd > 0.1 ? "Noise20" : "Noise5");
    });

TEST(LocaliseTest, NoiseAloneNamesNothing) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    SyntheticShape shape{.nodes = 1024, .racks = 32, .noise_sd = 0.2, .seed = seed};
    auto rounds = Schedule(Pattern::kPairWise, SyntheticHosts(shape), {});
    ASSERT_TRUE(rounds.ok());
    const auto culprits = LocaliseOk(MakeSyntheticPairs(shape, {}, PairsOf(*rounds)).set);
    EXPECT_TRUE(culprits.empty()) << Describe(culprits);
  }
}

TEST(LocaliseTest, WithoutRacksNodesAndLinksAreNamed) {
  SyntheticShape shape{.nodes = 256, .racks = 0, .seed = 4};
  SyntheticPlan plan{
      .nodes_send = 1, .nodes_receive = 1, .nodes_both = 1, .links_one_way = 1, .links_both = 1};
  auto rounds = Schedule(Pattern::kPairWise, SyntheticHosts(shape), {});
  ASSERT_TRUE(rounds.ok());
  const SyntheticPairs data = MakeSyntheticPairs(shape, plan, PairsOf(*rounds));
  std::set<Named> expected;
  for (const PlantedCulprit& p : data.planted) {
    expected.insert(Normalised(p.kind, p.subject, p.direction));
  }
  EXPECT_EQ(NamedOf(LocaliseOk(data.set)), expected);
}

TEST(LocaliseTest, LatencyIsSlowWhenHigh) {
  SyntheticShape shape{.nodes = 64, .racks = 8, .latency = true, .seed = 2};
  SyntheticPlan plan{.nodes_send = 1, .nodes_receive = 1, .links_one_way = 1, .switches_both = 1};
  auto rounds = Schedule(Pattern::kPairWise, SyntheticHosts(shape), {});
  ASSERT_TRUE(rounds.ok());
  const SyntheticPairs data = MakeSyntheticPairs(shape, plan, PairsOf(*rounds));
  ASSERT_FALSE(data.set.higher_is_better);
  std::set<Named> expected;
  for (const PlantedCulprit& p : data.planted) {
    expected.insert(Normalised(p.kind, p.subject, p.direction));
  }
  const auto culprits = LocaliseOk(data.set);
  EXPECT_EQ(NamedOf(culprits), expected) << Describe(culprits);
  for (const Culprit& c : culprits) EXPECT_LT(c.ratio, 0.5) << c.evidence;  // as speed
}

// Two nodes: each has one partner, so one slow direction cannot tell a node's NIC from the
// cable between them. Below min_pairs partners no node is named: the pair is named as a link.
TEST(LocaliseTest, TwoNodesNameTheLink) {
  auto one_way = AllPairs(2, 100, [](int a, int, double v) { return a == 0 ? 10 : v; });
  auto culprits = LocaliseOk(one_way);
  ASSERT_EQ(culprits.size(), 1u) << Describe(culprits);
  EXPECT_EQ(culprits[0].kind, CulpritKind::kLink);
  EXPECT_EQ(culprits[0].subject, "n0-n1");
  EXPECT_EQ(culprits[0].direction, "n0->n1");
  EXPECT_EQ(culprits[0].slow_pairs, 1);
  EXPECT_EQ(culprits[0].pairs, 1);
  EXPECT_EQ(culprits[0].evidence,
            "slow from n0 to n1 on 1 of 1: median 0.32 of expected; n1 to n0 not slow");

  // Expected is the median of the two (their geometric mean, as speeds are judged in log). Both
  // directions slow alike: no pair is slower than the others, no healthy reference shows them
  // slow (the header's assumption fails) and nothing is named.
  auto both = AllPairs(2, 100, [](int, int, double) { return 10.0; });
  EXPECT_TRUE(LocaliseOk(both).empty());
}

TEST(LocaliseTest, ThreeNodesTellANodeFromALink) {
  // n0 sends slowly to both partners: its NIC or host.
  auto node = LocaliseOk(AllPairs(3, 100, [](int a, int, double v) { return a == 0 ? 5 : v; }));
  ASSERT_EQ(node.size(), 1u) << Describe(node);
  EXPECT_EQ(node[0].kind, CulpritKind::kNode);
  EXPECT_EQ(node[0].subject, "n0");
  EXPECT_EQ(node[0].direction, "send");
  EXPECT_EQ(node[0].evidence, "slow on 2 of 2 pairs when sending: median 0.05 of expected");

  // Only n0 -> n1 is slow: n0 is fine towards n2, n1 fine from n2: the link.
  auto link =
      LocaliseOk(AllPairs(3, 100, [](int a, int b, double v) { return a == 0 && b == 1 ? 5 : v; }));
  ASSERT_EQ(link.size(), 1u) << Describe(link);
  EXPECT_EQ(link[0].kind, CulpritKind::kLink);
  EXPECT_EQ(link[0].direction, "n0->n1");

  // Both ways between n1 and n2: a link slow both ways, named once.
  auto both = LocaliseOk(AllPairs(3, 100, [](int a, int b, double v) {
    return (a == 1 && b == 2) || (a == 2 && b == 1) ? 5 : v;
  }));
  ASSERT_EQ(both.size(), 1u) << Describe(both);
  EXPECT_EQ(both[0].subject, "n1-n2");
  EXPECT_EQ(both[0].direction, "both");
  EXPECT_EQ(both[0].slow_pairs, 2);
  EXPECT_EQ(both[0].pairs, 2);
}

TEST(LocaliseTest, ANodeSlowBothWaysExplainsItsPairsWithoutLinks) {
  auto culprits = LocaliseOk(
      AllPairs(8, 100, [](int a, int b, double v) { return a == 5 || b == 5 ? 20 : v; }));
  ASSERT_EQ(culprits.size(), 1u) << Describe(culprits);
  EXPECT_EQ(culprits[0].kind, CulpritKind::kNode);
  EXPECT_EQ(culprits[0].subject, "n5");
  EXPECT_EQ(culprits[0].direction, "both");
  EXPECT_EQ(culprits[0].slow_pairs, 14);
  EXPECT_EQ(culprits[0].pairs, 14);
  EXPECT_NEAR(culprits[0].ratio, 0.2, 1e-6);
}

TEST(LocaliseTest, AMissingMeasurementChangesOnlyTheCounts) {
  PairSet set = AllPairs(16, 100, [](int a, int b, double v) {
    if (a == 3) return 10.0;            // n3 sends slowly
    if (a == 7 && b == 9) return 10.0;  // one link, one way
    return v;
  });
  std::erase_if(set.pairs, [](const PairMeasure& p) {
    return (p.from == 3 && p.to == 4) || (p.from == 9 && p.to == 7);
  });
  auto culprits = LocaliseOk(set);
  ASSERT_EQ(culprits.size(), 2u) << Describe(culprits);
  EXPECT_EQ(culprits[0].subject, "n3");
  EXPECT_EQ(culprits[0].slow_pairs, 14);
  EXPECT_EQ(culprits[0].pairs, 14);
  EXPECT_EQ(culprits[1].subject, "n7-n9");
  EXPECT_NE(culprits[1].evidence.find("n9 to n7 not measured"), std::string::npos)
      << culprits[1].evidence;
}

TEST(LocaliseTest, ADeadLinkHasRatioZero) {
  auto culprits = LocaliseOk(
      AllPairs(6, 100, [](int a, int b, double v) { return a == 2 && b == 4 ? 0.0 : v; }));
  ASSERT_EQ(culprits.size(), 1u);
  EXPECT_EQ(culprits[0].ratio, 0);
  EXPECT_EQ(culprits[0].direction, "n2->n4");
}

TEST(LocaliseTest, EqualPairsAndNoPairsNameNothing) {
  EXPECT_TRUE(LocaliseOk(AllPairs(12, 42, [](int, int, double v) { return v; })).empty());
  PairSet empty;
  empty.nodes = {"a", "b"};
  EXPECT_TRUE(LocaliseOk(empty).empty());
}

TEST(LocaliseTest, SwitchesThenNodesThenLinksEachBySlowestThenName) {
  // Eight racks of four; rack r1's uplink slow both ways (0.3), r3's slow sending (0.2); node n0
  // slow receiving (0.1), n13 slow sending (0.1); links n8 -> n16 (0.05) and n9 -> n17 (0.3).
  PairSet set = AllPairs(32, 100, [](int a, int b, double v) {
    const int ra = a / 4, rb = b / 4;
    if (ra != rb) v *= 0.8 * (ra == 1 || rb == 1 ? 0.3 : 1) * (ra == 3 ? 0.2 : 1);
    if (b == 0 || a == 13) v *= 0.1;
    if (a == 8 && b == 16) v *= 0.05;
    if (a == 9 && b == 17) v *= 0.3;
    return v;
  });
  for (int i = 0; i < 32; ++i) set.racks.push_back("r" + std::to_string(i / 4));
  auto culprits = LocaliseOk(set);
  std::vector<std::pair<std::string, std::string>> got;
  for (const Culprit& c : culprits) got.emplace_back(c.subject, c.direction);
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"r3", "send"},  {"r1", "both"},        {"n0", "receive"},
      {"n13", "send"}, {"n8-n16", "n8->n16"}, {"n9-n17", "n9->n17"}};
  EXPECT_EQ(got, expected) << Describe(culprits);
  // r1 explains most pairs and is named first: r3's pairs towards r1 are already explained.
  EXPECT_EQ(culprits[0].evidence,
            "slow on 96 of 96 cross-rack pairs when sending: median 0.2 of expected");
}

TEST(LocaliseNetworkTest, BandwidthThenLatencyThenEachRailOnItsOwn) {
  // Six nodes: n1 sends slowly over TCP, n4's latency is high, and on RDMA n2 is slow on rail
  // "NIC 1" only and n5's latency high on rail "NIC 0" only (its bandwidth there is fine); "NIC 2"
  // has no pairs.
  const auto slow_node = [](int node, double factor) {
    return
        [node, factor](int a, int b, double v) { return a == node || b == node ? v * factor : v; };
  };
  NetworkPairs pairs;
  const PairSet tcp = AllPairs(6, 10, [](int a, int, double v) { return a == 1 ? v / 10 : v; });
  pairs.nodes = tcp.nodes;
  pairs.bandwidth = tcp.pairs;
  pairs.latency = AllPairs(6, 5, slow_node(4, 8)).pairs;
  pairs.rdma = {
      {"NIC 0", AllPairs(6, 200, slow_node(-1, 1)).pairs, AllPairs(6, 2, slow_node(5, 4)).pairs},
      {"NIC 1", AllPairs(6, 200, slow_node(2, 0.25)).pairs, AllPairs(6, 2, slow_node(-1, 1)).pairs},
      {"NIC 2", {}, {}}};
  const Result<std::vector<NamedCulprit>> named = LocaliseNetwork(pairs);
  ASSERT_TRUE(named.ok()) << named.status().ToString();
  ASSERT_EQ(named->size(), 4u);
  EXPECT_EQ((*named)[0].measure, "bandwidth");
  EXPECT_EQ((*named)[0].culprit.subject, "n1");
  EXPECT_EQ((*named)[0].culprit.direction, "send");
  EXPECT_EQ((*named)[1].measure, "latency");
  EXPECT_EQ((*named)[1].culprit.subject, "n4");
  EXPECT_EQ((*named)[2].measure, "rdma latency NIC 0");
  EXPECT_EQ((*named)[2].culprit.subject, "n5");
  EXPECT_EQ((*named)[2].culprit.direction, "both");
  EXPECT_EQ((*named)[3].measure, "rdma NIC 1");
  EXPECT_EQ((*named)[3].culprit.subject, "n2");
  EXPECT_EQ((*named)[3].culprit.direction, "both");
  EXPECT_EQ(CulpritJson((*named)[3])["measure"], "rdma NIC 1");

  pairs.rdma[1].bandwidth.push_back({0, 9, 1});  // a node out of range: the rail's error
  EXPECT_EQ(LocaliseNetwork(pairs).status().code(), StatusCode::kInvalidArgument);
}

TEST(LocaliseTest, BadInputIsInvalidArgument) {
  const PairSet good = AllPairs(3, 1, [](int, int, double v) { return v; });
  auto expect_invalid = [](const PairSet& set, const LocaliseOptions& o, const char* what) {
    auto r = Localise(set, o);
    ASSERT_FALSE(r.ok()) << what;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << what;
  };
  for (PairMeasure bad :
       {PairMeasure{0, 3, 1}, PairMeasure{-1, 0, 1}, PairMeasure{1, 1, 1}, PairMeasure{0, 1, -1},
        PairMeasure{0, 1, std::numeric_limits<double>::quiet_NaN()},
        PairMeasure{0, 1, std::numeric_limits<double>::infinity()}}) {
    PairSet set = good;
    set.pairs.push_back(bad);
    expect_invalid(set, {}, "bad pair");
  }
  PairSet racks = good;
  racks.racks = {"r0", "r1"};
  expect_invalid(racks, {}, "racks not one per node");
  expect_invalid(good, LocaliseOptions{.slow_ratio = 1.5}, "slow_ratio");
  expect_invalid(good, LocaliseOptions{.share = 0}, "share");
  expect_invalid(good, LocaliseOptions{.min_pairs = 0}, "min_pairs");
  expect_invalid(good, LocaliseOptions{.link_false_rate = 0}, "link_false_rate");
}

}  // namespace
}  // namespace vigil::cluster
