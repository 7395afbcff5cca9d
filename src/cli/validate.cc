#include "cli/validate.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>

#include "vigil/core/file.h"
#include "vigil/core/json.h"
#include "vigil/eval/evaluation.h"
#include "vigil/learned/learn.h"
#include "vigil/learned/reason.h"

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

std::string RenderFindings(const FleetTable& table,
                           const std::vector<learned::NodeFindings>& verdicts) {
  Table t({"NODE", "COMPONENT", "METRIC", "VALUE", "EXPECTED", "DEVIATION", "SEVERITY", "TEST"});
  size_t rows = 0;
  constexpr size_t kMaxRows = 200;
  for (size_t i = 0; i < verdicts.size(); ++i) {
    for (const Finding& f : verdicts[i].findings) {
      if (++rows > kMaxRows) continue;
      t.Add({table.node(i), ComponentName(f.component), f.metric,
             std::isnan(f.value) ? "-" : FormatFigure(f.value), learned::ExpectedRange(f),
             // Only the fleet and balance tests measure a deviation from the fleet's centre
             // (none from a centre of 0).
             (f.test == learned::FindingTest::kFleet || f.test == learned::FindingTest::kBalance) &&
                     f.deviation != 0
                 ? fmt::format("{:+.1f}%", f.deviation * 100)
                 : "-",
             std::string(learned::SeverityName(f.severity)),
             std::string(learned::FindingTestName(f.test))});
    }
  }
  if (rows == 0) return "";
  std::string out = t.ToString();
  if (rows > kMaxRows) {
    out += fmt::format("... and {} more findings (--json lists them all)\n", rows - kMaxRows);
  }
  return out;
}

CLI::App* SetupLearn(CLI::App& app, LearnCliOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "learn", "Learn pass/fail criteria from a fleet's own results (per hardware class)");
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
  VIGIL_RETURN_IF_ERROR(CheckWritable(o.out));
  const auto start = std::chrono::steady_clock::now();
  VIGIL_ASSIGN_OR_RETURN(FleetTable table, ReadFleetFiles(o.data));
  learned::LearnOptions options;
  options.budget = o.budget;
  VIGIL_ASSIGN_OR_RETURN(learned::LearnedCriteria criteria, learned::Learn(table, options));
  VIGIL_RETURN_IF_ERROR(WriteFileAtomic(o.out, DumpJson(learned::CriteriaToJson(criteria), 1)));
  Json classes = Json::array();
  Table t({"HARDWARE", "NODES", "FAMILIES", "COMPONENT MODELS"});
  for (const learned::ClassModel& c : criteria.classes) {
    classes.push_back(Json{{"hardware", c.hardware},
                           {"nodes", c.nodes},
                           {"families", c.families.size()},
                           {"components", c.components.size()}});
    t.Add({c.hardware.empty() ? "(unspecified)" : c.hardware, std::to_string(c.nodes),
           std::to_string(c.families.size()), std::to_string(c.components.size())});
  }
  if (o.json) {
    fmt::print("{}\n", DumpJson(Json{{"nodes", table.node_count()},
                                     {"metrics", table.metric_count()},
                                     {"classes", classes},
                                     {"out", o.out}}));
  } else {
    fmt::print("{}learned from {} nodes x {} metrics in {:.2f} s; wrote {}\n", t.ToString(),
               table.node_count(), table.metric_count(), SecondsSince(start), o.out);
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
  VIGIL_ASSIGN_OR_RETURN(std::string text, ReadFile(o.criteria));
  VIGIL_ASSIGN_OR_RETURN(learned::LearnedCriteria criteria,
                         learned::CriteriaFromJson(text, o.criteria));
  std::vector<eval::PlantedDefect> truth;
  if (!o.truth.empty()) {
    VIGIL_ASSIGN_OR_RETURN(std::string t, ReadFile(o.truth));
    VIGIL_ASSIGN_OR_RETURN(truth, eval::ParseTruth(t, o.truth));
  }
  VIGIL_ASSIGN_OR_RETURN(FleetTable table, ReadFleetFiles(o.data));
  const std::vector<NodeFindings> verdicts = learned::Judge(table, criteria);
  size_t defective = 0;
  for (const NodeFindings& v : verdicts) defective += v.defective ? 1 : 0;
  std::optional<eval::Score> learned, superbench;
  if (!o.truth.empty()) {
    learned = eval::ScoreFindings(eval::FoundByLearned(table, verdicts), truth);
    superbench = eval::ScoreFindings(eval::FoundBySuperBenchStyle(table), truth);
  }
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
    fmt::print("{}", RenderFindings(table, verdicts));
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
