#include "vigil/cluster/patterns.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "vigil/cluster/synthetic_pairs.h"

namespace vigil::cluster {
namespace {

std::vector<PatternHost> Hosts(int n) {
  std::vector<PatternHost> hosts;
  for (int i = 0; i < n; ++i) hosts.push_back({"h" + std::to_string(i), ""});
  return hosts;
}

// Hosts in racks of the given sizes, racks named r0, r1...
std::vector<PatternHost> RackedHosts(const std::vector<int>& sizes) {
  std::vector<PatternHost> hosts;
  for (size_t r = 0; r < sizes.size(); ++r) {
    for (int i = 0; i < sizes[r]; ++i) {
      hosts.push_back({"h" + std::to_string(hosts.size()), "r" + std::to_string(r)});
    }
  }
  return hosts;
}

// Every group of every round holds valid indices, and the groups of a round are disjoint.
void ExpectRoundsDisjoint(const std::vector<Round>& rounds, int n) {
  for (size_t r = 0; r < rounds.size(); ++r) {
    std::set<int> seen;
    for (const auto& group : rounds[r]) {
      for (int h : group) {
        ASSERT_GE(h, 0);
        ASSERT_LT(h, n);
        ASSERT_TRUE(seen.insert(h).second) << "host " << h << " twice in round " << r;
      }
    }
  }
}

std::set<std::pair<int, int>> UnorderedPairs(const std::vector<Round>& rounds) {
  std::set<std::pair<int, int>> pairs;
  for (const auto& [a, b] : PairsOf(rounds)) pairs.emplace(std::min(a, b), std::max(a, b));
  return pairs;
}

TEST(PatternsTest, ParsesEveryNameAndRejectsOthersNamingTheChoices) {
  for (Pattern p : {Pattern::kAllNodes, Pattern::kPairWise, Pattern::kRing, Pattern::kKBatch,
                    Pattern::kTopology}) {
    auto parsed = ParsePattern(PatternName(p));
    ASSERT_TRUE(parsed.ok()) << PatternName(p);
    EXPECT_EQ(*parsed, p);
  }
  auto bad = ParsePattern("pairwise");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("all-nodes, pair-wise, ring, k-batch, topology"),
            std::string::npos)
      << bad.status().message();
}

TEST(PatternsTest, PairWiseMeetsEveryPairOnceInDisjointRounds) {
  std::vector<int> sizes;
  for (int n = 2; n <= 65; ++n) sizes.push_back(n);
  sizes.push_back(1024);
  for (int n : sizes) {
    SCOPED_TRACE(n);
    auto rounds = Schedule(Pattern::kPairWise, Hosts(n), {});
    ASSERT_TRUE(rounds.ok());
    EXPECT_EQ(static_cast<int>(rounds->size()), n % 2 == 0 ? n - 1 : n);
    EXPECT_EQ(static_cast<int>(rounds->size()), PairWiseRounds(n));
    ExpectRoundsDisjoint(*rounds, n);
    const auto pairs = PairsOf(*rounds);
    EXPECT_EQ(pairs.size(), static_cast<size_t>(n) * (n - 1) / 2);  // no pair twice...
    EXPECT_EQ(UnorderedPairs(*rounds).size(), pairs.size());        // ...and every pair once
    for (const Round& round : *rounds) {
      EXPECT_EQ(static_cast<int>(round.size()), n / 2);  // a round is as full as it can be
      for (const auto& g : round) {
        ASSERT_EQ(g.size(), 2u);
        EXPECT_LT(g[0], g[1]);
      }
    }
  }
}

TEST(PatternsTest, PairWiseRoundAloneIsTheScheduledRound) {
  auto rounds = Schedule(Pattern::kPairWise, Hosts(9), {});
  ASSERT_TRUE(rounds.ok());
  for (int r = 0; r < PairWiseRounds(9); ++r) {
    const auto pairs = PairWiseRound(9, r);
    ASSERT_EQ(pairs.size(), (*rounds)[static_cast<size_t>(r)].size());
    for (size_t i = 0; i < pairs.size(); ++i) {
      EXPECT_EQ((std::vector<int>{pairs[i].first, pairs[i].second}),
                (*rounds)[static_cast<size_t>(r)][i]);
    }
  }
  EXPECT_EQ(PairWiseRounds(1), 0);
  EXPECT_EQ(PairWiseRounds(10000), 9999);
  EXPECT_EQ(PairWiseRound(10000, 9998).size(), 5000u);
}

TEST(PatternsTest, RingMeetsEachNeighbourOnceInTwoOrThreeRounds) {
  for (int n = 2; n <= 33; ++n) {
    SCOPED_TRACE(n);
    auto rounds = Schedule(Pattern::kRing, Hosts(n), {});
    ASSERT_TRUE(rounds.ok());
    const size_t expected_rounds = n == 2 ? 1 : n % 2 == 0 ? 2 : 3;
    EXPECT_EQ(rounds->size(), expected_rounds);
    ExpectRoundsDisjoint(*rounds, n);
    std::set<std::pair<int, int>> expected;
    for (int i = 0; i < n; ++i)
      expected.emplace(std::min(i, (i + 1) % n), std::max(i, (i + 1) % n));
    EXPECT_EQ(UnorderedPairs(*rounds), expected);
    EXPECT_EQ(PairsOf(*rounds).size(), expected.size());
  }
}

TEST(PatternsTest, AllNodesIsOneCollective) {
  auto rounds = Schedule(Pattern::kAllNodes, Hosts(5), {});
  ASSERT_TRUE(rounds.ok());
  ASSERT_EQ(rounds->size(), 1u);
  EXPECT_EQ((*rounds)[0], (Round{{0, 1, 2, 3, 4}}));
}

TEST(PatternsTest, KBatchGroupsConsecutiveHostsAndALoneRemainderJoinsTheLastGroup) {
  auto batch = [](int n, int k) {
    auto rounds = Schedule(Pattern::kKBatch, Hosts(n), PatternOptions{k});
    EXPECT_TRUE(rounds.ok());
    EXPECT_EQ(rounds->size(), 1u);
    return (*rounds)[0];
  };
  EXPECT_EQ(batch(8, 4), (Round{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(batch(10, 4), (Round{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9}}));
  EXPECT_EQ(batch(9, 4), (Round{{0, 1, 2, 3}, {4, 5, 6, 7, 8}}));
  EXPECT_EQ(batch(3, 2), (Round{{0, 1, 2}}));
  EXPECT_EQ(batch(3, 8), (Round{{0, 1, 2}}));  // fewer hosts than k: one group of all
}

TEST(PatternsTest, BadInputIsRejected) {
  for (Pattern p : {Pattern::kAllNodes, Pattern::kPairWise, Pattern::kRing, Pattern::kKBatch,
                    Pattern::kTopology}) {
    auto one = Schedule(p, RackedHosts({1}), {});
    EXPECT_EQ(one.status().code(), StatusCode::kInvalidArgument) << PatternName(p);
    EXPECT_EQ(Schedule(p, {}, {}).status().code(), StatusCode::kInvalidArgument);
  }
  auto k1 = Schedule(Pattern::kKBatch, Hosts(4), PatternOptions{1});
  EXPECT_EQ(k1.status().code(), StatusCode::kInvalidArgument);
  auto hosts = RackedHosts({2, 2});
  hosts[3].rack = "";
  auto no_rack = Schedule(Pattern::kTopology, hosts, {});
  ASSERT_EQ(no_rack.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(no_rack.status().message().find("h3"), std::string::npos);
}

// The topology pattern's promises: rounds disjoint; every pair inside a rack once; every pair
// of racks through at least one pair of hosts; every host in at least one cross-rack pair.
void ExpectTopologyCovers(const std::vector<PatternHost>& hosts) {
  auto rounds = Schedule(Pattern::kTopology, hosts, {});
  ASSERT_TRUE(rounds.ok());
  const int n = static_cast<int>(hosts.size());
  ExpectRoundsDisjoint(*rounds, n);
  std::set<std::pair<std::string, std::string>> rack_pairs_met;
  std::set<int> crossing;
  std::set<std::pair<int, int>> intra;
  for (const auto& [a, b] : PairsOf(*rounds)) {
    const std::string& ra = hosts[static_cast<size_t>(a)].rack;
    const std::string& rb = hosts[static_cast<size_t>(b)].rack;
    if (ra == rb) {
      EXPECT_TRUE(intra.emplace(std::min(a, b), std::max(a, b)).second) << a << "-" << b;
      continue;
    }
    rack_pairs_met.emplace(std::min(ra, rb), std::max(ra, rb));
    crossing.insert(a);
    crossing.insert(b);
  }
  std::map<std::string, size_t> racks;
  for (const PatternHost& h : hosts) ++racks[h.rack];
  size_t expected_intra = 0;
  for (const auto& [rack, size] : racks) expected_intra += size * (size - 1) / 2;
  EXPECT_EQ(intra.size(), expected_intra);
  EXPECT_EQ(rack_pairs_met.size(), racks.size() * (racks.size() - 1) / 2);
  if (racks.size() > 1) {
    EXPECT_EQ(static_cast<int>(crossing.size()), n);
  }
}

TEST(PatternsTest, TopologyCoversRacksAndHostsForManyShapes) {
  const std::vector<std::vector<int>> shapes = {
      {2, 2},    {1, 1},  {1, 5},          {5, 1, 1},       {3, 3, 3},    {4, 4, 4, 4},
      {2, 7, 3}, {32, 1}, {6, 5, 6, 5, 6}, {1, 1, 1, 1, 1}, {9, 2, 2, 9}, {16, 16, 16, 15},
  };
  for (const auto& sizes : shapes) {
    SCOPED_TRACE(::testing::PrintToString(sizes));
    ExpectTopologyCovers(RackedHosts(sizes));
  }
}

TEST(PatternsTest, TopologyOnEqualRacksTakesRackRoundsPlusCeilOfRackMatchingsOverRackSize) {
  // 1,024 hosts in 32 racks of 32: 31 rounds inside the racks, one across.
  SyntheticShape shape{.nodes = 1024, .racks = 32};
  auto rounds = Schedule(Pattern::kTopology, SyntheticHosts(shape), {});
  ASSERT_TRUE(rounds.ok());
  EXPECT_EQ(rounds->size(), 31u + 1u);
  ExpectTopologyCovers(SyntheticHosts(shape));
  // 64 hosts in 16 racks of 4: 3 inside, ceil(15 / 4) = 4 across.
  rounds = Schedule(Pattern::kTopology, RackedHosts(std::vector<int>(16, 4)), {});
  ASSERT_TRUE(rounds.ok());
  EXPECT_EQ(rounds->size(), 3u + 4u);
  ExpectTopologyCovers(RackedHosts(std::vector<int>(16, 4)));
  // One rack: pair-wise.
  rounds = Schedule(Pattern::kTopology, RackedHosts({6}), {});
  ASSERT_TRUE(rounds.ok());
  EXPECT_EQ(rounds->size(), 5u);
  EXPECT_EQ(PairsOf(*rounds).size(), 15u);
}

TEST(PatternsTest, TopologyOnTenThousandHostsIn320Racks) {
  SyntheticShape shape{.nodes = 10000, .racks = 320};
  const auto hosts = SyntheticHosts(shape);
  auto rounds = Schedule(Pattern::kTopology, hosts, {});
  ASSERT_TRUE(rounds.ok());
  // Racks of 31 and 32: 31 rounds inside; 319 rack matchings, 31 a round: 11 across.
  EXPECT_EQ(rounds->size(), 31u + 11u);
  ExpectTopologyCovers(hosts);
}

}  // namespace
}  // namespace vigil::cluster
