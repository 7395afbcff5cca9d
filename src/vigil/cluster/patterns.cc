#include "vigil/cluster/patterns.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>

namespace vigil::cluster {
namespace {

struct PatternEntry {
  Pattern pattern;
  std::string_view name;
};

constexpr std::array<PatternEntry, 5> kPatterns = {{
    {Pattern::kAllNodes, "all-nodes"},
    {Pattern::kPairWise, "pair-wise"},
    {Pattern::kRing, "ring"},
    {Pattern::kKBatch, "k-batch"},
    {Pattern::kTopology, "topology"},
}};

std::vector<int> Iota(int n) {
  std::vector<int> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = i;
  return v;
}

std::vector<Round> AllNodes(int n) { return {Round{Iota(n)}}; }

std::vector<Round> PairWise(int n) {
  std::vector<Round> rounds;
  const int count = PairWiseRounds(n);
  rounds.reserve(static_cast<size_t>(count));
  for (int r = 0; r < count; ++r) {
    Round round;
    for (const auto& [a, b] : PairWiseRound(n, r)) round.push_back({a, b});
    rounds.push_back(std::move(round));
  }
  return rounds;
}

// The ring's n edges (i, i+1) coloured into rounds: alternate edges for an even ring; for an odd
// ring the last edge (n-1, 0) meets both host 0 and host n-1 and needs a third round.
std::vector<Round> Ring(int n) {
  if (n == 2) return {Round{{0, 1}}};
  const int alternating = n % 2 == 0 ? n : n - 1;
  std::vector<Round> rounds(n % 2 == 0 ? 2 : 3);
  for (int i = 0; i < alternating; ++i) {
    rounds[static_cast<size_t>(i % 2)].push_back({i, (i + 1) % n});
  }
  if (n % 2 == 1) rounds[2].push_back({n - 1, 0});
  return rounds;
}

std::vector<Round> KBatch(int n, int k) {
  Round round;
  for (int start = 0; start < n; start += k) {
    std::vector<int> group;
    for (int i = start; i < std::min(n, start + k); ++i) group.push_back(i);
    if (group.size() == 1 && !round.empty()) {
      round.back().push_back(group.front());  // a lone host measures nothing on its own
    } else {
      round.push_back(std::move(group));
    }
  }
  return {round};
}

// The hosts of each rack, racks in the order of their first host.
std::vector<std::vector<int>> RackMembers(const std::vector<PatternHost>& hosts) {
  std::map<std::string, size_t> index;
  std::vector<std::vector<int>> racks;
  for (size_t i = 0; i < hosts.size(); ++i) {
    auto [it, added] = index.emplace(hosts[i].rack, racks.size());
    if (added) racks.emplace_back();
    racks[it->second].push_back(static_cast<int>(i));
  }
  return racks;
}

// Pair-wise inside every rack at once: round t holds round t of every rack that has one.
std::vector<Round> IntraRack(const std::vector<std::vector<int>>& racks) {
  int count = 0;
  for (const auto& members : racks) {
    count = std::max(count, PairWiseRounds(static_cast<int>(members.size())));
  }
  std::vector<Round> rounds(static_cast<size_t>(count));
  for (const auto& members : racks) {
    const int size = static_cast<int>(members.size());
    for (int t = 0; t < PairWiseRounds(size); ++t) {
      for (const auto& [a, b] : PairWiseRound(size, t)) {
        rounds[static_cast<size_t>(t)].push_back(
            {members[static_cast<size_t>(a)], members[static_cast<size_t>(b)]});
      }
    }
  }
  return rounds;
}

// The rack-level tournament (pair-wise over racks: every pair of racks in one of its matchings),
// `per_round` matchings at a time. A rack meets `per_round` other racks in a round, so it splits
// its hosts into that many blocks; a cursor per rack moves the blocks on from round to round, so
// that the hosts of a rack larger than the blocks take turns.
std::vector<Round> CrossRackTournament(const std::vector<std::vector<int>>& racks, int per_round) {
  const int rack_count = static_cast<int>(racks.size());
  const int matchings = PairWiseRounds(rack_count);
  std::vector<size_t> cursor(racks.size(), 0);
  std::vector<Round> rounds;
  for (int first = 0; first < matchings; first += per_round) {
    const int in_round = std::min(per_round, matchings - first);
    Round round;
    for (int slot = 0; slot < in_round; ++slot) {
      for (const auto& [x, y] : PairWiseRound(rack_count, first + slot)) {
        const auto& rx = racks[static_cast<size_t>(x)];
        const auto& ry = racks[static_cast<size_t>(y)];
        const size_t bx = rx.size() / static_cast<size_t>(in_round);
        const size_t by = ry.size() / static_cast<size_t>(in_round);
        const auto s = static_cast<size_t>(slot);
        for (size_t i = 0; i < std::min(bx, by); ++i) {
          round.push_back({rx[(cursor[static_cast<size_t>(x)] + s * bx + i) % rx.size()],
                           ry[(cursor[static_cast<size_t>(y)] + s * by + i) % ry.size()]});
        }
      }
    }
    for (size_t r = 0; r < racks.size(); ++r) {
      cursor[r] += racks[r].size() / static_cast<size_t>(in_round) * static_cast<size_t>(in_round);
    }
    rounds.push_back(std::move(round));
  }
  return rounds;
}

// A host of another rack than `rack`, free in a round (busy), preferring one that has no cross-rack
// pair yet (so that one pair covers two hosts); -1 when there is none.
int FreePartner(const std::vector<int>& rack_of, const std::vector<char>& busy,
                const std::vector<char>& covered, int rack) {
  int any = -1;
  for (size_t v = 0; v < rack_of.size(); ++v) {
    if (busy[v] || rack_of[v] == rack) continue;
    if (!covered[v]) return static_cast<int>(v);
    if (any < 0) any = static_cast<int>(v);
  }
  return any;
}

// Gives every host that the tournament left out (racks of unequal sizes) a cross-rack pair: in
// the first round where it and a partner are both free, else in a new round.
void CoverEveryHost(const std::vector<std::vector<int>>& racks, std::vector<Round>& rounds) {
  size_t n = 0;
  for (const auto& members : racks) n += members.size();
  std::vector<int> rack_of(n);
  for (size_t r = 0; r < racks.size(); ++r) {
    for (int h : racks[r]) rack_of[static_cast<size_t>(h)] = static_cast<int>(r);
  }
  std::vector<char> covered(n, 0);
  std::vector<std::vector<char>> busy;
  for (const Round& round : rounds) {
    busy.emplace_back(n, 0);
    for (const auto& pair : round) {
      for (int h : pair) covered[static_cast<size_t>(h)] = busy.back()[static_cast<size_t>(h)] = 1;
    }
  }
  for (size_t u = 0; u < n; ++u) {
    for (size_t r = 0; !covered[u]; ++r) {
      if (r == rounds.size()) {
        rounds.emplace_back();
        busy.emplace_back(n, 0);
      }
      if (busy[r][u]) continue;
      const int v = FreePartner(rack_of, busy[r], covered, rack_of[u]);
      if (v < 0) continue;
      rounds[r].push_back({static_cast<int>(u), v});
      covered[u] = covered[static_cast<size_t>(v)] = busy[r][u] = busy[r][static_cast<size_t>(v)] =
          1;
    }
  }
}

std::vector<Round> Topology(const std::vector<PatternHost>& hosts) {
  const auto racks = RackMembers(hosts);
  std::vector<Round> rounds = IntraRack(racks);
  if (racks.size() < 2) return rounds;
  size_t smallest = racks.front().size();
  for (const auto& members : racks) smallest = std::min(smallest, members.size());
  // As many rack matchings in a round as the smallest rack has hosts: each of its hosts meets
  // a different rack, and the cross-rack rounds are ceil(matchings / smallest rack).
  const int per_round =
      std::min(static_cast<int>(smallest), PairWiseRounds(static_cast<int>(racks.size())));
  std::vector<Round> cross = CrossRackTournament(racks, per_round);
  CoverEveryHost(racks, cross);
  for (Round& round : cross) rounds.push_back(std::move(round));
  return rounds;
}

}  // namespace

Result<Pattern> ParsePattern(std::string_view text) {
  std::string choices;
  for (const PatternEntry& e : kPatterns) {
    if (e.name == text) return e.pattern;
    choices += choices.empty() ? "" : ", ";
    choices += e.name;
  }
  return Status::InvalidArgument(
      fmt::format("unknown pattern \"{}\": the choices are {}", text, choices));
}

std::string_view PatternName(Pattern p) {
  for (const PatternEntry& e : kPatterns) {
    if (e.pattern == p) return e.name;
  }
  return "unknown";
}

int PairWiseRounds(int n) {
  if (n < 2) return 0;
  return n % 2 == 0 ? n - 1 : n;
}

std::vector<std::pair<int, int>> PairWiseRound(int n, int r) {
  // The circle method: m hosts turn around a circle (m odd); in round r, host r meets the fixed
  // host n-1 (even n) or sits out (odd n), and the hosts at distance k on either side of it meet.
  const int m = n % 2 == 0 ? n - 1 : n;
  std::vector<std::pair<int, int>> pairs;
  pairs.reserve(static_cast<size_t>(n / 2));
  if (n % 2 == 0) pairs.emplace_back(r, n - 1);
  for (int k = 1; k <= (m - 1) / 2; ++k) {
    const int a = (r + k) % m;
    const int b = (r - k + m) % m;
    pairs.emplace_back(std::min(a, b), std::max(a, b));
  }
  return pairs;
}

Result<std::vector<Round>> Schedule(Pattern p, const std::vector<PatternHost>& hosts,
                                    const PatternOptions& o) {
  const int n = static_cast<int>(hosts.size());
  if (n < 2) {
    return Status::InvalidArgument(
        fmt::format("a pattern needs at least 2 hosts, the host list has {}", n));
  }
  switch (p) {
    case Pattern::kAllNodes:
      return AllNodes(n);
    case Pattern::kPairWise:
      return PairWise(n);
    case Pattern::kRing:
      return Ring(n);
    case Pattern::kKBatch:
      if (o.k < 2) {
        return Status::InvalidArgument(fmt::format("k-batch needs k >= 2, got {}", o.k));
      }
      return KBatch(n, o.k);
    case Pattern::kTopology:
      for (const PatternHost& h : hosts) {
        if (h.rack.empty()) {
          return Status::InvalidArgument(
              fmt::format("the topology pattern needs a rack for every host; {} has none", h.name));
        }
      }
      return Topology(hosts);
  }
  return Status::Internal("unknown pattern");
}

}  // namespace vigil::cluster
