// How learning (learn.h) and judging (judge.h) read a fleet table, shared by both so that the
// limits Learn sets are those of the tests as Judge makes them: the table's columns grouped by
// family, benchmark and pool, one class's view of the values (divided by its members' factors),
// and the measures of one node that both take (its centres, each value's sigmas, each
// component's pooled distance, the node's own noise). Internal to the `learned` module.
#pragma once

#include <cstddef>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "vigil/learned/criteria.h"
#include "vigil/results/anatomy.h"
#include "vigil/results/summary.h"

namespace vigil::learned {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr size_t kMinNoiseSamples = 16;  // values needed to estimate one node's own noise
// A family judged by the balance inside the node has at least this many parts: each value is
// compared with the median of the node's others (BalanceMiddle), and the median of three or fewer
// is a noisy reference (of three normal values it has 0.45 times their variance; with families of
// four judged by their balance, eval/fleetgen's seeds 11-14 found fewer slow disks).
inline constexpr size_t kMinBalanceParts = 5;
static_assert(kMinBalanceParts >= 3, "BalanceMiddle holds a middle value and its two neighbours");

// A component with at most this many metrics in a pool is judged by the plain mean of their
// sigmas and by the mean without its worst one (ComponentDistance, Pooling::kMean and kButWorst);
// one with more, by the larger of two robust means of their sigmas (Pooling::kTrimmedOrHeld).
inline constexpr size_t kFewMetrics = 3;

// How far beyond the centre a value lies in the worse direction, in spreads.
double WorseSigmas(Direction d, double v, double centre, double spread);

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
  explicit Columns(const std::vector<std::string>& metrics);
};

// One class's view of the table: each value divided by its member's factor (FamilyModel::factors),
// so that the parts of a family that differ by design (a pair of GPUs on one NVLink bridge, a GPU
// whose host link is slower) are one population. `divisor` is by column, 1 where none applies.
struct Scaled {
  const FleetTable& t;
  const std::vector<double>& divisor;
  double at(size_t i, size_t j) const { return t.at(i, j) / divisor[j]; }
};

// The middle of one node's values of a family, sorted, from which the median of its values other
// than any one of them is read (OthersMedian): the reference of the balance inside the node. The
// value judged is left out of its own reference. With it in, a value near the middle makes up
// half of its own median, and the ratios pile up near 0: of eight parts under normal noise their
// robust spread is 0.84 of the noise's standard deviation (against 1.10 for the ratio to the
// others' median), and their tail reads as a Student t's of about 13 degrees of freedom, which
// put the limits far out.
struct BalanceMiddle {
  size_t n = 0;  // the node's values; 0: fewer than kMinBalanceParts, no balance
  // Of n even, the two middle values (lo, hi); of n odd, the middle one (mid) and its neighbours.
  double lo = 0, mid = 0, hi = 0;
};

// The median of the node's values other than `v`, one of them; NaN where m has none.
double OthersMedian(const BalanceMiddle& m, double v);

// `v`'s ratio to the median of the node's other values, minus 1; NaN where there is no balance or
// that median is 0.
double BalanceRatio(const BalanceMiddle& m, double v);

// Node i's centres of the families the fleet's distribution judges, by family id: `balance`, the
// reference of the balance inside the node, where the node has kMinBalanceParts or more of the
// family's values (n 0 elsewhere); `level`, its median, which picks the family's mode, where it
// has one or more (NaN elsewhere).
struct NodeCentres {
  std::vector<BalanceMiddle> balance;
  std::vector<double> level;
};

NodeCentres NodeCentresOf(const Scaled& t, size_t i, const Columns& c,
                          std::vector<double>& scratch);

// How far `v`, a value of family `fid` of the node whose centres are `m`, lies beyond its balance
// with the node's other parts, in the balance's robust sigmas; NaN where the family keeps no
// balance or the node has too few of its parts to balance (a GPU or more missing).
double BalanceSigmas(double v, const FamilyModel& f, const NodeCentres& m, size_t fid);

// How far node i's value in column j lies beyond healthy, in robust sigmas: from the node's
// balance where the family has one (it leaves the node's own offset out), else from the mode of
// the fleet that the node's level picks. `limit`, where given, is set to the limit that the test
// of single values whose sigmas these are holds them to (the family's balance_limit or limit).
double ComponentSigmas(const Scaled& t, size_t i, size_t j, const FamilyModel& f,
                       const NodeCentres& m, size_t fid, double* limit = nullptr);

// One component's pooled distance within one pool, in the node's own noise (NodeNoise), each way
// judged against a limit of its own (Pooling). For a component of more than kFewMetrics metrics,
// `mean` is the larger of their mean held within 2 sigmas of their median and their
// quarter-trimmed mean, and `but_worst` the same. For one of two or three (HBM's device copy and
// self copy; a kernel launch's event and wall time) `mean` is their plain mean and `but_worst` the
// mean with the worst metric set aside: there one metric's wild value (heavy-tailed noise) moves
// the mean as far as a slow component does, and the mean's limit must then lie far out. Where the
// noise is near normal the mean finds more, where it is heavy-tailed the other: it needs both
// metrics to agree. `worst` is the largest of its metrics' sigmas (of two, `but_worst` is the other
// one's), and `worst_limit` the limit that the test of single values holds that metric to: the
// plain mean names no component that one metric alone carries past its limit while that test calls
// the metric healthy.
struct ComponentDistance {
  double mean = 0, but_worst = 0, worst = 0, worst_limit = kInf;
  size_t metrics = 0;
  std::string_view index;  // the index its keys carry
};

// One component's metrics' sigmas (sorted here), pooled both ways of ComponentDistance: for more
// than kFewMetrics, the larger of their mean held within 2 sigmas of their median and their
// quarter-trimmed mean (measures.cc), twice; for kFewMetrics or fewer, the plain mean and the mean
// without the worst metric. `index` and `worst_limit` are left to the caller. REQUIRES: two or
// more sigmas.
ComponentDistance PooledSigmas(std::vector<double>& zs);

// For each component of node i with two or more metrics in `cols` (one pool), by the component's
// name (mem-bw measures PCIe 3 and HBM 3 apart, though both carry index 3): how far it lies beyond
// healthy, pooled over its metrics, each metric's sigmas divided by the node's own `noise`
// (NodeNoise) before they are pooled. Over a sweep this is the distance of the component's curve
// from the fleet's.
std::map<std::string_view, ComponentDistance> ComponentDistances(
    const Scaled& t, size_t i, const std::vector<size_t>& cols, const Columns& c,
    const std::vector<const FamilyModel*>& models, const NodeCentres& m, double noise);

// The benchmarks that failed or did not run on node i: a return code of the class `cm` missing or
// not 0, and none of the benchmark's metrics reported. Judging gives each one finding, from its
// return code, not one per metric it did not produce, and judges no component model of a pool
// that holds it; learning leaves those pools of the node out likewise. A benchmark that failed on
// some components only (it reported the others) is not down: the components it could not measure
// are named as missing.
std::set<std::string> DownBenchmarks(const FleetTable& t, size_t i, const Columns& c,
                                     const ClassModel& cm);

// Whether one of the pool's benchmarks is in `down` (DownBenchmarks).
bool AnyDown(const Pool& pool, const std::set<std::string>& down);

// Family models by family id, for one class (null where the class learned none).
std::vector<const FamilyModel*> ModelsById(const Columns& c, const ClassModel& cm);

// The node's own noise: the robust spread of its balance deviations, pooled over all its
// families, in their spreads; at least 1. A node that is noisy everywhere (healthy, but jittery)
// gets its limits widened by that factor; one bad component among many does not move it.
double NodeNoise(const Scaled& t, size_t i, const Columns& cols,
                 const std::vector<const FamilyModel*>& models, const NodeCentres& centres);

}  // namespace vigil::learned
