#include "cli/detect.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>

#include "vigil/core/clock.h"
#include "vigil/core/duration.h"
#include "vigil/core/file.h"
#include "vigil/core/json.h"
#include "vigil/core/stats.h"
#include "vigil/detect/evaluate.h"
#include "vigil/detect/options.h"
#include "vigil/detect/pipeline.h"
#include "vigil/server/client.h"
#include "vigil/server/telemetry_exporter.h"
#include "vigil/sim/telemetry_file.h"
#include "vigil/sim/telemetry_gen.h"
#include "vigil/telemetry/frame.h"
#include "vigil/telemetry/prometheus_source.h"

namespace vigil::cli {
namespace {

// Ranges of simulate telemetry's numeric flags (docs/detect.md); detect's are those of the library
// (vigil/detect/options.h, vigil/telemetry/prometheus_source.h).
constexpr Bounds kMachinesBounds{.lo = 1, .hi = 100000};
constexpr Bounds kGpusPerMachineBounds{.lo = 1, .hi = 64};
constexpr Bounds kJobLengthBounds{.lo = 1, .hi = 30 * 86400.0, .seconds = true};
constexpr Bounds kFaultsBounds{.lo = 0, .hi = 100000};
constexpr Bounds kOnsetBounds{.lo = 0, .hi = 30 * 86400.0, .seconds = true};
constexpr Bounds kSpeedBounds{.lo = 0.01, .hi = 1000};
// Simulated telemetry costs about 5 KB and 50 us per machine-second (8 GPUs): at most this many
// machine-seconds (some 50 GB of CSV, or that much generated behind --serve).
constexpr double kMaxMachineSeconds = 1e7;

std::string EvidenceText(const detect::Alert& a) {
  std::string out;
  for (const detect::Evidence& e : a.evidence) {
    if (!out.empty()) out += ", ";
    if (a.kind == detect::AlertKind::kDivergence) {
      out += fmt::format("{} {} {} vs {} ({:+.1f} sd)", e.signal, e.stat, FormatFigure(e.value),
                         FormatFigure(e.peer_median), e.deviation);
    } else {
      out += fmt::format("{} = {}", e.signal, FormatFigure(e.value));
    }
  }
  return out;
}

void PrintAlert(const detect::Alert& a) {
  fmt::print("ALERT {} {} {}{} onset {} detected {} (+{:.0f} s): {}\n", a.machine,
             detect::AlertKindName(a.kind), a.rule, a.component.empty() ? "" : " " + a.component,
             FormatUtc(a.onset), FormatUtc(a.detected), a.detected - a.onset, EvidenceText(a));
  std::fflush(stdout);
}

Result<detect::DetectorOptions> DetectorOptionsOf(const DetectOptions& o) {
  detect::DetectorOptions d;
  VIGIL_ASSIGN_OR_RETURN(d.step, ParseDurationFlag("--step", o.step, telemetry::kStepBounds));
  VIGIL_ASSIGN_OR_RETURN(d.missing_grace,
                         ParseDurationFlag("--grace", o.grace, detect::kGraceBounds));
  VIGIL_ASSIGN_OR_RETURN(d.rearm, ParseDurationFlag("--rearm", o.rearm, detect::kRearmBounds));
  VIGIL_ASSIGN_OR_RETURN(d.peer.persistence_s, ParseDurationFlag("--persistence", o.persistence,
                                                                 detect::kPersistenceBounds));
  VIGIL_ASSIGN_OR_RETURN(d.peer.warmup_s,
                         ParseDurationFlag("--warmup", o.warmup, detect::kWarmupBounds));
  VIGIL_RETURN_IF_ERROR(CheckBounds("--min-sd", o.min_sd, detect::kMinSdBounds));
  VIGIL_RETURN_IF_ERROR(CheckBounds("--min-effect", o.min_effect, detect::kMinEffectBounds));
  d.peer.z_min = o.min_sd;
  d.peer.effect_min = o.min_effect;
  return d;
}

}  // namespace

CLI::App* SetupDetect(CLI::App& app, DetectOptions& o) {
  CLI::App* c = app.add_subcommand(
      "detect", "Name the faulty machine of a training job from its telemetry (streaming)");
  c->add_option("--input", o.inputs, "Telemetry files: long CSV, JSONL or Prometheus text")
      ->check(CLI::ExistingPath);
  c->add_option("--format", o.format, "Input format")
      ->check(CLI::IsMember({"auto", "csv", "jsonl", "prom"}))
      ->capture_default_str();
  c->add_option("--prometheus", o.prometheus, "Prometheus server URL (http://host:port)");
  c->add_option("--selector", o.selector, "PromQL selector of the job's series, e.g. {job=\"x\"}");
  c->add_flag("--follow", o.follow, "Keep polling Prometheus as data arrives");
  c->add_option("--since", o.since, "How far back the first query reaches")->capture_default_str();
  c->add_option("--poll", o.poll, "--follow: time between queries")->capture_default_str();
  c->add_option("--duration", o.duration, "--follow: stop after this long (default: never)");
  c->add_option("--step", o.step, "Frame step (and query resolution)")->capture_default_str();
  c->add_option("--labels", o.labels, "Fault labels CSV: score precision, recall and latency")
      ->check(CLI::ExistingFile);
  c->add_option("--out", o.out, "Write alerts as JSONL here");
  c->add_option("--signals", o.signals, "YAML that extends the metric-to-signal map")
      ->check(CLI::ExistingFile);
  c->add_option("--passthrough", o.passthrough,
                "Unmapped metrics become signals of their own name (auto: for files only)")
      ->check(CLI::IsMember({"auto", "true", "false"}))
      ->capture_default_str();
  c->add_flag("--lenient", o.lenient, "Skip and count malformed lines instead of failing");
  c->add_option("--persistence", o.persistence,
                "A deviation from the peers seen on two signals alerts once it has lasted this "
                "long (and 3 samples); on one signal alone, twice as long")
      ->capture_default_str();
  c->add_option("--warmup", o.warmup,
                "A group's first minutes (a job's start): learned, nobody judged on divergence")
      ->capture_default_str();
  c->add_option("--min-sd", o.min_sd, "... by at least this many of the peers' spreads")
      ->check(InBounds(detect::kMinSdBounds))
      ->capture_default_str();
  c->add_option("--min-effect", o.min_effect,
                "... and by at least this share of the value its peers make expected")
      ->check(InBounds(detect::kMinEffectBounds))
      ->capture_default_str();
  c->add_option("--grace", o.grace, "Silence before a machine or component counts as missing")
      ->capture_default_str();
  c->add_option("--rearm", o.rearm,
                "A cause (machine, kind, rule, component) alerts again once clear this long")
      ->capture_default_str();
  c->add_flag("--json", o.json, "Print a JSON summary (alerts and, with --labels, the score)");
  c->add_option(
      "--report", o.report,
      "Post alerts as they are raised to a fleet service (vigil serve), http://host:port");
  c->add_option("--token-file", o.token_file, "--report: file holding the bearer token")
      ->check(CLI::ExistingFile);
  AddTlsClientFlags(*c, "--prometheus and --report", o.tls);
  return c;
}

CommandResult RunDetect(const DetectOptions& o) {
  if (o.inputs.empty() == o.prometheus.empty()) {
    return Status::InvalidArgument("give either --input FILE... or --prometheus URL");
  }
  if (!o.prometheus.empty() && o.selector.empty()) {
    return Status::InvalidArgument("--prometheus needs --selector, e.g. '{job=\"train\"}'");
  }
  if (o.follow && o.prometheus.empty())
    return Status::InvalidArgument("--follow needs --prometheus");
  detect::DetectionOptions d;
  VIGIL_ASSIGN_OR_RETURN(d.detector, DetectorOptionsOf(o));
  // The Prometheus flags are checked in every mode: a value out of range is an error even where
  // it would not be used.
  VIGIL_ASSIGN_OR_RETURN(d.poll.since,
                         ParseDurationFlag("--since", o.since, telemetry::kSinceBounds));
  VIGIL_ASSIGN_OR_RETURN(d.poll.poll, ParseDurationFlag("--poll", o.poll, telemetry::kPollBounds));
  if (!o.duration.empty()) {
    VIGIL_ASSIGN_OR_RETURN(d.poll.duration, ParseDurationFlag("--duration", o.duration,
                                                              telemetry::kFollowDurationBounds));
  }
  d.poll.selector = o.selector;
  d.poll.follow = o.follow;
  d.files.paths = o.inputs;
  d.files.format = o.format;
  d.files.lenient = o.lenient;
  d.prometheus = o.prometheus;
  d.tls = o.tls;
  d.signals = o.signals;
  d.passthrough = o.passthrough == "true" || (o.passthrough == "auto" && o.prometheus.empty());
  d.labels = o.labels;
  d.out = o.out;
  if (!o.json) d.on_alert = PrintAlert;
  VIGIL_ASSIGN_OR_RETURN(const std::unique_ptr<server::ReportClient> reporter,
                         server::ReporterOf(o.report, o.token_file, o.tls));
  if (reporter) {
    d.post = [&](std::string_view jsonl) { return reporter->PostAlerts(jsonl).status(); };
    d.post_to = o.report;
  }
  if (!o.prometheus.empty()) d.interrupted = &InstallInterruptFlag();
  const auto started = std::chrono::steady_clock::now();
  VIGIL_ASSIGN_OR_RETURN(const detect::DetectionReport r, detect::RunDetection(d));
  const telemetry::NormalizerCounts& n = r.counts;
  spdlog::info(
      "{} samples from {} machines in {:.2f} s; dropped: {} unmapped, {} missing values, {} "
      "duplicates, {} out of order, {} late; {} malformed lines skipped",
      n.accepted, r.machines, SecondsSince(started), n.unmapped, n.not_finite, n.duplicate,
      n.out_of_order, r.late_points, r.skipped);
  if (o.json) {
    Json out{{"alerts", Json::array()},
             {"samples", n.accepted},
             {"machines", r.machines},
             {"dropped", Json{{"unmapped", n.unmapped},
                              {"missing", n.not_finite},
                              {"duplicate", n.duplicate},
                              {"out_of_order", n.out_of_order},
                              {"late", r.late_points},
                              {"malformed_lines", r.skipped}}}};
    for (const detect::Alert& a : r.alerts) out["alerts"].push_back(detect::AlertToJson(a));
    if (r.score) out["score"] = detect::ScoreToJson(*r.score);
    fmt::print("{}\n", DumpJson(out, 2));
  } else {
    if (r.alerts.empty()) fmt::print("No alert: every machine behaves like its peers.\n");
    if (r.score) {
      const detect::Score& s = *r.score;
      fmt::print("\nprecision {:.3f}  recall {:.3f}  F1 {:.3f}  ({} alerts, {} of {} faults)\n",
                 s.precision(), s.recall(), s.f1(), s.alerts, s.detected, s.faults);
      Table t({"KIND", "FAULTS", "DETECTED", "MEDIAN S", "P95 S"});
      for (const auto& [kind, k] : s.by_kind) {
        t.Add({kind, std::to_string(k.faults), std::to_string(k.detected),
               k.latencies.empty() ? "-" : FormatFigure(stats::Median(k.latencies)),
               k.latencies.empty() ? "-" : FormatFigure(stats::Quantile(k.latencies, 0.95))});
      }
      fmt::print("{}", t.ToString());
    }
  }
  VIGIL_RETURN_IF_ERROR(r.delivery);
  return r.alerts.empty() ? ExitCode::kHealthy : ExitCode::kDefect;
}

CLI::App* SetupSimulateTelemetry(CLI::App& simulate, SimulateTelemetryOptions& o) {
  CLI::App* c = simulate.add_subcommand(
      "telemetry", "Per-second telemetry of a training job with labelled faults (files or live)");
  c->add_option("--machines", o.machines, "Machines in the job")
      ->check(InBounds(kMachinesBounds))
      ->capture_default_str();
  c->add_option("--gpus", o.gpus, "GPUs per machine")
      ->check(InBounds(kGpusPerMachineBounds))
      ->capture_default_str();
  c->add_option("--duration", o.duration, "Length of the job")->capture_default_str();
  c->add_option("--faults", o.faults, "Faults to inject, on distinct machines")
      ->check(InBounds(kFaultsBounds))
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
  sim::TelemetryJob job;
  job.machines = o.machines;
  job.gpus = o.gpus;
  VIGIL_ASSIGN_OR_RETURN(job.duration_s,
                         ParseDurationFlag("--duration", o.duration, kJobLengthBounds));
  if (const double work = static_cast<double>(o.machines) * job.duration_s;
      work > kMaxMachineSeconds) {
    return Status::InvalidArgument(fmt::format(
        "--machines x --duration is {:.3g} machine-seconds, more than the {:.0e} one simulation "
        "may generate",
        work, kMaxMachineSeconds));
  }
  job.events = !o.no_events;
  job.seed = o.seed;
  job.start = o.serve.empty() ? o.start : std::floor(SystemClock().WallSeconds());
  // The last sample must be readable again (detect refuses times past kUnixTimeBounds).
  VIGIL_RETURN_IF_ERROR(CheckBounds("--start + --duration", job.start + job.duration_s,
                                    kUnixTimeBounds,
                                    fmt::format("{}", job.start + job.duration_s)));
  std::vector<sim::TelemetryFaultKind> kinds;
  for (const std::string& k : o.kinds) {
    const auto kind = sim::ParseFaultKind(k);
    if (!kind) return Status::InvalidArgument(fmt::format("--kinds: unknown kind {}", Quote(k)));
    kinds.push_back(*kind);
  }
  if (kinds.empty()) {
    for (int k = 0; k < sim::kTelemetryFaultKinds; ++k) {
      kinds.push_back(static_cast<sim::TelemetryFaultKind>(k));
    }
  }
  if (o.faults > o.machines) return Status::InvalidArgument("--faults cannot exceed --machines");
  double from = job.duration_s / 4, to = job.duration_s * 3 / 4;
  if (!o.fault_from.empty()) {
    VIGIL_ASSIGN_OR_RETURN(from, ParseDurationFlag("--fault-from", o.fault_from, kOnsetBounds));
  }
  if (!o.fault_to.empty()) {
    VIGIL_ASSIGN_OR_RETURN(to, ParseDurationFlag("--fault-to", o.fault_to, kOnsetBounds));
  }
  if (from > to || to >= job.duration_s) {
    return Status::InvalidArgument(
        "fault onsets must satisfy --fault-from <= --fault-to < --duration");
  }
  job.faults = sim::RandomFaults(o.faults, kinds, job.machines, job.gpus, from, to, o.seed);
  if (!o.out.empty()) VIGIL_RETURN_IF_ERROR(CheckWritable(o.out));
  sim::TelemetryGenerator gen(job);
  if (!o.labels.empty()) VIGIL_RETURN_IF_ERROR(WriteFileAtomic(o.labels, gen.LabelsCsv()));
  if (!o.serve.empty()) {
    VIGIL_ASSIGN_OR_RETURN(const auto host_port, ParseHostPort("--serve", o.serve));
    const server::ExporterOptions serve{.host = host_port.first,
                                        .port = host_port.second,
                                        .speed = o.speed,
                                        .port_file = o.port_file};
    VIGIL_RETURN_IF_ERROR(server::ServeTelemetry(gen, serve, SystemClock(), &InstallInterruptFlag())
                              .WithContext("--serve"));
    return ExitCode::kHealthy;
  }
  VIGIL_ASSIGN_OR_RETURN(const int64_t rows, sim::WriteTelemetryFile(gen, o.out));
  spdlog::info("wrote {} samples of {} machines over {} to {}", rows, job.machines,
               FormatDuration(job.duration_s), o.out);
  return ExitCode::kHealthy;
}

}  // namespace vigil::cli
