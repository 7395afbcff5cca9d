#include "cli/simulate.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>

#include "vigil/core/clock.h"
#include "vigil/core/duration.h"
#include "vigil/core/json.h"
#include "vigil/eval/fleet_files.h"
#include "vigil/eval/fleet_gen.h"
#include "vigil/server/telemetry_exporter.h"
#include "vigil/sim/cluster_files.h"
#include "vigil/sim/job_plot.h"
#include "vigil/sim/job_sim.h"
#include "vigil/sim/telemetry_sim.h"

namespace vigil::cli {
namespace {

// Ranges of the simulators' own flags (docs/reliability.md, docs/validate.md, docs/detect.md);
// simulate telemetry's are those of the library (vigil/sim/telemetry_sim.h).
constexpr Bounds kShapeBounds{.lo = 0.05, .hi = 20};
constexpr Bounds kRunLengthBounds{.lo = 1, .hi = 3650 * 86400.0, .seconds = true};
constexpr Bounds kRepairBounds{.lo = 0, .hi = 365 * 86400.0, .seconds = true};
constexpr Bounds kSparesBounds{.lo = 0, .hi = 1048576};
constexpr Bounds kRunsBounds{.lo = 1, .hi = 1e6};
constexpr Bounds kClusterDaysBounds{.lo = 0.01, .hi = 3650};
constexpr Bounds kLemonsBounds{.lo = 0, .hi = 1048576};
constexpr Bounds kLemonFactorBounds{.lo = 1, .hi = 1e4};
constexpr Bounds kSweepPointsBounds{.lo = 1, .hi = 1000};
constexpr Bounds kSpeedBounds{.lo = 0.01, .hi = 1000};

Result<sim::JobSimOptions> JobSimOptionsOf(const SimulateJobOptions& o) {
  sim::JobSimOptions s;
  VIGIL_ASSIGN_OR_RETURN(s.nodes, WholeJobNodes(o.size));
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
  return s;
}

Result<sim::TelemetrySimOptions> TelemetrySimOptionsOf(const SimulateTelemetryOptions& o) {
  sim::TelemetrySimOptions t;
  t.machines = o.machines;
  t.gpus = o.gpus;
  VIGIL_ASSIGN_OR_RETURN(t.duration_s,
                         ParseDurationFlag("--duration", o.duration, sim::kJobLengthBounds));
  t.faults = o.faults;
  VIGIL_ASSIGN_OR_RETURN(t.kinds, sim::ParseFaultKinds(o.kinds));
  if (!o.fault_from.empty()) {
    VIGIL_ASSIGN_OR_RETURN(t.fault_from_s,
                           ParseDurationFlag("--fault-from", o.fault_from, sim::kOnsetBounds));
  }
  if (!o.fault_to.empty()) {
    VIGIL_ASSIGN_OR_RETURN(t.fault_to_s,
                           ParseDurationFlag("--fault-to", o.fault_to, sim::kOnsetBounds));
  }
  t.events = !o.no_events;
  t.seed = o.seed;
  t.start = o.start;
  return t;
}

}  // namespace

CLI::App* SetupSimulateJob(CLI::App& simulate, SimulateJobOptions& o) {
  CLI::App* j = simulate.add_subcommand(
      "job", "Monte Carlo of one job under node failures: ETTR distribution and where time goes");
  AddJobSizeFlags(*j, o.size);
  j->add_option("--rate", o.rate, "Failures per 1000 node-days")
      ->check(InBounds(kFailureRateBounds))
      ->capture_default_str();
  j->add_option("--distribution", o.distribution, "Time between failures of a node")
      ->check(CLI::IsMember({"exponential", "weibull"}))
      ->capture_default_str();
  j->add_option("--shape", o.shape, "Weibull shape (<1 infant mortality, >1 wear-out)")
      ->check(InBounds(kShapeBounds))
      ->capture_default_str();
  j->add_option("--days", o.days, "Wall-clock length of each run")->capture_default_str();
  j->add_option("--detect", o.detect, "Time to notice a failure")->capture_default_str();
  j->add_option("--restart", o.restart, "Restart and initialisation time")->capture_default_str();
  j->add_option("--queue", o.queue, "Wait for a replacement node when no spare is ready")
      ->capture_default_str();
  j->add_option("--interval", o.interval, "Compute time between checkpoints")
      ->capture_default_str();
  j->add_option("--write", o.write, "Checkpoint write time")->capture_default_str();
  j->add_flag("--async", o.async, "Checkpoint writes overlap compute (no stall)");
  j->add_option("--spares", o.spares, "Hot spare nodes")
      ->check(InBounds(kSparesBounds))
      ->capture_default_str();
  j->add_option("--repair", o.repair, "Until a failed node is a spare again")
      ->capture_default_str();
  j->add_option("--runs", o.runs, "Independent runs")
      ->check(InBounds(kRunsBounds))
      ->capture_default_str();
  j->add_option("--seed", o.seed, "Random seed")->capture_default_str();
  AddPlotFlag(*j, o.plot, "where the time of the mean run went (hours, stacked)");
  j->add_flag("--json", o.json, "Print JSON");
  return j;
}

CommandResult RunSimulateJob(const SimulateJobOptions& o) {
  VIGIL_ASSIGN_OR_RETURN(const sim::JobSimOptions s, JobSimOptionsOf(o));
  VIGIL_RETURN_IF_ERROR(CheckPlotFlag(o.plot));
  const auto started = std::chrono::steady_clock::now();
  VIGIL_ASSIGN_OR_RETURN(const sim::JobSimComparison both, sim::SimulateJobAndFormula(s));
  spdlog::debug("simulated {} runs in {:.2f} s", s.runs, SecondsSince(started));
  const sim::JobSimResult& r = both.simulated;
  if (!o.plot.empty()) VIGIL_RETURN_IF_ERROR(WritePlot(o.plot, sim::JobTimePlot(s, r)));
  const double gpus = static_cast<double>(s.nodes * o.size.gpus_per_node);
  const sim::TimeBreakdown& f = r.mean_fraction;
  const std::pair<const char*, double> parts[] = {
      {"productive", f.productive}, {"recompute", f.recompute}, {"detect", f.detect},
      {"restart", f.restart},       {"queue", f.queue},         {"checkpoint", f.checkpoint}};
  if (o.json) {
    Json breakdown = Json::object();
    for (const auto& [name, value] : parts) breakdown[name] = value;
    Json out{{"nodes", s.nodes},
             {"gpus", gpus},
             {"runs", s.runs},
             {"duration_s", s.duration_s},
             {"ettr", Json{{"mean", r.mean}, {"p5", r.p5}, {"p95", r.p95}}},
             {"failures_per_run", r.mean_failures},
             {"time_fractions", std::move(breakdown)}};
    if (both.formula) {
      out["formula"] = Json{{"ettr", both.formula->ettr}, {"in_domain", both.formula->in_domain}};
    }
    fmt::print("{}\n", DumpJson(out, 2));
    return ExitCode::kHealthy;
  }
  fmt::print("{} runs of {} on {} nodes ({} GPUs), {} failures per 1000 node-days ({})\n\n", s.runs,
             FormatDuration(s.duration_s), s.nodes, FormatFigure(gpus),
             s.failures_per_1000_node_days, o.distribution);
  fmt::print("ETTR  mean {}  p5 {}  p95 {}   failures per run {}\n\n", FormatFigure(r.mean),
             FormatFigure(r.p5), FormatFigure(r.p95), FormatFigure(r.mean_failures));
  Table table({"WHERE THE TIME WENT", "FRACTION", "PER RUN"});
  for (const auto& [name, value] : parts) {
    table.Add({name, FormatFigure(value), FormatDuration(value * s.duration_s)});
  }
  fmt::print("{}", table.ToString());
  if (both.formula) {
    fmt::print(
        "\nAnalytic formula (u0 = detect + restart): ETTR {}{}\n", FormatFigure(both.formula->ettr),
        both.formula->in_domain ? ", inside its domain"
                                : ", outside its domain: the simulation is the reference here");
  }
  if (!o.plot.empty()) fmt::print("\nPlot written to {}\n", o.plot);
  return ExitCode::kHealthy;
}

CLI::App* SetupSimulateCluster(CLI::App& simulate, SimulateClusterOptions& o) {
  CLI::App* c = simulate.add_subcommand(
      "cluster", "Generate a Slurm sacct log with planted lemon nodes (and node events)");
  c->add_option("--nodes", o.nodes, "Nodes in the cluster")
      ->check(InBounds(kNodesBounds))
      ->capture_default_str();
  c->add_option("--days", o.days, "Days of history")
      ->check(InBounds(kClusterDaysBounds))
      ->capture_default_str();
  c->add_option("--lemons", o.lemons, "Planted lemon nodes")
      ->check(InBounds(kLemonsBounds))
      ->capture_default_str();
  c->add_option("--lemon-factor", o.lemon_factor, "How much more often a lemon fails")
      ->check(InBounds(kLemonFactorBounds))
      ->capture_default_str();
  c->add_option("--rate", o.rate, "Healthy nodes' failures per 1000 node-days")
      ->check(InBounds(kFailureRateBounds))
      ->capture_default_str();
  c->add_option("--gpus-per-node", o.gpus_per_node, "GPUs per node")
      ->check(InBounds(kGpusPerNodeBounds))
      ->capture_default_str();
  c->add_option("--seed", o.seed, "Random seed")->capture_default_str();
  c->add_option("--out-sacct", o.out_sacct, "Where to write the sacct --parsable2 log")->required();
  c->add_option("--out-events", o.out_events, "Where to write the node events CSV");
  c->add_option("--truth", o.truth, "Where to write the planted lemons (CSV)");
  AddTimeZoneFlag(*c, o.time_zone);
  c->add_flag("--json", o.json, "Print a JSON summary");
  return c;
}

CommandResult RunSimulateCluster(const SimulateClusterOptions& o) {
  sim::ClusterSimOptions s;
  VIGIL_ASSIGN_OR_RETURN(s.time_zone, TimeZoneFlag(o.time_zone));
  s.nodes = o.nodes;
  s.days = o.days;
  s.lemons = o.lemons;
  s.seed = o.seed;
  s.gpus_per_node = o.gpus_per_node;
  s.failures_per_1000_node_days = o.rate;
  s.lemon_factor = o.lemon_factor;
  VIGIL_ASSIGN_OR_RETURN(const sim::ClusterSimOutput out,
                         sim::WriteSimulatedCluster(
                             s, {.sacct = o.out_sacct, .events = o.out_events, .truth = o.truth}));
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

CLI::App* SetupSimulateFleet(CLI::App& simulate, SimulateFleetOptions& o) {
  CLI::App* cmd = simulate.add_subcommand(
      "fleet", "Generate a fleet's benchmark results with planted defects (NDv4-like figures)");
  cmd->add_option("--nodes", o.nodes, "Nodes")
      ->check(InBounds(kNodesBounds))
      ->capture_default_str();
  cmd->add_option("--defect-rate", o.defect_rate, "Share of nodes with a planted defect")
      ->check(InBounds(kShareBounds))
      ->capture_default_str();
  cmd->add_option("--noisy-rate", o.noisy_rate,
                  "Share of healthy nodes with twice the jitter and a node-wide offset")
      ->check(InBounds(kShareBounds))
      ->capture_default_str();
  cmd->add_option("--missing-rate", o.missing_rate, "Share of nodes missing one benchmark")
      ->check(InBounds(kShareBounds))
      ->capture_default_str();
  cmd->add_option("--second-class", o.second_class, "Share of 8x H100 nodes (the rest A100)")
      ->check(InBounds(kShareBounds))
      ->capture_default_str();
  cmd->add_option("--sweep-points", o.sweep_points,
                  "Message sizes in the IB and NCCL sweeps (99 gives about 1,000 metrics a node)")
      ->check(InBounds(kSweepPointsBounds))
      ->capture_default_str();
  cmd->add_option("--seed", o.seed, "Random seed")->capture_default_str();
  cmd->add_option("--out", o.out, "Fleet summary JSONL to write")->required();
  cmd->add_option("--truth", o.truth, "Planted defects CSV to write");
  return cmd;
}

CommandResult RunSimulateFleet(const SimulateFleetOptions& o) {
  eval::FleetFilesRequest request;
  request.out = o.out;
  request.truth = o.truth;
  eval::FleetGenOptions& g = request.fleet;
  g.nodes = o.nodes;
  g.defect_rate = o.defect_rate;
  g.noisy_rate = o.noisy_rate;
  g.missing_rate = o.missing_rate;
  g.second_class = o.second_class;
  g.sweep_points = o.sweep_points;
  g.seed = o.seed;
  VIGIL_ASSIGN_OR_RETURN(const eval::FleetFilesWritten fleet, eval::GenerateFleetFiles(request));
  fmt::print("{} nodes, {} planted defects; wrote {}{}\n", fleet.nodes, fleet.defects, o.out,
             o.truth.empty() ? "" : " and " + o.truth);
  return ExitCode::kHealthy;
}

CLI::App* SetupSimulateTelemetry(CLI::App& simulate, SimulateTelemetryOptions& o) {
  CLI::App* c = simulate.add_subcommand(
      "telemetry", "Per-second telemetry of a training job with labelled faults (files or live)");
  c->add_option("--machines", o.machines, "Machines in the job")
      ->check(InBounds(sim::kMachinesBounds))
      ->capture_default_str();
  c->add_option("--gpus", o.gpus, "GPUs per machine")
      ->check(InBounds(sim::kGpusPerMachineBounds))
      ->capture_default_str();
  c->add_option("--duration", o.duration, "Length of the job")->capture_default_str();
  c->add_option("--faults", o.faults, "Faults to inject, on distinct machines")
      ->check(InBounds(sim::kFaultsBounds))
      ->capture_default_str();
  std::string kinds;
  for (int k = 0; k < sim::kTelemetryFaultKinds; ++k) {
    kinds += fmt::format("{}{}", k ? ", " : "",
                         sim::FaultKindName(static_cast<sim::TelemetryFaultKind>(k)));
  }
  c->add_option("--kinds", o.kinds, "Fault kinds, used in turn (default: all): " + kinds)
      ->delimiter(',');
  c->add_option("--fault-from", o.fault_from, "Earliest onset (default: a quarter in)");
  c->add_option("--fault-to", o.fault_to, "Latest onset (default: three quarters in)");
  c->add_flag("--no-events", o.no_events, "No checkpoints, evaluation pauses or stalls");
  c->add_option("--seed", o.seed, "Random seed")->capture_default_str();
  c->add_option("--start", o.start, "Unix time of the first sample (files)")
      ->check(InBounds(kUnixTimeBounds))
      ->capture_default_str();
  c->add_option("--out", o.out, "Write normalised telemetry here (.csv or .jsonl)");
  c->add_option("--labels", o.labels, "Write the faults here (labels CSV)");
  c->add_option("--serve", o.serve,
                "Serve /metrics like dcgm-exporter and node-exporter at HOST:PORT (port 0: any)");
  c->add_option("--port-file", o.port_file, "--serve: write the port bound here");
  c->add_option("--speed", o.speed, "--serve: simulated seconds per real second")
      ->check(InBounds(kSpeedBounds))
      ->capture_default_str();
  return c;
}

CommandResult RunSimulateTelemetry(const SimulateTelemetryOptions& o) {
  if (o.out.empty() == o.serve.empty()) {
    return Status::InvalidArgument("give either --out FILE or --serve HOST:PORT");
  }
  VIGIL_ASSIGN_OR_RETURN(const sim::TelemetrySimOptions t, TelemetrySimOptionsOf(o));
  if (o.serve.empty()) {
    VIGIL_ASSIGN_OR_RETURN(const int64_t rows, sim::SimulateTelemetryFile(t, o.out, o.labels));
    spdlog::info("wrote {} samples of {} machines over {} to {}", rows, t.machines,
                 FormatDuration(t.duration_s), o.out);
    return ExitCode::kHealthy;
  }
  VIGIL_ASSIGN_OR_RETURN(const auto host_port, ParseHostPort("--serve", o.serve));
  VIGIL_ASSIGN_OR_RETURN(const std::unique_ptr<sim::TelemetryGenerator> gen,
                         sim::LiveTelemetry(t, o.labels, SystemClock()));
  const server::ExporterOptions serve{.host = host_port.first,
                                      .port = host_port.second,
                                      .speed = o.speed,
                                      .port_file = o.port_file};
  VIGIL_RETURN_IF_ERROR(server::ServeTelemetry(*gen, serve, SystemClock(), &InstallInterruptFlag())
                            .WithContext("--serve"));
  return ExitCode::kHealthy;
}

}  // namespace vigil::cli
