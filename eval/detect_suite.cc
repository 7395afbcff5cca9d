// The detector's scenario suite (docs/benchmarks.md, "Detector"): simulated training jobs of 8 to
// 1,024 machines with one labelled fault each, and fault-free jobs of several hours. Runs Vigil's
// streaming detector and a Minder-style baseline on the same telemetry and prints precision,
// recall, F1 and time to detection per fault kind.
//
//   detect_suite [--quick] [--threads N] [--seed S] [--json] [--verbose]
#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "minder_baseline.h"
#include "vigil/core/json.h"
#include "vigil/core/parallel.h"
#include "vigil/core/stats.h"
#include "vigil/detect/detector.h"
#include "vigil/detect/evaluate.h"
#include "vigil/sim/telemetry_gen.h"

namespace vigil::bench {
namespace {

struct Scenario {
  sim::TelemetryJob job;
};

std::vector<Scenario> Suite(bool quick, uint64_t seed) {
  std::vector<Scenario> out;
  // Faulty jobs: per kind, sizes from 8 to 1,024 machines, one fault with its onset 5 to 10
  // minutes in, watched for 15 minutes after it (long enough for the baseline's 8-minute period
  // and 4-minute continuity).
  const std::vector<int> sizes =
      quick ? std::vector<int>{8, 16}
            : std::vector<int>{8,  8,  8,  8,  8,  8,  16,  16,  16,  16,  16,  32,
                               32, 32, 32, 64, 64, 64, 128, 128, 256, 512, 1024};
  uint64_t s = seed * 1000;
  for (int k = 0; k < sim::kTelemetryFaultKinds; ++k) {
    for (int n : sizes) {
      Scenario sc;
      sc.job.machines = n;
      sc.job.seed = ++s;
      sc.job.faults =
          sim::RandomFaults(1, {static_cast<sim::TelemetryFaultKind>(k)}, n, 8, 300, 600, s);
      sc.job.duration_s = sc.job.faults[0].onset_s + 900;
      out.push_back(std::move(sc));
    }
  }
  // Fault-free jobs of three hours (quick: 30 minutes).
  const int healthy = quick ? 2 : 20;
  for (int i = 0; i < healthy; ++i) {
    Scenario sc;
    sc.job.machines = 8 << (i % 4);
    sc.job.seed = ++s;
    sc.job.duration_s = quick ? 1800 : 3 * 3600;
    out.push_back(std::move(sc));
  }
  return out;
}

struct Outcome {
  detect::Score vigil, minder;
  int64_t samples = 0;
  bool healthy = false;
  int64_t healthy_alerts = 0, healthy_minder_alerts = 0;
};

Outcome RunScenario(const Scenario& sc, bool verbose) {
  sim::TelemetryGenerator gen(sc.job);
  telemetry::Normalizer names(telemetry::SignalMap::Default(), false);
  detect::Detector detector(detect::DetectorOptions{}, names);
  MinderBaseline minder(MinderOptions{}, names);
  Outcome o;
  telemetry::Point p;
  const auto seconds = static_cast<int64_t>(sc.job.duration_s);
  for (int64_t t = 0; t < seconds; ++t) {
    gen.Emit(t, [&](const telemetry::RawSample& r) {
      ++o.samples;
      if (!names.Normalize(r, &p)) return;
      detector.Feed(p);
      minder.Feed(p);
    });
  }
  detector.Flush();
  minder.Flush();
  const std::vector<detect::Alert> alerts = detector.TakeAlerts();
  const std::vector<detect::Alert> baseline = minder.TakeAlerts();
  Result<std::vector<detect::FaultLabel>> labels = detect::ParseLabels(gen.LabelsCsv(), "suite");
  o.vigil = detect::ScoreAlerts(alerts, *labels);
  o.minder = detect::ScoreAlerts(baseline, *labels);
  o.healthy = sc.job.faults.empty();
  if (o.healthy) {
    o.healthy_alerts = static_cast<int64_t>(alerts.size());
    o.healthy_minder_alerts = static_cast<int64_t>(baseline.size());
  }
  if (verbose) {
    std::string line = fmt::format("{:5d} machines {:6.0f} s seed {:5d} ", sc.job.machines,
                                   sc.job.duration_s, sc.job.seed);
    for (const auto& f : sc.job.faults) {
      line += fmt::format("{} on {} at {:.0f} s:", sim::FaultKindName(f.kind),
                          gen.MachineName(f.machine), f.onset_s);
    }
    for (const auto& a : alerts) {
      line += fmt::format(
          " [{} {} {} +{:.0f} s]", a.machine, detect::AlertKindName(a.kind), a.rule,
          a.detected - sc.job.start - (sc.job.faults.empty() ? 0 : sc.job.faults[0].onset_s));
    }
    fmt::print(stderr, "{}\n", line);
  }
  return o;
}

std::string Latency(const std::vector<double>& v) {
  if (v.empty()) return "-";
  return fmt::format("{:.0f} / {:.0f}", stats::Median(v), stats::Quantile(v, 0.95));
}

}  // namespace
}  // namespace vigil::bench

int main(int argc, char** argv) {
  using namespace vigil;
  bool quick = false, json = false, verbose = false;
  int threads = 0;
  uint64_t seed = 1;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick"))
      quick = true;
    else if (!std::strcmp(argv[i], "--json"))
      json = true;
    else if (!std::strcmp(argv[i], "--verbose"))
      verbose = true;
    else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc)
      threads = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--seed") && i + 1 < argc)
      seed = std::strtoull(argv[++i], nullptr, 10);
    else {
      fmt::print(stderr,
                 "usage: detect_suite [--quick] [--threads N] [--seed S] [--json] [--verbose]\n");
      return 2;
    }
  }
  const auto started = std::chrono::steady_clock::now();
  const std::vector<bench::Scenario> suite = bench::Suite(quick, seed);
  std::vector<bench::Outcome> outcomes(suite.size());
  std::atomic<size_t> next{0};
  const size_t workers = WorkerCount(suite.size(), 1, threads);
  // Largest jobs first, so that the workers finish together.
  std::vector<size_t> order(suite.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return suite[a].job.machines * suite[a].job.duration_s >
           suite[b].job.machines * suite[b].job.duration_s;
  });
  RunWorkers(workers, [&](size_t) {
    for (size_t i; (i = next.fetch_add(1)) < suite.size();) {
      outcomes[order[i]] = bench::RunScenario(suite[order[i]], verbose);
    }
  });
  detect::Score vigil_total, minder_total;
  int64_t samples = 0, healthy_jobs = 0, healthy_alerts = 0, healthy_minder = 0;
  for (const bench::Outcome& o : outcomes) {
    samples += o.samples;
    if (o.healthy) {
      ++healthy_jobs;
      healthy_alerts += o.healthy_alerts;
      healthy_minder += o.healthy_minder_alerts;
    }
    vigil_total.Add(o.vigil);
    minder_total.Add(o.minder);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (json) {
    fmt::print("{}\n", DumpJson(Json{{"vigil", detect::ScoreToJson(vigil_total)},
                                     {"minder_style", detect::ScoreToJson(minder_total)},
                                     {"fault_free_jobs", healthy_jobs},
                                     {"fault_free_alerts", healthy_alerts},
                                     {"fault_free_alerts_minder_style", healthy_minder},
                                     {"samples", samples},
                                     {"seconds", seconds}},
                                2));
    return 0;
  }
  fmt::print("{} jobs ({} fault-free), {} faults, {:.2e} samples, {:.0f} s on {} threads\n\n",
             suite.size(), healthy_jobs, vigil_total.faults, static_cast<double>(samples), seconds,
             workers);
  fmt::print("{:<22} {:>6}  {:>8} {:>14}  {:>8} {:>14}\n", "KIND", "FAULTS", "RECALL",
             "MEDIAN/P95 s", "MINDER", "MEDIAN/P95 s");
  for (const auto& [kind, k] : vigil_total.by_kind) {
    const detect::KindScore& m = minder_total.by_kind[kind];
    fmt::print(
        "{:<22} {:>6}  {:>8.3f} {:>14}  {:>8.3f} {:>14}\n", kind, k.faults,
        static_cast<double>(k.detected) / static_cast<double>(k.faults),
        bench::Latency(k.latencies),
        static_cast<double>(m.detected) / static_cast<double>(std::max<int64_t>(1, m.faults)),
        bench::Latency(m.latencies));
  }
  fmt::print("\n{:<14} {:>9} {:>7} {:>7} {:>14} {:>16}\n", "DETECTOR", "PRECISION", "RECALL", "F1",
             "MEDIAN/P95 s", "FAULT-FREE ALERTS");
  for (const auto& [name, s, h] : {std::tuple{"vigil", &vigil_total, healthy_alerts},
                                   std::tuple{"minder-style", &minder_total, healthy_minder}}) {
    fmt::print("{:<14} {:>9.3f} {:>7.3f} {:>7.3f} {:>14} {:>16}\n", name, s->precision(),
               s->recall(), s->f1(), bench::Latency(s->latencies), h);
  }
  for (const auto& [rule, n] : vigil_total.false_by_rule) {
    fmt::print("vigil false alerts {}: {}\n", rule, n);
  }
  return 0;
}
