// From the measured pairs of a multi-node benchmark to the culprit (docs/multinode.md,
// "Localisation"): a switch (a rack slow with the racks beyond it), a node (slow with every
// partner: its NIC or its host), or a link (one pair, one cable or port).
//
// The assumption: most pairs are healthy. More than half of the pairs of each kind (inside a
// rack, across racks) measure what a healthy pair measures, so that their median is the
// expected value; a fabric where most pairs are slow has no healthy reference, and nothing in it
// is named slow.
//
// Pure: data in, culprits out; no I/O, no state, thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "vigil/core/json.h"
#include "vigil/core/status.h"

namespace vigil::cluster {

// One measurement of a directed pair: `from` sent to `to` (indices into PairSet::nodes).
struct PairMeasure {
  int from = 0;
  int to = 0;
  double value = 0;  // bandwidth or latency, any unit, the same for every pair; >= 0
};

struct PairSet {
  std::vector<std::string> nodes;  // index -> node name
  std::vector<std::string> racks;  // empty, or one rack (switch) label per node
  // Any subset of the directed pairs (sparse: 10,000 nodes); a pair measured twice counts twice.
  std::vector<PairMeasure> pairs;
  bool higher_is_better = true;  // bandwidth; false for latency
};

enum class CulpritKind { kNode, kLink, kSwitch };

struct Culprit {
  CulpritKind kind = CulpritKind::kNode;
  // The node's name; "a-b" for a link (the names in the order the slow direction was measured;
  // for a link slow both ways, the order of its first measurement); the rack label for a switch.
  std::string subject;
  // node: "send", "receive" or "both"; link: "a->b", "b->a" or "both"; switch: "send" (traffic
  // leaving the rack), "receive" (entering it) or "both".
  std::string direction;
  // The median over its slow pairs of measured / expected, as speed: 0.1 is 10x slower (for
  // latency, expected / measured).
  double ratio = 1;
  int slow_pairs = 0;  // how many of its measured pairs in `direction` were slow
  int pairs = 0;       // of how many
  // One readable sentence, e.g. "slow with 5 of 5 partners when sending: median 0.08 of expected".
  std::string evidence;
};

struct LocaliseOptions {
  // A pair is slow below this share of its expected speed (for latency: above expected / it).
  double slow_ratio = 0.5;
  // A switch or node is named when at least this share of its pairs in a direction are slow.
  double share = 0.75;
  // ... and it has at least this many pairs in that direction (so two nodes alone, one partner
  // each, name a link: one slow direction cannot tell a node from its link).
  int min_pairs = 2;
  // A link rests on one pair, which noise alone can make slow: a link is named only when its pair
  // is also too slow for the noise of its kind's pairs (their MAD, in log) to explain, at a level
  // where all the measured pairs together wrongly name this many links on average.
  double link_false_rate = 0.001;
};

// Names the fewest causes that explain the slow pairs, most general first: switches (racks) with
// at least `share` of their cross-rack pairs slow in a direction, one at a time, the one that
// explains most first; then nodes with at least `share` of their pairs not yet explained slow in
// a direction (and at least min_pairs of them); then every remaining slow pair that noise cannot
// explain, as a link. A pair explained by a named switch or node names no link. Nothing is named
// when nothing is slow. The expected value is the median of the pairs of the same kind: inside a
// rack and across racks apart when racks are given (uplinks are often oversubscribed).
// Order: switches, nodes, links; each by ratio (slowest first), then subject.
// Time O(pairs x (1 + culprits named)); memory about 5 bytes a pair beyond the input.
// Errors: InvalidArgument for a pair index out of range or a pair from a node to itself, a value
// that is NaN, infinite or negative, racks not one per node, or options out of range.
Result<std::vector<Culprit>> Localise(const PairSet& set, const LocaliseOptions& o);

// "node", "link" or "switch".
std::string_view CulpritKindName(CulpritKind kind);

// The network test's two measures over one set of nodes, as `vigil fleet run` measures them and
// its documents key them: `net-pair/bw_gbps:<from>-<to>` (Gbit/s, higher is better) and
// `net-pair/lat_us:<from>-<to>` (microseconds, lower is better), in the sender's document.
inline constexpr std::string_view kNetPairBenchmark = "net-pair";
inline constexpr std::string_view kPairBandwidthMetric = "bw_gbps";
inline constexpr std::string_view kPairLatencyMetric = "lat_us";
// RDMA per NIC: `net-pair/rdma_gbps_<device>:<from>-<to>` (Gbit/s) and
// `net-pair/rdma_lat_us_<device>:<from>-<to>` (microseconds), the sender's device.
inline constexpr std::string_view kPairRdmaMetric = "rdma_gbps";
inline constexpr std::string_view kPairRdmaLatencyMetric = "rdma_lat_us";

// One RDMA rail: NIC i of each sender measured with NIC i of its receiver.
struct RailPairs {
  // "NIC 3" where the rail is known by position (`vigil fleet run`), or the sender's device,
  // "mlx5_3", where only the documents' keys are known (the fleet service).
  std::string name;
  std::vector<PairMeasure> bandwidth;  // Gbit/s
  std::vector<PairMeasure> latency;    // microseconds
};

struct NetworkPairs {
  std::vector<std::string> nodes;  // index -> node name
  std::vector<std::string> racks;  // empty, or one rack label per node
  std::vector<PairMeasure> bandwidth;
  std::vector<PairMeasure> latency;
  std::vector<RailPairs> rdma;  // each rail on its own: a NIC is judged against its own rail
};

// A culprit and the measure that named it: "bandwidth", "latency", "rdma <rail name>" (its
// bandwidth) or "rdma latency <rail name>".
struct NamedCulprit {
  std::string measure;
  Culprit culprit;
};

// Localise on each measure apart: bandwidth's culprits, then latency's, then each RDMA rail's in
// the order given, its bandwidth's then its latency's (a measure without pairs names nothing).
// Errors: Localise's.
Result<std::vector<NamedCulprit>> LocaliseNetwork(const NetworkPairs& pairs,
                                                  const LocaliseOptions& o = {});

// A culprit as the reports of `vigil fleet run` and the fleet service give it: measure, kind,
// subject, direction, ratio, slow_pairs, pairs, evidence.
Json CulpritJson(const NamedCulprit& c);

}  // namespace vigil::cluster
