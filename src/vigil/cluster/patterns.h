// Which nodes test the interconnect with which, round by round (docs/multinode.md, "Patterns").
//
// A multi-node benchmark runs in rounds: in each round, disjoint groups of hosts measure at the
// same time, so that no host takes part in two measurements at once and a round's figures do not
// disturb each other. The patterns are SuperBench's (all-nodes, pair-wise, ring, k-batch,
// topology-aware); this file only decides who meets whom, it launches nothing.
//
// Pure functions: no I/O, no state, thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vigil/core/status.h"

namespace vigil::cluster {

enum class Pattern { kAllNodes, kPairWise, kRing, kKBatch, kTopology };

// "all-nodes", "pair-wise", "ring", "k-batch" or "topology". Errors: InvalidArgument naming the
// choices for any other text.
Result<Pattern> ParsePattern(std::string_view text);
// The name ParsePattern reads.
std::string_view PatternName(Pattern p);

struct PatternHost {
  std::string name;  // the host's name, as the host list gives it
  std::string rack;  // its rack (switch) label; "" when the host list has none
};

// A round: groups of host indices (into the host list) that run at the same time. The groups of
// a round are disjoint. Pair patterns give groups of exactly two; all-nodes and k-batch give
// larger groups (a collective).
using Round = std::vector<std::vector<int>>;

struct PatternOptions {
  int k = 2;  // k-batch's group size; at least 2
};

// The rounds of pattern `p` over `hosts`:
//   all-nodes  one round, one group of every host;
//   pair-wise  every unordered pair exactly once: n-1 rounds of n/2 pairs for even n, n rounds of
//              (n-1)/2 pairs for odd n (one host sits out each round);
//   ring       host i with host i+1 (mod n) as rounds of disjoint pairs: one round for n = 2, two
//              for even n, three for odd n;
//   k-batch    one round of consecutive groups of k hosts; the last group keeps the remainder,
//              and a remainder of one joins the group before it (a group of one measures nothing);
//   topology   pair-wise inside every rack, racks in parallel, then rounds across racks in which
//              every pair of racks meets through at least one pair of hosts and every host takes
//              part in at least one cross-rack pair (patterns.cc, docs/multinode.md). With one
//              rack it is pair-wise.
// Pairs of pair-wise hold the smaller index first; ring's are (i, i+1 mod n).
// Errors: InvalidArgument for fewer than 2 hosts, k < 2, or topology with a host without a rack.
// Pair-wise holds n(n-1)/2 pairs: use PairWiseRound for thousands of hosts.
Result<std::vector<Round>> Schedule(Pattern p, const std::vector<PatternHost>& hosts,
                                    const PatternOptions& o);

// The number of rounds of pair-wise on n hosts: n-1 for even n, n for odd n; 0 for n < 2.
int PairWiseRounds(int n);

// Round r of pair-wise on n hosts (the circle method: host n-1, or a missing host n for odd n,
// stays put while the others turn), built alone, in O(n), so that 10,000 hosts never hold all
// 50 million pairs at once. Pairs hold the smaller index first.
// REQUIRES: n >= 2, 0 <= r < PairWiseRounds(n).
std::vector<std::pair<int, int>> PairWiseRound(int n, int r);

}  // namespace vigil::cluster
