#include "cli/fleet_stats.h"

#include <fmt/format.h>

#include <cmath>

#include "vigil/core/duration.h"
#include "vigil/core/json.h"
#include "vigil/reliability/fleet_report.h"
#include "vigil/reliability/fleet_stats.h"
#include "vigil/reliability/plots.h"

namespace vigil::cli {
namespace {

using reliability::FleetStats;

// Ranges of fleet stats' numeric flags (docs/reliability.md).
constexpr Bounds kWindowBounds{.lo = 0, .hi = 30 * 86400.0, .seconds = true};
constexpr Bounds kProbabilityBounds{.lo = 0, .hi = 1, .lo_open = true, .hi_open = true};
constexpr Bounds kGpusPerNodeOrLogBounds{.lo = 0, .hi = kGpusPerNodeBounds.hi};  // 0: the log's

void WarnSkipped(const reliability::SkippedLines& skipped, const std::string& path) {
  if (skipped.count > 0) {
    fmt::print(stderr, "vigil: warning: skipped {} broken line{} of {} (first: {})\n",
               skipped.count, skipped.count == 1 ? "" : "s", path, skipped.first);
  }
}

std::string Share(double part, double whole) {
  return whole > 0 ? fmt::format("{:.1f}%", 100 * part / whole) : "-";
}

void PrintStats(const FleetStats& s, double confidence) {
  fmt::print("{} finished jobs ({} unfinished) on {} nodes, {} GPU-hours, {} GPUs per node\n\n",
             s.jobs_finished, s.jobs_unfinished, s.nodes, FormatFigure(s.gpu_hours),
             s.gpus_per_node);
  Table states({"STATE", "JOBS", "SHARE", "GPU_HOURS", "GPU_TIME_SHARE"});
  for (const auto& st : s.states) {
    states.Add({std::string(reliability::JobStateName(st.state)), fmt::format("{}", st.jobs),
                Share(static_cast<double>(st.jobs), static_cast<double>(s.jobs_finished)),
                FormatFigure(st.gpu_hours), Share(st.gpu_hours, s.gpu_hours)});
  }
  fmt::print("{}\n", states.ToString());
  fmt::print("Infrastructure failures: {} ({} NODE_FAIL or BOOT_FAIL, {} with a node event)\n",
             s.infra_failures, s.infra_by_state, s.infra_by_event);
  fmt::print(
      "Failure rate: {} per 1000 node-days, {:.0f}% interval [{}, {}], over {} node-days\n\n",
      FormatFigure(s.rate.per_1000_node_days), confidence * 100, FormatFigure(s.rate.lower),
      FormatFigure(s.rate.upper), FormatFigure(s.rate.node_days));
  if (!s.projections.empty()) {
    Table proj({"GPUS", "NODES", "PROJECTED_MTTF", "LOW", "HIGH"});
    for (const auto& p : s.projections) {
      proj.Add({fmt::format("{}", p.gpus), FormatFigure(p.nodes), FormatDuration(p.mttf_s),
                FormatDuration(p.lower_s), FormatDuration(p.upper_s)});
    }
    fmt::print("MTTF projection, 1 / (N_nodes r_f):\n{}\n", proj.ToString());
    Table sizes(
        {"NODES", "JOBS", "INFRA_FAILURES", "JOB_HOURS", "OBSERVED_MTTF", "PROJECTED_MTTF"});
    for (const auto& c : s.size_classes) {
      sizes.Add({c.min_nodes == c.max_nodes ? fmt::format("{}", c.min_nodes)
                                            : fmt::format("{}-{}", c.min_nodes, c.max_nodes),
                 fmt::format("{}", c.jobs), fmt::format("{}", c.infra_failures),
                 FormatFigure(c.job_hours),
                 std::isnan(c.observed_mttf_s) ? "-" : FormatDuration(c.observed_mttf_s),
                 FormatDuration(c.projected_mttf_s)});
    }
    fmt::print("Observed against projected, by job size:\n{}\n", sizes.ToString());
  }
  if (s.lemons.empty()) {
    fmt::print("Lemon nodes: none\n");
    return;
  }
  Table lemons({"LEMON", "JOBS", "FAILED", "WITH_EVENT", "EXPECTED", "SINGLE_NODE", "EXPECTED",
                "Q_VALUE", "EVENTS"});
  for (const auto& l : s.lemons) {
    std::string events;
    for (const auto& [kind, n] : l.events_by_kind) {
      events += fmt::format("{}{}={}", events.empty() ? "" : ",", kind, n);
    }
    lemons.Add({l.node, fmt::format("{}", l.jobs), fmt::format("{}", l.failed_jobs),
                fmt::format("{}", l.event_failures), FormatFigure(l.expected_event_failures),
                fmt::format("{}", l.single_failures), FormatFigure(l.expected_single_failures),
                fmt::format("{:.2g}", l.q_value), events.empty() ? "-" : events});
  }
  fmt::print("Lemon nodes ({}):\n{}", s.lemons.size(), lemons.ToString());
}

}  // namespace

CLI::App* SetupFleetStats(CLI::App& fleet, FleetStatsCliOptions& o) {
  CLI::App* cmd = fleet.add_subcommand(
      "stats", "Job outcomes, failure rate, MTTF by size and lemon nodes from a Slurm log");
  cmd->add_option("--sacct", o.sacct,
                  "Output of sacct -X --parsable2 "
                  "--format=JobID,State,NNodes,AllocTRES,Start,End,NodeList,ExitCode")
      ->required();
  cmd->add_option("--events", o.events, "Node events CSV: timestamp,node,kind[,detail]");
  cmd->add_option("--window", o.window,
                  "A node event this long before a failed job's end blames the infrastructure")
      ->capture_default_str();
  cmd->add_option("--fdr", o.fdr, "False discovery rate for lemon nodes")
      ->check(InBounds(kProbabilityBounds))
      ->capture_default_str();
  cmd->add_option("--confidence", o.confidence, "Confidence of the failure-rate interval")
      ->check(InBounds(kProbabilityBounds))
      ->capture_default_str();
  cmd->add_option("--gpus-per-node", o.gpus_per_node, "GPUs per node (default: from the log)")
      ->check(InBounds(kGpusPerNodeOrLogBounds));
  cmd->add_flag("--lenient", o.lenient, "Skip and count broken lines instead of failing");
  AddTimeZoneFlag(*cmd, o.time_zone);
  cmd->add_option("--truth", o.truth, "Planted lemons (CSV node,kind) to score the findings");
  AddPlotFlag(*cmd, o.plot, "the failure rate by job size and the lemon nodes");
  cmd->add_flag("--json", o.json, "Print JSON");
  return cmd;
}

CommandResult RunFleetStats(const FleetStatsCliOptions& o) {
  reliability::FleetStatsOptions options;
  VIGIL_ASSIGN_OR_RETURN(options.attribution_window_s,
                         ParseDurationFlag("--window", o.window, kWindowBounds));
  options.fdr = o.fdr;
  options.confidence = o.confidence;
  options.gpus_per_node = o.gpus_per_node;
  VIGIL_ASSIGN_OR_RETURN(const TimeZone zone, TimeZoneFlag(o.time_zone));
  VIGIL_RETURN_IF_ERROR(CheckPlotFlag(o.plot));
  VIGIL_ASSIGN_OR_RETURN(const reliability::FleetReport report,
                         reliability::AnalyzeFleetFiles({.sacct = o.sacct,
                                                         .events = o.events,
                                                         .truth = o.truth,
                                                         .lenient = o.lenient,
                                                         .time_zone = zone},
                                                        options));
  WarnSkipped(report.sacct_skipped, o.sacct);
  WarnSkipped(report.events_skipped, o.events);
  const FleetStats& stats = report.stats;
  if (!o.plot.empty()) {
    VIGIL_RETURN_IF_ERROR(
        WritePlot(o.plot, reliability::FleetStatsPlot(stats, o.confidence, o.fdr)));
  }
  if (o.json) {
    fmt::print("{}\n", DumpJson(reliability::FleetReportJson(report), 2));
  } else {
    PrintStats(stats, o.confidence);
    if (const auto& score = report.score) {
      fmt::print("\nAgainst {}: precision {} recall {} ({} found of {} planted, {} false)\n",
                 o.truth, FormatFigure(score->precision), FormatFigure(score->recall),
                 score->true_positives, report.planted, score->false_positives);
    }
    if (!o.plot.empty()) fmt::print("\nPlot written to {}\n", o.plot);
  }
  return stats.lemons.empty() ? ExitCode::kHealthy : ExitCode::kDefect;
}

}  // namespace vigil::cli
