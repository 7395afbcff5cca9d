#include "cli/diagnose.h"

#include <fmt/format.h>

#include <chrono>

#include "vigil/core/json.h"
#include "vigil/superbench/diagnose.h"
#include "vigil/superbench/diagnose_files.h"
#include "vigil/superbench/superbench_report.h"

namespace vigil::cli {
namespace {

// Digits a double holds: more would print noise (docs/validate.md).
constexpr Bounds kDigitsBounds{.lo = 0, .hi = 17};

}  // namespace

CLI::App* SetupDiagnose(CLI::App& app, DiagnoseCliOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "diagnose",
      "Judge a fleet's results with SuperBench rules (compatible with `sb result diagnosis`)");
  cmd->add_option("-d,--data-file", o.data, "Fleet summary JSONL, one node per line")->required();
  cmd->add_option("-r,--rule-file", o.rules, "SuperBench rule file (YAML)")->required();
  cmd->add_option("-b,--baseline-file", o.baseline, "SuperBench baseline (JSON)");
  cmd->add_option("--output-dir", o.output_dir,
                  "Directory for diagnosis_summary.<format> (created when missing)")
      ->capture_default_str();
  cmd->add_option("--output-file-format", o.format, "json, jsonl, md or html")
      ->capture_default_str();
  cmd->add_flag("--output-all", o.output_all,
                "Every node with its raw values and verdict, not only the defective ones");
  cmd->add_option("--decimal-place-value", o.decimals,
                  "md/html: decimals of rounded values (0: as they are)")
      ->check(InBounds(kDigitsBounds))
      ->capture_default_str();
  cmd->add_flag("--strict-missing,!--no-strict-missing", o.strict_missing,
                "A metric a rule selects that the node lacks is a violation (Vigil's default; "
                "--strict-missing=false behaves exactly as SuperBench)");
  cmd->add_flag("--strict", o.strict,
                "A rule whose metric patterns select no key of the data is an error (exit 2), "
                "not a warning");
  cmd->add_flag("--json", o.json, "Print a summary as JSON on stdout");
  return cmd;
}

CommandResult RunDiagnose(const DiagnoseCliOptions& o) {
  superbench::DiagnoseRequest request;
  request.data = o.data;
  request.rules = o.rules;
  request.baseline = o.baseline;
  request.output_dir = o.output_dir;
  VIGIL_ASSIGN_OR_RETURN(request.report.format, superbench::ParseReportFormat(o.format));
  request.report.output_all = o.output_all;
  request.report.decimals = o.decimals;
  request.options.strict_missing = o.strict_missing;
  request.options.strict = o.strict;
  const auto start = std::chrono::steady_clock::now();
  VIGIL_ASSIGN_OR_RETURN(const superbench::DiagnosedFiles d, superbench::DiagnoseFiles(request));
  const FleetTable& table = d.table;
  const superbench::Diagnosis& diagnosis = d.diagnosis;
  const size_t defective = diagnosis.defective_order.size();
  if (o.json) {
    Json nodes = Json::array();
    for (size_t i : diagnosis.defective_order) {
      const superbench::NodeVerdict& v = diagnosis.nodes[i];
      nodes.push_back(Json{{"node", table.node(i)},
                           {"category", v.categories},
                           {"issue_num", v.issue_count},
                           {"details", v.details}});
    }
    fmt::print("{}\n", DumpJson(Json{{"nodes", table.node_count()},
                                     {"metrics", table.metric_count()},
                                     {"defective", defective},
                                     {"output", d.out},
                                     {"warnings", diagnosis.warnings},
                                     {"defective_nodes", std::move(nodes)}}));
  } else {
    Table t({"NODE", "CATEGORY", "ISSUES"});
    for (size_t i : diagnosis.defective_order) {
      const superbench::NodeVerdict& v = diagnosis.nodes[i];
      t.Add({table.node(i), v.categories, std::to_string(v.issue_count)});
    }
    if (defective > 0) fmt::print("{}", t.ToString());
    fmt::print("{} of {} nodes defective ({} metrics, {} rules, {:.2f} s); wrote {}\n", defective,
               table.node_count(), table.metric_count(), d.rules, SecondsSince(start), d.out);
  }
  return defective > 0 ? ExitCode::kDefect : ExitCode::kHealthy;
}

CLI::App* SetupBaseline(CLI::App& app, BaselineCliOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "baseline",
      "Generate a SuperBench baseline from a fleet's results (mean, or with rules "
      "SuperBench's fix_threshold outlier removal)");
  cmd->add_option("-d,--data-file", o.data, "Fleet summary JSONL")->required();
  cmd->add_option("-r,--rule-file", o.rules,
                  "Diagnosis rules: drop the values they flag until none is flagged");
  cmd->add_option("-o,--out", o.out, "Baseline JSON to write")->required();
  cmd->add_option("--digits", o.digits,
                  "Significant digits below 1, decimals above (as SuperBench writes them)")
      ->capture_default_str()
      ->check(InBounds(kDigitsBounds));
  return cmd;
}

CommandResult RunBaseline(const BaselineCliOptions& o) {
  VIGIL_ASSIGN_OR_RETURN(const superbench::BaselineFromFiles b,
                         superbench::BaselineFiles(
                             {.data = o.data, .rules = o.rules, .out = o.out, .digits = o.digits}));
  int dropped = 0;
  for (const auto& [metric, n] : b.result.dropped) dropped += n;
  fmt::print("baseline of {} metrics from {} nodes", b.result.baseline.size(), b.nodes);
  if (!o.rules.empty()) fmt::print(" ({} outlying values left out)", dropped);
  fmt::print("; wrote {}\n", o.out);
  return ExitCode::kHealthy;
}

}  // namespace vigil::cli
