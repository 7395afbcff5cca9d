// Judging nodes by learned criteria (criteria.h) and by the rules that need no fleet (health.h):
// the findings, naming the component, the metric, the expected range, the deviation and a
// severity, and the verdict they make (docs/validate.md, "Findings").
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "vigil/core/json.h"
#include "vigil/core/status.h"
#include "vigil/learned/criteria.h"
#include "vigil/results/component.h"
#include "vigil/results/summary.h"
#include "vigil/results/verdict.h"

namespace vigil::learned {

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

Json FindingToJson(const Finding& finding);

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
