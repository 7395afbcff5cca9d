#include "cli/validate.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <optional>
#include <vector>

#include "vigil/core/json.h"
#include "vigil/eval/evaluation.h"
#include "vigil/eval/validate_files.h"
#include "vigil/learned/criteria.h"
#include "vigil/learned/findings_text.h"
#include "vigil/learned/judge.h"
#include "vigil/learned/learn_files.h"
#include "vigil/learned/reach.h"

namespace vigil::cli {
namespace {

using learned::Finding;
using learned::FindingToJson;
using learned::NodeFindings;

// Ranges of learn's numeric flags (docs/validate.md).
// False findings expected per healthy node: from one in 10^100 (criteria that judge little but
// failures and missing data) to one per node.
constexpr Bounds kLearnBudgetBounds{.lo = 1e-100, .hi = 1};

Json ScoreJson(const eval::Score& s) {
  Json rows = Json::array();
  for (const eval::ScoreRow& r : s.rows) {
    rows.push_back(Json{{"defects", r.label},
                        {"planted", r.planted},
                        {"found", r.found},
                        {"recall", r.recall},
                        {"precision", r.precision},
                        {"f1", r.f1}});
  }
  return Json{{"findings", s.findings}, {"false_findings", s.false_findings}, {"rows", rows}};
}

}  // namespace

CLI::App* SetupLearn(CLI::App& app, LearnCliOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "learn",
      "Learn pass/fail criteria from a fleet's own results (per hardware class), and say what "
      "they can find: the slowdown of one part from which on it is flagged");
  cmd->add_option("--data", o.data, "Fleet summary JSONL (repeat for more files)")->required();
  cmd->add_option("--out", o.out, "Criteria file to write (JSON)")->required();
  cmd->add_option("--budget", o.budget,
                  "False findings expected per healthy node: each test's limit comes from the "
                  "tail of the fleet's own values")
      ->capture_default_str()
      ->check(InBounds(kLearnBudgetBounds));
  cmd->add_flag("--json", o.json, "Print a summary as JSON on stdout");
  return cmd;
}

CommandResult RunLearn(const LearnCliOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  learned::LearnRequest request;
  request.data = o.data;
  request.out = o.out;
  request.options.budget = o.budget;
  VIGIL_ASSIGN_OR_RETURN(const learned::LearnedFromFiles learned, learned::LearnFromFiles(request));
  Json classes = Json::array();
  Table t({"HARDWARE", "NODES", "FAMILIES", "COMPONENT MODELS"});
  for (const learned::ClassModel& c : learned.criteria.classes) {
    classes.push_back(Json{{"hardware", c.hardware},
                           {"nodes", c.nodes},
                           {"families", c.families.size()},
                           {"components", c.components.size()}});
    t.Add({c.hardware.empty() ? "(unspecified)" : c.hardware, std::to_string(c.nodes),
           std::to_string(c.families.size()), std::to_string(c.components.size())});
  }
  if (o.json) {
    fmt::print("{}\n", DumpJson(Json{{"nodes", learned.nodes},
                                     {"metrics", learned.metrics},
                                     {"classes", classes},
                                     {"reach", learned::ReachToJson(learned.reach)},
                                     {"out", o.out}}));
  } else {
    fmt::print("{}learned from {} nodes x {} metrics in {:.2f} s; wrote {}\n", t.ToString(),
               learned.nodes, learned.metrics, SecondsSince(start), o.out);
    fmt::print("\n{}{}{}", learned::kReachHeading, learned::RenderReach(learned.reach),
               learned::RenderBlindReach(learned.reach));
  }
  return ExitCode::kHealthy;
}

CLI::App* SetupValidate(CLI::App& app, ValidateCliOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "validate", "Judge nodes against learned criteria and name the defective components");
  cmd->add_option("--data", o.data, "Fleet summary JSONL (repeat for more files)")->required();
  cmd->add_option("--criteria", o.criteria, "Criteria from `vigil learn`")->required();
  cmd->add_option("--truth", o.truth,
                  "Planted defects (from `vigil simulate fleet`): print precision and recall, "
                  "and SuperBench's production rule style on the same data");
  cmd->add_flag("--json", o.json, "Print verdicts as JSON on stdout");
  return cmd;
}

CommandResult RunValidate(const ValidateCliOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  VIGIL_ASSIGN_OR_RETURN(
      const eval::Validation v,
      eval::ValidateFiles({.data = o.data, .criteria = o.criteria, .truth = o.truth}));
  const FleetTable& table = v.table;
  const std::vector<NodeFindings>& verdicts = v.verdicts;
  const size_t defective = v.defective;
  const std::optional<eval::Score>& learned = v.learned;
  const std::optional<eval::Score>& superbench = v.superbench;
  if (o.json) {
    Json nodes = Json::array();
    for (size_t i = 0; i < verdicts.size(); ++i) {
      Json findings = Json::array();
      for (const Finding& f : verdicts[i].findings) findings.push_back(FindingToJson(f));
      nodes.push_back(Json{
          {"node", table.node(i)},
          {"verdict", VerdictName(verdicts[i].defective ? Verdict::kDefective : Verdict::kHealthy)},
          {"findings", std::move(findings)}});
    }
    Json out = {{"nodes", std::move(nodes)}, {"defective", defective}};
    if (learned) {
      out["score"] = Json{{"learned", ScoreJson(*learned)}, {"superbench", ScoreJson(*superbench)}};
    }
    fmt::print("{}\n", DumpJson(out));
  } else {
    fmt::print("{}", learned::RenderFindings(table, verdicts));
    fmt::print("{} of {} nodes defective ({} metrics, {:.2f} s)\n", defective, table.node_count(),
               table.metric_count(), SecondsSince(start));
    if (learned) {
      Table s({"DEFECTS", "PLANTED", "LEARNED RECALL", "PRECISION", "F1", "SUPERBENCH RECALL",
               "PRECISION", "F1"});
      for (const eval::ScoreRow& r : learned->rows) {
        const eval::ScoreRow* b = superbench->Row(r.label);
        s.Add({r.label, std::to_string(r.planted), fmt::format("{:.3f}", r.recall),
               fmt::format("{:.3f}", r.precision), fmt::format("{:.3f}", r.f1),
               fmt::format("{:.3f}", b->recall), fmt::format("{:.3f}", b->precision),
               fmt::format("{:.3f}", b->f1)});
      }
      fmt::print("\nagainst {} (precision = found / (found + findings matching no defect)):\n{}",
                 o.truth, s.ToString());
      fmt::print("false findings: learned {}, SuperBench style {}\n", learned->false_findings,
                 superbench->false_findings);
    }
  }
  return defective > 0 ? ExitCode::kDefect : ExitCode::kHealthy;
}

}  // namespace vigil::cli
