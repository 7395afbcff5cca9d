// Criteria learned from the fleet itself (docs/validate.md): for each hardware class and metric
// family, what healthy looks like, robust to a fifth of the training nodes being defective. The
// model (learn.h learns it, judge.h judges by it), its file (kCriteriaSchema) and the lookups that
// judging and the dashboard make in it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vigil/core/env.h"
#include "vigil/core/json.h"
#include "vigil/core/status.h"
#include "vigil/results/anatomy.h"

namespace vigil::learned {

inline constexpr std::string_view kCriteriaSchema = "vigil.criteria/6";

// A component is expected of a class when at least this share of its nodes reports it.
inline constexpr double kExpectedShare = 0.9;

// The largest limit, in robust sigmas: no limit at all, as a tiny budget asks (Learn writes no
// more, and CriteriaFromJson reads no more).
inline constexpr double kMaxLimit = 1e100;

// The range of a member's factor (FamilyModel::factors): Learn writes none outside it, and
// CriteriaFromJson reads none.
inline constexpr double kMinFactor = 1e-9, kMaxFactor = 1e9;

// One healthy mode of a family: where the nodes of one firmware, clock setting or unlabelled
// hardware class put it. A node is judged by the mode nearest its own median of the family.
struct Mode {
  double centre = 0, spread = 0;            // median and robust sigma of the components' values
  double node_centre = 0, node_spread = 0;  // the same of its nodes' medians
  size_t nodes = 0;
};

// One metric family of one class: every component's value is one sample of it.
struct FamilyModel {
  std::string family;
  Direction direction = Direction::kEither;
  std::vector<Mode> modes;  // one or more, by increasing centre
  double quantum = 0;       // the step its values are printed in (0.01: two decimals); 0: none
  double limit = 0;         // robust sigmas beyond a mode's centre that healthy values do not reach
  size_t samples = 0;
  std::vector<std::string> members;  // the keys that at least 90% of the class's nodes report
  // Where the family's parts differ by design (a pair of GPUs on one NVLink bridge, a GPU with a
  // slower host link), each member's factor, parallel to `members`: its values are judged
  // divided by it. Empty: all 1.
  std::vector<double> factors;
  // Balance inside a node: each value's ratio to the median of its node's other values of the
  // family, minus 1.
  bool balanced = false;
  double balance_centre = 0, balance_spread = 0, balance_limit = 0;
};

// How a component model pools a component's metrics (measures.cc, PooledSigmas). The ways are
// learned apart, each from the components it judges: their statistics follow different laws (a
// robust mean of many metrics has light tails, a plain mean of two heavy-tailed metrics does
// not), and one limit read from their mixture suits neither.
enum class Pooling {
  kTrimmedOrHeld,  // more than kFewMetrics metrics: the larger of two robust means of their sigmas
  kMean,           // kFewMetrics or fewer: the mean of their sigmas
  kButWorst,       // kFewMetrics or fewer: the same without the worst metric
};
std::string_view PoolingName(Pooling p);
std::optional<Pooling> PoolingFromName(std::string_view name);

// One component (GPU 3, NIC 5...) across all metrics of one benchmark: the mean of its metrics'
// deviations in the worse direction, in robust sigmas (from the node's balance where the family
// has one). Over a sweep (bandwidth against message size) this is the distance between the
// component's curve and the fleet's; over GEMM's data types it pools evidence that one type
// alone would not give, and it carries the correlation between a component's metrics.
struct ComponentModel {
  std::string benchmark;  // for a part's pool, the benchmarks it pools joined by '+'
  std::string part;       // "": one benchmark's pool; else the kind of part (HBM, PCIe, GPU...)
  Pooling pooling = Pooling::kTrimmedOrHeld;
  double centre = 0, spread = 0, limit = 0;
  size_t samples = 0;
};

struct ClassModel {
  std::string hardware;  // "" for nodes that do not say
  size_t nodes = 0;
  std::vector<FamilyModel> families;
  std::vector<ComponentModel> components;
};

struct LearnedCriteria {
  double budget = 0.005;      // false findings expected per healthy node, over all its tests
  double resolution = 0.002;  // relative floor of every spread
  std::vector<ClassModel> classes;
};

Json CriteriaToJson(const LearnedCriteria& criteria);
// InvalidArgument "<source>: ..." for another schema or version, or a malformed file.
Result<LearnedCriteria> CriteriaFromJson(std::string_view text, std::string_view source);
// Reads and parses the criteria file `path` through `env`: the read's error (NotFound naming the
// file when it is not there), else CriteriaFromJson's with the path as its source.
Result<LearnedCriteria> ReadCriteria(const std::string& path, Env& env = Env::Default());

// The criteria of these benchmarks only (families and component models whose benchmark, the
// key's text before its last '/', is in the set): to judge a node that ran part of a suite.
LearnedCriteria RestrictToBenchmarks(LearnedCriteria criteria,
                                     const std::vector<std::string>& benchmarks);

// The mode of `family` that judges a node whose median of the family is `level` (its values
// divided by their factors): the nearest, in its nodes' spreads (the first when `level` is NaN).
const Mode& NearestMode(const FamilyModel& family, double level);

// The factor of member `key` of `family` (FamilyModel::factors): 1 when it has none.
double MemberFactor(const FamilyModel& family, std::string_view key);

// The criteria that judge a node of `hardware`: its class's, else the only class when the criteria
// hold one; nullptr when none applies (the node gets a critical "class" finding from Judge).
const ClassModel* ClassFor(const LearnedCriteria& criteria, std::string_view hardware);

}  // namespace vigil::learned
