#include "cli/detect.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>

#include "vigil/core/json.h"
#include "vigil/core/stats.h"
#include "vigil/detect/alert_text.h"
#include "vigil/detect/evaluate.h"
#include "vigil/detect/options.h"
#include "vigil/detect/pipeline.h"
#include "vigil/server/client.h"
#include "vigil/telemetry/frame.h"
#include "vigil/telemetry/prometheus_source.h"

namespace vigil::cli {
namespace {

void PrintAlert(const detect::Alert& a) {
  fmt::print("{}\n", detect::AlertLine(a));
  std::fflush(stdout);
}

// The flags' durations; detect::ValidateDetectionOptions checks the rest.
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
  d.peer.z_min = o.min_sd;
  d.peer.effect_min = o.min_effect;
  d.peer.strong_effect = o.strong_effect;
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
                "A deviation from the peers alerts once it has lasted this long (and 3 samples): "
                "longer than the benign events of a healthy machine")
      ->capture_default_str();
  c->add_option("--warmup", o.warmup,
                "A group's first minutes (a job's start; less after a restart; at least 12 "
                "scrape intervals): learned, nobody judged on divergence")
      ->capture_default_str();
  c->add_option("--min-sd", o.min_sd, "... by at least this many of the peers' spreads")
      ->check(InBounds(detect::kMinSdBounds))
      ->capture_default_str();
  c->add_option("--min-effect", o.min_effect,
                "... and by at least this share of the value its peers make expected")
      ->check(InBounds(detect::kMinEffectBounds))
      ->capture_default_str();
  c->add_option("--strong-effect", o.strong_effect,
                "A deviation this share off is named sooner, after half the persistence from "
                "twice it (0: never)")
      ->check(InBounds(detect::kStrongEffectBounds))
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
  if (o.passthrough != "auto") d.passthrough = o.passthrough == "true";
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

}  // namespace vigil::cli
