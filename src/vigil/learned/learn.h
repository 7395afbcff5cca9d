// Criteria learned from the fleet itself (docs/validate.md): for each hardware class and metric
// family, what healthy looks like, robust to a fifth of the training nodes being defective; and
// the verdicts those criteria give, naming the component, the metric, the expected range, the
// deviation and a severity.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vigil/core/json.h"
#include "vigil/core/status.h"
#include "vigil/results/anatomy.h"
#include "vigil/results/component.h"
#include "vigil/results/summary.h"
#include "vigil/results/verdict.h"

namespace vigil::learned {

inline constexpr std::string_view kCriteriaSchema = "vigil.criteria/3";

// A component is expected of a class when at least this share of its nodes reports it.
inline constexpr double kExpectedShare = 0.9;

// The nodes of each hardware class (FleetTable::hardware), classes in first-appearance order.
std::vector<std::pair<std::string, std::vector<size_t>>> NodesByHardware(const FleetTable& table);

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
  // Balance inside a node: each value's ratio to its node's median over the family, minus 1.
  bool balanced = false;
  double balance_centre = 0, balance_spread = 0, balance_limit = 0;
};

// One component (GPU 3, NIC 5...) across all metrics of one benchmark: the mean of its metrics'
// deviations in the worse direction, in robust sigmas (from the node's balance where the family
// has one). Over a sweep (bandwidth against message size) this is the distance between the
// component's curve and the fleet's; over GEMM's data types it pools evidence that one type
// alone would not give, and it carries the correlation between a component's metrics.
struct ComponentModel {
  std::string benchmark;   // for a part's pool, the benchmarks it pools joined by '+'
  std::string part;        // "": one benchmark's pool; else the kind of part (HBM, PCIe, GPU...)
  bool but_worst = false;  // the pool without each component's worst metric (learn.cc)
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

struct LearnOptions {
  double budget = 0.005;
  double resolution = 0.002;
  size_t min_nodes = 5;         // a class with fewer nodes is an error: too few to learn from
  double min_mode_share = 0.1;  // a second mode of a family holds at least this share of nodes
};

// A hardware class that Learn left out, and why.
struct LeftOutClass {
  std::string hardware;
  std::vector<std::string> nodes;  // in table order
  std::string reason;
};

// Learns criteria from a fleet table (one or several files appended), each hardware class on its
// own. A class with fewer than options.min_nodes nodes is an error (InvalidArgument naming it)
// when `left_out` is null; otherwise it is left out of the criteria and appended to *left_out,
// and only a table without any class to learn from is an error. `vigil learn` insists on every
// class; the fleet service must not let one odd node (one that lost a GPU reports a class of
// its own) stop the whole fleet's learning.
Result<LearnedCriteria> Learn(const FleetTable& table, const LearnOptions& options,
                              std::vector<LeftOutClass>* left_out = nullptr);

Json CriteriaToJson(const LearnedCriteria& criteria);
// InvalidArgument "<source>: ..." for another schema or version, or a malformed file.
Result<LearnedCriteria> CriteriaFromJson(std::string_view text, std::string_view source);

enum class Severity { kMinor, kMajor, kCritical };
std::string_view SeverityName(Severity s);

// What found a component at fault (docs/validate.md, "Findings").
enum class FindingTest {
  kFleet,       // a value beyond its family's healthy range over the fleet
  kBalance,     // a value out of balance with its node's other components
  kComponent,   // a component's metrics together, beyond healthy
  kReturnCode,  // a benchmark's return code not 0
  kMissing,     // an expected metric not reported
  kClass,       // the node is not of the class it says (or no class applies)
  kHealth,      // a reading with a fixed meaning (health.h)
};
// "fleet", "balance", "component", "return_code", "missing", "class", "health".
std::string_view FindingTestName(FindingTest test);
// The inverse of FindingTestName; InvalidArgument naming the text for anything else.
Result<FindingTest> ParseFindingTest(std::string_view text);

struct Finding {
  ComponentId component;  // GPU 3, NIC 5, NVLink, gemm-flops...
  std::string metric;     // the key, or the curve pattern
  FindingTest test = FindingTest::kFleet;
  double value = 0;
  double expected_low = 0, expected_high = 0;
  double deviation = 0;  // relative to the fleet's centre (value / centre - 1)
  double sigmas = 0;     // how far beyond healthy, in robust sigmas
  Severity severity = Severity::kMinor;
};

struct NodeFindings {
  bool defective = false;
  std::vector<Finding> findings;
};

// The criteria of these benchmarks only (families and component models whose benchmark, the
// key's text before its last '/', is in the set): to judge a node that ran part of a suite.
LearnedCriteria RestrictToBenchmarks(LearnedCriteria criteria,
                                     const std::vector<std::string>& benchmarks);

Json FindingToJson(const Finding& finding);

// The mode of `family` that judges a node whose median of the family is `level` (its values
// divided by their factors): the nearest, in its nodes' spreads (the first when `level` is NaN).
const Mode& NearestMode(const FamilyModel& family, double level);

// The factor of member `key` of `family` (FamilyModel::factors): 1 when it has none.
double MemberFactor(const FamilyModel& family, std::string_view key);

// The criteria that judge a node of `hardware`: its class's, else the only class when the criteria
// hold one; nullptr when none applies (the node gets a critical "class" finding from Judge).
const ClassModel* ClassFor(const LearnedCriteria& criteria, std::string_view hardware);

// Judges every node of the table against the criteria of its hardware class (ClassFor), and by the
// rules that need no fleet (health.h) whatever its class. Nodes are
// split over `threads` threads (0: the hardware's count); the result does not depend on it.
std::vector<NodeFindings> Judge(const FleetTable& table, const LearnedCriteria& criteria,
                                int threads = 0);

// Judge's preparation for one list of metric keys, made once: what each key measures, each
// class's models by column, the columns the fixed rules read. The fleet service judges every
// upload alone, and most uploads carry the same keys; preparing was half the cost of judging one.
class Judgement {
 public:
  // Keeps a reference to `criteria`, which must outlive this.
  Judgement(const std::vector<std::string>& metrics, const LearnedCriteria& criteria);
  ~Judgement();
  Judgement(const Judgement&) = delete;
  Judgement& operator=(const Judgement&) = delete;

  // As Judge. REQUIRES: table.metrics() is the list this was made for.
  std::vector<NodeFindings> Judge(const FleetTable& table, int threads = 0) const;

 private:
  struct Prepared;
  std::unique_ptr<const Prepared> prepared_;
};

// One node's findings and the verdict they make.
struct NodeJudgement {
  Verdict verdict = Verdict::kUnjudged;
  NodeFindings findings;
};

// Judges one node (`node`, a table of its one row): by `criteria` when given (learned criteria
// restricted to the benchmarks the node ran, RestrictToBenchmarks, prepared for node.metrics()),
// and always by the rules that need no fleet (health.h), which Judgement applies too. With
// criteria the verdict is defective or healthy; without, defective when the rules find a fault and
// unjudged otherwise. What `vigil run`, `vigil serve` and its uploads judge a node by.
// REQUIRES: node.node_count() == 1; criteria, when given, made for node.metrics().
NodeJudgement JudgeNode(const FleetTable& node, const Judgement* criteria);
// As above, with `criteria` (restricted to what the node ran) prepared here for node.metrics().
NodeJudgement JudgeNode(const FleetTable& node, const LearnedCriteria* criteria);

}  // namespace vigil::learned
