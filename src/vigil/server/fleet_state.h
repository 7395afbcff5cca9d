// The fleet's latest state in memory, for /metrics and the dashboard's fleet page: every node's
// latest verdict and the gauges over them (nodes by verdict, failing components by kind), kept up
// to date by the fleet service as it writes the store, so that a scrape or a page reads no row of
// the store. The store stays the truth: the state is loaded from it at start (Reset) and follows
// each write that succeeded.
//
// Cost (docs/serve.md): one entry per node ever seen, retired ones included (about 300 bytes for
// a node of 8 GPUs); each update is O(log nodes); a snapshot copies the nodes it returns.
// Thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vigil/core/mutex.h"
#include "vigil/results/verdict.h"
#include "vigil/server/limits.h"
#include "vigil/store/store.h"

namespace vigil::server {

// Nodes in the fleet (retired ones left out) by their latest verdict, and the components their
// latest verdicts name defective, by kind ("GPU", "NIC", ...).
struct FleetGauges {
  std::array<int64_t, 3> by_verdict{};          // indexed by Verdict
  std::map<std::string, int64_t> by_component;  // kinds with a count of 0 are left out
  int64_t Nodes(Verdict v) const { return by_verdict[static_cast<size_t>(v)]; }
};

// A node as the dashboard ranks it: its latest state and its value nearest a learned limit.
struct RankedNode {
  store::NodeState node;
  NearestLimit nearest;  // not known while no criteria judge the node's class
};

// The worst first: defective, then unjudged, then healthy; within each, the node nearest its limit
// (or furthest beyond it) first, nodes with none known last; then by name. A strict weak order.
bool WorseFirst(const RankedNode& a, const RankedNode& b);

// Whether `search` is in the node's name, its hardware class or a failing component's name,
// ignoring ASCII case; an empty search matches every node.
bool MatchesSearch(const store::NodeState& node, std::string_view search);

// One page of the fleet, as the dashboard asks for it.
struct FleetQuery {
  store::NodeFilter filter;  // by verdict and hardware class; retired nodes or those in the fleet
  std::string search;        // MatchesSearch; "" for every node
  size_t page = 0;           // 0 for the first; past the last, the last
  size_t per_page = 100;     // REQUIRES: > 0
};

struct FleetRanking {
  std::vector<RankedNode> nodes;  // the page's, worst first (WorseFirst)
  size_t matched = 0;             // nodes that passed the filter and the search, on every page
  size_t page = 0;                // the page shown (0 for the first)
  size_t pages = 0;               // pages in all; 0 when nothing matched
  FleetGauges gauges;             // over the whole fleet, whatever the query
};

struct FleetSnapshot {
  std::vector<store::NodeState> nodes;  // those that passed the filter, ordered by node
  FleetGauges gauges;                   // over the whole fleet, whatever the filter
};

class FleetState {
 public:
  // Replaces the whole state with `nodes`: every node of the store, retired ones included.
  void Reset(const std::vector<store::NodeState>& nodes);

  // An upload stored (not a repeated one): it becomes its node's latest, brings a retired node
  // back, and counts one more upload, unless a later upload of the node is known already (two
  // requests committed in one order may report in the other).
  void Uploaded(const store::Upload& upload);

  // A stored upload of `node` judged again: its node follows while the upload is its latest.
  void Rejudged(std::string_view node, const store::VerdictUpdate& verdict);

  // A node retired at `when` (a retired node keeps its first time), or renamed.
  void Retired(std::string_view node, double when);
  void Renamed(std::string_view from, std::string_view to);

  // The node's value nearest its learned limit, found in its upload `upload` (store::Upload::id):
  // kept while that upload is the node's latest, ignored when it is not.
  void Nearest(std::string_view node, int64_t upload, NearestLimit nearest);

  // How many nodes the fleet has (retired ones left out).
  size_t InFleet() const;

  // The nodes that pass `filter`, ordered by node as the store orders them, and the gauges.
  FleetSnapshot Snapshot(const store::NodeFilter& filter) const;

  // The page `query` asks for, of the nodes that pass its filter and search ranked worst first.
  // Orders the matching nodes up to the page shown (partial sort) and copies the page's only.
  FleetRanking Ranked(const FleetQuery& query) const;

 private:
  // Adds (+1) or takes away (-1) a node's share of the gauges; none for a retired node.
  void Count(const store::NodeState& node, int sign) REQUIRES(mu_);

  mutable Mutex mu_;
  std::map<std::string, RankedNode, std::less<>> nodes_ GUARDED_BY(mu_);
  FleetGauges gauges_ GUARDED_BY(mu_);
};

}  // namespace vigil::server
