#include "cli/simulate.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>

#include "vigil/core/duration.h"
#include "vigil/core/file.h"
#include "vigil/core/json.h"
#include "vigil/reliability/models.h"
#include "vigil/sim/cluster_sim.h"
#include "vigil/sim/job_sim.h"

namespace vigil::cli {
namespace {

// Ranges of simulate job's and simulate cluster's own flags (docs/reliability.md).
constexpr Bounds kShapeBounds{.lo = 0.05, .hi = 20};
constexpr Bounds kRunLengthBounds{.lo = 1, .hi = 3650 * 86400.0, .seconds = true};
constexpr Bounds kRepairBounds{.lo = 0, .hi = 365 * 86400.0, .seconds = true};
constexpr Bounds kSparesBounds{.lo = 0, .hi = 1048576};
constexpr Bounds kRunsBounds{.lo = 1, .hi = 1e6};
constexpr Bounds kClusterDaysBounds{.lo = 0.01, .hi = 3650};
constexpr Bounds kLemonsBounds{.lo = 0, .hi = 1048576};
constexpr Bounds kLemonFactorBounds{.lo = 1, .hi = 1e4};

}  // namespace

SimulateCommands SetupSimulate(CLI::App& parent, SimulateJobOptions& job,
                               SimulateClusterOptions& cluster) {
  CLI::App* group = parent.add_subcommand("simulate", "Simulators: job timelines, cluster logs");
  group->require_subcommand(1);

  CLI::App* j = group->add_subcommand(
      "job", "Monte Carlo of one job under node failures: ETTR distribution and where time goes");
  AddJobSizeFlags(*j, job.size);
  j->add_option("--rate", job.rate, "Failures per 1000 node-days")
      ->check(InBounds(kFailureRateBounds))
      ->capture_default_str();
  j->add_option("--distribution", job.distribution, "Time between failures of a node")
      ->check(CLI::IsMember({"exponential", "weibull"}))
      ->capture_default_str();
  j->add_option("--shape", job.shape, "Weibull shape (<1 infant mortality, >1 wear-out)")
      ->check(InBounds(kShapeBounds))
      ->capture_default_str();
  j->add_option("--days", job.days, "Wall-clock length of each run")->capture_default_str();
  j->add_option("--detect", job.detect, "Time to notice a failure")->capture_default_str();
  j->add_option("--restart", job.restart, "Restart and initialisation time")->capture_default_str();
  j->add_option("--queue", job.queue, "Wait for a replacement node when no spare is ready")
      ->capture_default_str();
  j->add_option("--interval", job.interval, "Compute time between checkpoints")
      ->capture_default_str();
  j->add_option("--write", job.write, "Checkpoint write time")->capture_default_str();
  j->add_flag("--async", job.async, "Checkpoint writes overlap compute (no stall)");
  j->add_option("--spares", job.spares, "Hot spare nodes")
      ->check(InBounds(kSparesBounds))
      ->capture_default_str();
  j->add_option("--repair", job.repair, "Until a failed node is a spare again")
      ->capture_default_str();
  j->add_option("--runs", job.runs, "Independent runs")
      ->check(InBounds(kRunsBounds))
      ->capture_default_str();
  j->add_option("--seed", job.seed, "Random seed")->capture_default_str();
  j->add_flag("--json", job.json, "Print JSON");

  CLI::App* c = group->add_subcommand(
      "cluster", "Generate a Slurm sacct log with planted lemon nodes (and node events)");
  c->add_option("--nodes", cluster.nodes, "Nodes in the cluster")
      ->check(InBounds(kNodesBounds))
      ->capture_default_str();
  c->add_option("--days", cluster.days, "Days of history")
      ->check(InBounds(kClusterDaysBounds))
      ->capture_default_str();
  c->add_option("--lemons", cluster.lemons, "Planted lemon nodes")
      ->check(InBounds(kLemonsBounds))
      ->capture_default_str();
  c->add_option("--lemon-factor", cluster.lemon_factor, "How much more often a lemon fails")
      ->check(InBounds(kLemonFactorBounds))
      ->capture_default_str();
  c->add_option("--rate", cluster.rate, "Healthy nodes' failures per 1000 node-days")
      ->check(InBounds(kFailureRateBounds))
      ->capture_default_str();
  c->add_option("--gpus-per-node", cluster.gpus_per_node, "GPUs per node")
      ->check(InBounds(kGpusPerNodeBounds))
      ->capture_default_str();
  c->add_option("--seed", cluster.seed, "Random seed")->capture_default_str();
  c->add_option("--out-sacct", cluster.out_sacct, "Where to write the sacct --parsable2 log")
      ->required();
  c->add_option("--out-events", cluster.out_events, "Where to write the node events CSV");
  c->add_option("--truth", cluster.truth, "Where to write the planted lemons (CSV)");
  c->add_flag("--json", cluster.json, "Print a JSON summary");
  return {group, j, c};
}

CommandResult RunSimulateJob(const SimulateJobOptions& o) {
  sim::JobSimOptions s;
  VIGIL_ASSIGN_OR_RETURN(const double nodes, JobNodes(o.size));
  if (nodes != std::floor(nodes)) {
    return Status::InvalidArgument("--gpus must be a multiple of --gpus-per-node");
  }
  s.nodes = static_cast<int64_t>(nodes);
  s.failures_per_1000_node_days = o.rate;
  s.distribution = o.distribution == "weibull" ? sim::FailureDistribution::kWeibull
                                               : sim::FailureDistribution::kExponential;
  s.weibull_shape = o.shape;
  VIGIL_ASSIGN_OR_RETURN(s.duration_s, ParseDurationFlag("--days", o.days, kRunLengthBounds));
  VIGIL_ASSIGN_OR_RETURN(s.detect_s, ParseDurationFlag("--detect", o.detect, kOutageBounds));
  VIGIL_ASSIGN_OR_RETURN(s.restart_s, ParseDurationFlag("--restart", o.restart, kOutageBounds));
  VIGIL_ASSIGN_OR_RETURN(s.queue_s, ParseDurationFlag("--queue", o.queue, kOutageBounds));
  VIGIL_ASSIGN_OR_RETURN(s.interval_s,
                         ParseDurationFlag("--interval", o.interval, kIntervalBounds));
  VIGIL_ASSIGN_OR_RETURN(s.write_s, ParseDurationFlag("--write", o.write, kWriteBounds));
  VIGIL_ASSIGN_OR_RETURN(s.repair_s, ParseDurationFlag("--repair", o.repair, kRepairBounds));
  s.async_checkpoint = o.async;
  s.spares = o.spares;
  s.runs = o.runs;
  s.seed = o.seed;

  const auto started = std::chrono::steady_clock::now();
  VIGIL_ASSIGN_OR_RETURN(const sim::JobSimResult r, sim::SimulateJob(s));
  spdlog::debug("simulated {} runs in {:.2f} s", s.runs,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());

  // The analytic formula, where it describes the same job (exponential failures, blocking
  // checkpoints, no spares); its u0 is detection plus restart.
  const bool comparable = s.distribution == sim::FailureDistribution::kExponential &&
                          !s.async_checkpoint && s.spares == 0;
  reliability::EttrParams p;
  p.nodes = nodes;
  p.failures_per_1000_node_days = s.failures_per_1000_node_days;
  p.restart_s = s.detect_s + s.restart_s;
  p.queue_s = s.queue_s;
  p.interval_s = s.interval_s;
  p.write_s = s.write_s;
  VIGIL_ASSIGN_OR_RETURN(const reliability::EttrEstimate formula, reliability::ExpectedEttr(p));

  const sim::TimeBreakdown& f = r.mean_fraction;
  const std::pair<const char*, double> parts[] = {
      {"productive", f.productive}, {"recompute", f.recompute}, {"detect", f.detect},
      {"restart", f.restart},       {"queue", f.queue},         {"checkpoint", f.checkpoint}};
  if (o.json) {
    Json breakdown = Json::object();
    for (const auto& [name, value] : parts) breakdown[name] = value;
    Json out{{"nodes", s.nodes},
             {"gpus", nodes * o.size.gpus_per_node},
             {"runs", s.runs},
             {"duration_s", s.duration_s},
             {"ettr", Json{{"mean", r.mean}, {"p5", r.p5}, {"p95", r.p95}}},
             {"failures_per_run", r.mean_failures},
             {"time_fractions", std::move(breakdown)}};
    if (comparable) {
      out["formula"] = Json{{"ettr", formula.ettr}, {"in_domain", formula.in_domain}};
    }
    fmt::print("{}\n", DumpJson(out, 2));
    return ExitCode::kHealthy;
  }
  fmt::print("{} runs of {} on {} nodes ({} GPUs), {} failures per 1000 node-days ({})\n\n", s.runs,
             FormatDuration(s.duration_s), s.nodes, FormatFigure(nodes * o.size.gpus_per_node),
             s.failures_per_1000_node_days, o.distribution);
  fmt::print("ETTR  mean {}  p5 {}  p95 {}   failures per run {}\n\n", FormatFigure(r.mean),
             FormatFigure(r.p5), FormatFigure(r.p95), FormatFigure(r.mean_failures));
  Table table({"WHERE THE TIME WENT", "FRACTION", "PER RUN"});
  for (const auto& [name, value] : parts) {
    table.Add({name, FormatFigure(value), FormatDuration(value * s.duration_s)});
  }
  fmt::print("{}", table.ToString());
  if (comparable) {
    fmt::print("\nAnalytic formula (u0 = detect + restart): ETTR {}{}\n",
               FormatFigure(formula.ettr),
               formula.in_domain ? ", inside its domain"
                                 : ", outside its domain: the simulation is the reference here");
  }
  return ExitCode::kHealthy;
}

CommandResult RunSimulateCluster(const SimulateClusterOptions& o) {
  for (const std::string* path : {&o.out_sacct, &o.out_events, &o.truth}) {
    if (!path->empty()) VIGIL_RETURN_IF_ERROR(CheckWritable(*path));
  }
  sim::ClusterSimOptions s;
  s.nodes = o.nodes;
  s.days = o.days;
  s.lemons = o.lemons;
  s.seed = o.seed;
  s.gpus_per_node = o.gpus_per_node;
  s.failures_per_1000_node_days = o.rate;
  s.lemon_factor = o.lemon_factor;
  VIGIL_ASSIGN_OR_RETURN(const sim::ClusterSimOutput out, sim::SimulateCluster(s));
  VIGIL_RETURN_IF_ERROR(WriteFileAtomic(o.out_sacct, out.sacct));
  if (!o.out_events.empty()) VIGIL_RETURN_IF_ERROR(WriteFileAtomic(o.out_events, out.events));
  if (!o.truth.empty()) VIGIL_RETURN_IF_ERROR(WriteFileAtomic(o.truth, out.truth));
  if (o.json) {
    fmt::print("{}\n", DumpJson(Json{{"jobs", out.jobs},
                                     {"infra_failures", out.infra_failures},
                                     {"lemons", out.lemons},
                                     {"sacct", o.out_sacct}},
                                2));
  } else {
    fmt::print(
        "{} jobs on {} nodes over {} days, {} ended by a node failure, {} lemons planted; "
        "sacct log in {}\n",
        out.jobs, o.nodes, o.days, out.infra_failures, out.lemons.size(), o.out_sacct);
  }
  return ExitCode::kHealthy;
}

}  // namespace vigil::cli
