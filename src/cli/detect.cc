#include "cli/detect.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <httplib.h>
#include <spdlog/spdlog.h>

#include <sys/stat.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>

#include <thread>

#include "vigil/core/clock.h"
#include "vigil/core/duration.h"
#include "vigil/core/file.h"
#include "vigil/core/json.h"
#include "vigil/core/stats.h"
#include "vigil/detect/detector.h"
#include "vigil/detect/evaluate.h"
#include "vigil/server/client.h"
#include "vigil/sim/telemetry_gen.h"
#include "vigil/telemetry/prometheus_client.h"
#include "vigil/telemetry/readers.h"

namespace vigil::cli {
namespace {

// Ranges of detect's and simulate telemetry's numeric flags (docs/detect.md). A step of at least
// 10 ms keeps frame indexes of any Unix time (kUnixTimeBounds) below 2^40.
constexpr Bounds kStepBounds{.lo = 0.01, .hi = 3600, .seconds = true};
constexpr Bounds kPersistenceBounds{.lo = 1, .hi = 3600, .seconds = true};
constexpr Bounds kMinSdBounds{.lo = 0.5, .hi = 1000};
constexpr Bounds kWarmupBounds{.lo = 0, .hi = 3600, .seconds = true};
constexpr Bounds kMinEffectBounds{.lo = 0.001, .hi = 100};
constexpr Bounds kGraceBounds{.lo = 0, .hi = 7 * 86400.0, .seconds = true};
constexpr Bounds kRearmBounds{.lo = 0, .hi = 30 * 86400.0, .seconds = true};
constexpr Bounds kSinceBounds{.lo = 0, .hi = 365 * 86400.0, .seconds = true};
constexpr Bounds kPollBounds{.lo = 0.1, .hi = 3600, .seconds = true};
constexpr Bounds kFollowDurationBounds{.lo = 1, .hi = 3650 * 86400.0, .seconds = true};
constexpr Bounds kMachinesBounds{.lo = 1, .hi = 100000};
constexpr Bounds kGpusPerMachineBounds{.lo = 1, .hi = 64};
constexpr Bounds kJobLengthBounds{.lo = 1, .hi = 30 * 86400.0, .seconds = true};
constexpr Bounds kFaultsBounds{.lo = 0, .hi = 100000};
constexpr Bounds kOnsetBounds{.lo = 0, .hi = 30 * 86400.0, .seconds = true};
constexpr Bounds kSpeedBounds{.lo = 0.01, .hi = 1000};
// Simulated telemetry costs about 5 KB and 50 us per machine-second (8 GPUs): at most this many
// machine-seconds (some 50 GB of CSV, or that much generated behind --serve).
constexpr double kMaxMachineSeconds = 1e7;

Result<std::string> FormatOf(const std::string& path, const std::string& format) {
  if (format != "auto") return format;
  if (path.ends_with(".csv")) return std::string("csv");
  if (path.ends_with(".jsonl") || path.ends_with(".json")) return std::string("jsonl");
  if (path.ends_with(".prom") || path.ends_with(".txt") || path.ends_with(".metrics")) {
    return std::string("prom");
  }
  return Status::InvalidArgument(fmt::format(
      "{}: cannot tell the format from the name; give --format csv, jsonl or prom", path));
}

// Orders points by time for the detector; equal times keep their order (file order, series order).
void SortByTime(std::vector<telemetry::Point>& points) {
  std::stable_sort(
      points.begin(), points.end(),
      [](const telemetry::Point& a, const telemetry::Point& b) { return a.time < b.time; });
}

// Reads every input file into points, in time order.
Status ReadInputs(const DetectOptions& o, telemetry::Normalizer& names,
                  std::vector<telemetry::Point>* points, int64_t* skipped) {
  for (const std::string& path : o.inputs) {
    VIGIL_ASSIGN_OR_RETURN(const std::string format, FormatOf(path, o.format));
    VIGIL_ASSIGN_OR_RETURN(const std::string text, ReadFile(path));
    telemetry::ReadOptions ro;
    ro.source = path;
    ro.lenient = o.lenient;
    ro.skipped = skipped;
    if (format == "prom") {
      // A saved scrape without timestamps was taken when the file was written.
      struct stat st {};
      if (stat(path.c_str(), &st) == 0) ro.default_time = static_cast<double>(st.st_mtime);
    }
    telemetry::Point p;
    const telemetry::SampleSink sink = [&](const telemetry::RawSample& r) {
      if (names.Normalize(r, &p)) points->push_back(p);
    };
    if (format == "csv") {
      VIGIL_RETURN_IF_ERROR(telemetry::ParseLongCsv(text, ro, sink));
    } else if (format == "jsonl") {
      VIGIL_RETURN_IF_ERROR(telemetry::ParseTelemetryJsonl(text, ro, sink));
    } else {
      VIGIL_RETURN_IF_ERROR(telemetry::ParseExposition(text, ro, sink));
    }
  }
  SortByTime(*points);
  return Status::Ok();
}

std::string EvidenceText(const detect::Alert& a) {
  std::string out;
  for (const detect::Evidence& e : a.evidence) {
    if (!out.empty()) out += ", ";
    if (a.kind == "divergence") {
      out += fmt::format("{} {} {} vs {} ({:+.1f} sd)", e.signal, e.stat, FormatFigure(e.value),
                         FormatFigure(e.peer_median), e.deviation);
    } else {
      out += fmt::format("{} = {}", e.signal, FormatFigure(e.value));
    }
  }
  return out;
}

// Sends alerts as they come to the terminal, to --out (line by line in follow mode) and to the
// fleet service of --report.
class AlertOutput {
 public:
  AlertOutput(const DetectOptions& o, server::ReportClient* reporter, const Clock& clock)
      : o_(o), reporter_(reporter), clock_(clock) {}

  // `last`: the run's final alerts, sent even while a failed post says to wait.
  Status Add(std::vector<detect::Alert> alerts, bool last = false) {
    for (detect::Alert& a : alerts) {
      if (!o_.json) {
        fmt::print("ALERT {} {} {}{} onset {} detected {} (+{:.0f} s): {}\n", a.machine, a.kind,
                   a.rule, a.component.empty() ? "" : " " + a.component, FormatUtc(a.onset),
                   FormatUtc(a.detected), a.detected - a.onset, EvidenceText(a));
        std::fflush(stdout);
      }
      const std::string line = DumpJson(detect::AlertToJson(a)) + "\n";
      if (o_.follow && !o_.out.empty()) VIGIL_RETURN_IF_ERROR(AppendToFile(o_.out, line));
      if (reporter_ != nullptr) {
        unsent_ += line;
        ++unsent_count_;
      }
      all_.push_back(std::move(a));
    }
    return Send(last);
  }

  const std::vector<detect::Alert>& all() const { return all_; }

  // OK when the server has every alert; Unavailable saying how many it never received.
  Status Delivered() const {
    if (unsent_count_ == 0) return Status::Ok();
    return Status::Unavailable(fmt::format("{} alerts not sent: {}{}", unsent_count_, last_error_,
                                           o_.out.empty() ? "" : "; they are in " + o_.out));
  }

 private:
  // Posts the alerts not sent yet. A server that cannot be reached keeps them for a later try,
  // after a wait that doubles with each failure (a server that does not answer holds a poll for
  // the client's time-out); a server that refuses them (a wrong token) is an error.
  Status Send(bool last) {
    if (unsent_count_ == 0) return Status::Ok();
    if (!last && clock_.MonotonicSeconds() < next_try_) return Status::Ok();
    Result<Json> answer = reporter_->PostAlerts(unsent_);
    if (answer.ok()) {
      spdlog::info("{}: {} alerts sent", o_.report, unsent_count_);
      unsent_.clear();
      unsent_count_ = 0;
      retry_.Reset();
      return Status::Ok();
    }
    if (answer.status().code() != StatusCode::kUnavailable) return answer.status();
    last_error_ = answer.status().message();
    if (last) return Status::Ok();
    const double wait = retry_.Fail();
    next_try_ = clock_.MonotonicSeconds() + wait;
    spdlog::warn("{} ({} alerts kept; next try in {})", last_error_, unsent_count_,
                 FormatDuration(wait));
    return Status::Ok();
  }

  const DetectOptions& o_;
  server::ReportClient* reporter_;
  const Clock& clock_;
  Backoff retry_{5, 300};
  double next_try_ = 0;  // monotonic seconds
  std::vector<detect::Alert> all_;
  std::string unsent_;  // JSONL
  size_t unsent_count_ = 0;
  std::string last_error_;
};

Result<detect::DetectorOptions> DetectorOptionsOf(const DetectOptions& o) {
  detect::DetectorOptions d;
  VIGIL_ASSIGN_OR_RETURN(d.step, ParseDurationFlag("--step", o.step, kStepBounds));
  VIGIL_ASSIGN_OR_RETURN(d.missing_grace, ParseDurationFlag("--grace", o.grace, kGraceBounds));
  VIGIL_ASSIGN_OR_RETURN(d.rearm, ParseDurationFlag("--rearm", o.rearm, kRearmBounds));
  VIGIL_ASSIGN_OR_RETURN(d.peer.persistence_s,
                         ParseDurationFlag("--persistence", o.persistence, kPersistenceBounds));
  VIGIL_ASSIGN_OR_RETURN(d.peer.warmup_s, ParseDurationFlag("--warmup", o.warmup, kWarmupBounds));
  VIGIL_RETURN_IF_ERROR(CheckBounds("--min-sd", o.min_sd, kMinSdBounds));
  VIGIL_RETURN_IF_ERROR(CheckBounds("--min-effect", o.min_effect, kMinEffectBounds));
  d.peer.z_min = o.min_sd;
  d.peer.effect_min = o.min_effect;
  return d;
}

// Polls Prometheus: the first query reaches back --since, then each poll fetches what arrived.
Status FollowPrometheus(const DetectOptions& o, telemetry::Normalizer& names,
                        detect::Detector& detector, AlertOutput& output, int64_t* skipped) {
  VIGIL_ASSIGN_OR_RETURN(auto client, telemetry::PrometheusClient::Create(o.prometheus, 10, o.tls));
  VIGIL_ASSIGN_OR_RETURN(const double since, ParseDurationFlag("--since", o.since, kSinceBounds));
  VIGIL_ASSIGN_OR_RETURN(const double step, ParseDurationFlag("--step", o.step, kStepBounds));
  VIGIL_ASSIGN_OR_RETURN(const double poll, ParseDurationFlag("--poll", o.poll, kPollBounds));
  double duration = 0;
  if (!o.duration.empty()) {
    VIGIL_ASSIGN_OR_RETURN(duration,
                           ParseDurationFlag("--duration", o.duration, kFollowDurationBounds));
  }
  const std::atomic<bool>& interrupted = InstallInterruptFlag();
  Clock& clock = SystemClock();
  const double started = clock.WallSeconds();
  // Prometheus stamps a scrape when it starts; leave the newest seconds for late scrapes.
  constexpr double kSettle = 2;
  double from = std::floor(started - since);
  std::vector<telemetry::Point> batch;
  Backoff retry(poll, std::max(poll, 60.0));
  Status last_query;
  for (;;) {
    double wait = poll;
    const double to = std::floor(clock.WallSeconds() - kSettle);
    if (to >= from) {
      batch.clear();
      telemetry::Point p;
      const Status s = client->QueryRange(
          o.selector, from, to, step,
          [&](const telemetry::RawSample& r) {
            if (names.Normalize(r, &p)) batch.push_back(p);
          },
          skipped);
      last_query = s;
      if (!s.ok()) {
        if (!o.follow) return s;
        wait = retry.Fail();
        spdlog::warn("{} (retrying in {})", s.message(), FormatDuration(wait));
      } else {
        retry.Reset();
        SortByTime(batch);
        for (const telemetry::Point& q : batch) detector.Feed(q);
        detector.AdvanceTo(to + step);
        from = to + step;
        VIGIL_RETURN_IF_ERROR(output.Add(detector.TakeAlerts()));
        spdlog::debug("{} points up to {}", batch.size(), FormatUtc(to));
      }
    }
    if (!o.follow) break;
    if (interrupted.load() || (duration > 0 && clock.WallSeconds() - started >= duration)) break;
    if (duration > 0) wait = std::min(wait, started + duration - clock.WallSeconds());
    for (double waited = 0; waited < wait && !interrupted.load(); waited += 0.1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  // A server that never answered judged nothing: that is no healthy job (exit 3, could not run).
  if (names.counts().accepted == 0 && !last_query.ok()) {
    return Status::Unavailable(
        fmt::format("no samples to judge; the last query failed: {}", last_query.message()));
  }
  detector.Flush();
  return output.Add(detector.TakeAlerts(), /*last=*/true);
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
                "A deviation from the peers alerts once it has lasted this long (and 3 samples)")
      ->capture_default_str();
  c->add_option("--warmup", o.warmup,
                "A group's first minutes (a job's start): learned, nobody judged on divergence")
      ->capture_default_str();
  c->add_option("--min-sd", o.min_sd, "... by at least this many of the peers' spreads")
      ->check(InBounds(kMinSdBounds))
      ->capture_default_str();
  c->add_option("--min-effect", o.min_effect,
                "... and by at least this share of the value its peers make expected")
      ->check(InBounds(kMinEffectBounds))
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
  VIGIL_ASSIGN_OR_RETURN(const detect::DetectorOptions options, DetectorOptionsOf(o));
  // The Prometheus flags are checked in every mode: a value out of range is an error even where
  // it would not be used.
  VIGIL_RETURN_IF_ERROR(ParseDurationFlag("--since", o.since, kSinceBounds).status());
  VIGIL_RETURN_IF_ERROR(ParseDurationFlag("--poll", o.poll, kPollBounds).status());
  if (!o.duration.empty()) {
    VIGIL_RETURN_IF_ERROR(
        ParseDurationFlag("--duration", o.duration, kFollowDurationBounds).status());
  }
  if (!o.out.empty()) VIGIL_RETURN_IF_ERROR(CheckWritable(o.out));
  VIGIL_ASSIGN_OR_RETURN(const std::unique_ptr<server::ReportClient> reporter,
                         server::ReporterOf(o.report, o.token_file, o.tls));
  std::vector<detect::FaultLabel> labels;
  if (!o.labels.empty()) {
    VIGIL_ASSIGN_OR_RETURN(const std::string text, ReadFile(o.labels));
    VIGIL_ASSIGN_OR_RETURN(labels, detect::ParseLabels(text, o.labels));
  }
  telemetry::SignalMap map = telemetry::SignalMap::Default();
  if (!o.signals.empty()) VIGIL_RETURN_IF_ERROR(map.AddYamlFile(o.signals));
  const bool passthrough =
      o.passthrough == "true" || (o.passthrough == "auto" && o.prometheus.empty());
  telemetry::Normalizer names(std::move(map), passthrough);
  detect::Detector detector(options, names);
  AlertOutput output(o, reporter.get(), SystemClock());
  int64_t skipped = 0;
  const auto started = std::chrono::steady_clock::now();
  if (o.prometheus.empty()) {
    std::vector<telemetry::Point> points;
    VIGIL_RETURN_IF_ERROR(ReadInputs(o, names, &points, &skipped));
    for (const telemetry::Point& p : points) detector.Feed(p);
    detector.Flush();
    VIGIL_RETURN_IF_ERROR(output.Add(detector.TakeAlerts(), /*last=*/true));
  } else {
    VIGIL_RETURN_IF_ERROR(FollowPrometheus(o, names, detector, output, &skipped));
  }
  // Nothing judged is not a healthy job: an empty file, a header only, a selector that matches
  // no series, or every sample dropped.
  if (names.counts().accepted == 0) {
    const telemetry::NormalizerCounts& n = names.counts();
    const std::string source =
        o.prometheus.empty() ? fmt::format("{}", fmt::join(o.inputs, ", ")) : o.prometheus;
    return Status::InvalidArgument(fmt::format(
        "{}: no samples to judge (dropped: {} unmapped, {} missing values, {} duplicates, {} out "
        "of order, {} counter bases; {} malformed lines skipped)",
        source, n.unmapped, n.not_finite, n.duplicate, n.out_of_order, n.counter_bases, skipped));
  }
  const std::vector<detect::Alert>& alerts = output.all();
  if (!o.out.empty() && !o.follow) {
    std::string jsonl;
    for (const detect::Alert& a : alerts) jsonl += DumpJson(detect::AlertToJson(a)) + "\n";
    VIGIL_RETURN_IF_ERROR(WriteFileAtomic(o.out, jsonl));
  }
  const telemetry::NormalizerCounts& n = names.counts();
  spdlog::info(
      "{} samples from {} machines in {:.2f} s; dropped: {} unmapped, {} missing values, {} "
      "duplicates, {} out of order, {} late; {} malformed lines skipped",
      n.accepted, names.machines().size(), SecondsSince(started), n.unmapped, n.not_finite,
      n.duplicate, n.out_of_order, detector.late_points(), skipped);
  if (o.json) {
    Json out{{"alerts", Json::array()},
             {"samples", n.accepted},
             {"machines", names.machines().size()},
             {"dropped", Json{{"unmapped", n.unmapped},
                              {"missing", n.not_finite},
                              {"duplicate", n.duplicate},
                              {"out_of_order", n.out_of_order},
                              {"late", detector.late_points()},
                              {"malformed_lines", skipped}}}};
    for (const detect::Alert& a : alerts) out["alerts"].push_back(detect::AlertToJson(a));
    if (!o.labels.empty()) out["score"] = detect::ScoreToJson(detect::ScoreAlerts(alerts, labels));
    fmt::print("{}\n", DumpJson(out, 2));
  } else {
    if (alerts.empty()) fmt::print("No alert: every machine behaves like its peers.\n");
    if (!o.labels.empty()) {
      const detect::Score s = detect::ScoreAlerts(alerts, labels);
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
  VIGIL_RETURN_IF_ERROR(output.Delivered());
  return alerts.empty() ? ExitCode::kHealthy : ExitCode::kDefect;
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

namespace {

Status ServeTelemetry(const SimulateTelemetryOptions& o, sim::TelemetryGenerator& gen) {
  VIGIL_ASSIGN_OR_RETURN(const auto host_port, ParseHostPort("--serve", o.serve));
  const auto& [host, port] = host_port;
  httplib::Server server;
  std::mutex mu;
  int64_t next = 0;  // the next second the generator steps to
  const double started = SystemClock().WallSeconds();
  const auto seconds = static_cast<int64_t>(gen.job().duration_s);
  std::string last;
  server.Get("/metrics", [&](const httplib::Request&, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mu);
    const auto now = std::min<int64_t>(
        seconds - 1, static_cast<int64_t>((SystemClock().WallSeconds() - started) * o.speed));
    while (next <= now) last = gen.Exposition(next++);
    res.set_content(last, "text/plain; version=0.0.4");
  });
  const int bound =
      port == 0 ? server.bind_to_any_port(host) : (server.bind_to_port(host, port) ? port : -1);
  if (bound < 0) return Status::IoError(fmt::format("--serve: cannot listen on {}", o.serve));
  if (!o.port_file.empty())
    VIGIL_RETURN_IF_ERROR(WriteFileAtomic(o.port_file, fmt::format("{}\n", bound)));
  spdlog::info("serving {} machines at http://{}:{}/metrics for {}", gen.job().machines, host,
               bound, FormatDuration(gen.job().duration_s / o.speed));
  std::thread listener([&] { server.listen_after_bind(); });
  const std::atomic<bool>& interrupted = InstallInterruptFlag();
  while (!interrupted.load() &&
         SystemClock().WallSeconds() - started < gen.job().duration_s / o.speed) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  server.stop();
  listener.join();
  return Status::Ok();
}

}  // namespace

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
    VIGIL_RETURN_IF_ERROR(ServeTelemetry(o, gen));
    return ExitCode::kHealthy;
  }
  const bool jsonl = o.out.ends_with(".jsonl") || o.out.ends_with(".json");
  // Normalised: counters as rates, exporter names as signal names (docs/formats.md).
  telemetry::Normalizer names(telemetry::SignalMap::Default(), false);
  VIGIL_ASSIGN_OR_RETURN(AtomicFile file, AtomicFile::Create(o.out));
  std::string buf(jsonl ? "" : telemetry::kLongCsvHeader);
  telemetry::Point p;
  int64_t rows = 0;
  const auto seconds = static_cast<int64_t>(job.duration_s);
  for (int64_t t = 0; t < seconds; ++t) {
    gen.Emit(t, [&](const telemetry::RawSample& r) {
      if (!names.Normalize(r, &p)) return;
      ++rows;
      telemetry::RawSample normalised = r;
      normalised.metric = names.signals()[p.signal].name;
      normalised.value = p.value;
      (jsonl ? telemetry::AppendTelemetryJsonl : telemetry::AppendLongCsv)(normalised, &buf);
    });
    if (buf.size() > (4 << 20)) {
      VIGIL_RETURN_IF_ERROR(file.Append(buf));
      buf.clear();
    }
  }
  VIGIL_RETURN_IF_ERROR(file.Append(buf));
  VIGIL_RETURN_IF_ERROR(file.Commit());
  spdlog::info("wrote {} samples of {} machines over {} to {}", rows, job.machines,
               FormatDuration(job.duration_s), o.out);
  return ExitCode::kHealthy;
}

}  // namespace vigil::cli
