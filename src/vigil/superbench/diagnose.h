// Rule-based diagnosis, compatible with SuperBench's `sb result diagnosis`: the same rule and
// baseline files give the same verdicts, categories and detail strings. See docs/validate.md for
// the semantics and where Vigil departs from SuperBench (each behind an option).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vigil/core/status.h"
#include "vigil/results/summary.h"
#include "vigil/superbench/expr.h"

namespace vigil::superbench {

enum class RuleFunction { kNone, kVariance, kValue, kMultiRules, kFailureCheck };

struct Rule {
  std::string name;
  RuleFunction function = RuleFunction::kNone;  // kNone: a stored rule without criteria
  std::optional<Criteria> criteria;
  std::string category;
  bool store = false;
  std::vector<std::string> patterns;  // the "metrics" entries, "benchmark/regex"
  int line = 0;                       // where the rule starts in its file
};

// A rule file: `superbench: rules: {name: {function, criteria, categories, metrics, store}}`,
// rules in file order. InvalidArgument "<source>:<line>: rule <name>: <problem>" for a missing
// field, an unknown function, a criteria that does not parse or is not a predicate, or a
// `store` that is not a bool.
Result<std::vector<Rule>> ParseRules(std::string_view text, std::string_view source);
Result<std::vector<Rule>> ReadRules(const std::string& path);

// A baseline file: one flat JSON object, metric -> number.
using Baseline = std::map<std::string, double, std::less<>>;
Result<Baseline> ParseBaseline(std::string_view text, std::string_view source);
Result<Baseline> ReadBaseline(const std::string& path);

// SuperBench's lookup: the exact key, else the key without its last ":suffix" (the rank), else
// (a key without ':') its benchmark. nullopt when none is in the baseline.
std::optional<double> BaselineOf(const Baseline& baseline, std::string_view metric);

struct DiagnoseOptions {
  // A metric that a variance or value rule selects but the node lacks counts as a violation.
  // SuperBench only notes it (`<metric>_miss`, category FailedTest) and passes the node unless
  // another rule fails: false reproduces that exactly.
  bool strict_missing = true;
  // A variance, value or stored rule whose metric patterns select no key of the data is an error
  // (InvalidArgument naming the rule); otherwise a warning in Diagnosis::warnings. SuperBench
  // passes such a rule in silence.
  bool strict = false;
  int threads = 0;  // 0: the hardware's count
};

struct NodeVerdict {
  bool defective = false;
  std::string categories;  // sorted, comma-separated, as SuperBench joins them
  std::string details;     // sorted, comma-separated
  int issue_count = 0;     // SuperBench's "Number Of Issues": the comma-separated parts of details
  // For each of Diagnosis::metrics: the variance (variance rules) or the value (value and
  // failure_check rules) of this node; NaN when missing. Only filled for defective nodes.
  std::vector<double> summary;
};

struct Diagnosis {
  std::vector<std::string> metrics;        // every metric a rule selected, sorted
  std::vector<RuleFunction> metric_kinds;  // the function of the last rule that selected each
  std::vector<NodeVerdict> nodes;          // one per table node, in table order
  // Defective nodes in SuperBench's order: by category, then details, both descending (ties in
  // table order, so that the output is deterministic).
  std::vector<size_t> defective_order;
  // Rules that select nothing, one sentence each in rule order, with a hint when the data names
  // the benchmark's metrics in another SuperBench generation than the rule (NamingGeneration).
  std::vector<std::string> warnings;
};

// Resolves the rules against the table's metrics and judges every node. InvalidArgument for a
// variance metric without a baseline or with a zero baseline, a regex RE2 cannot compile, a
// criteria that fails to evaluate on a number, a multi_rules criteria that names a rule
// that stored nothing (SuperBench's KeyError), and with options.strict a rule that selects
// nothing.
Result<Diagnosis> Diagnose(const FleetTable& table, const std::vector<Rule>& rules,
                           const Baseline& baseline, const DiagnoseOptions& options);

// SuperBench's baseline generation (`generate-baseline`). Without rules: the mean of every metric
// over the nodes that have it. With rules (SuperBench's fix_threshold): for each metric of each
// variance or value rule, repeat {baseline = mean of the remaining values; drop the values the
// rule flags against that baseline} until nothing is dropped. Every value of the result is
// finite: a mean that is not (values whose sum overflows) is InvalidArgument naming the metric.
struct BaselineResult {
  Baseline baseline;
  std::map<std::string, int, std::less<>> dropped;  // metric -> values left out (with rules)
};
Result<BaselineResult> GenerateBaseline(const FleetTable& table, const std::vector<Rule>* rules);

// The baseline as SuperBench writes it: keys sorted, two-space indent, integral metrics as
// integers, others to `digits` significant digits below 1 and `digits` decimals above.
std::string FormatBaseline(const Baseline& baseline, int digits);

}  // namespace vigil::superbench
