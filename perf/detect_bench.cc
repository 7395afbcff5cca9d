// The detector's throughput (docs/benchmarks.md): 1,024 machines x 16 metrics, one sample each
// per second, fed point by point on one core. Points are normalised before timing, so the figure
// is the detector's own work: frames, peer statistics, evidence, rules and silence checks.
//   BM_DetectorFeed: the first 120 s, all within the groups' 300-s warm-up (placements learned).
//   BM_DetectorJudge/1024/S: S seconds after the warm-up (every machine judged against its peers
//     and its own past); the 330 s before them are fed untimed. S = 120 as in earlier rounds;
//     S = 1,200 scatters less from run to run (each iteration is mostly timed).
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "vigil/core/random.h"
#include "vigil/detect/detector.h"

namespace vigil {
namespace {

constexpr int kMetrics = 16;
// Distinct seconds of samples; later seconds repeat them at their own time.
constexpr int kBankSeconds = 120;

// kBankSeconds seconds of one sample per machine and metric, normalised.
class Samples {
 public:
  explicit Samples(int machines) : names_(telemetry::SignalMap::Default(), true) {
    points_.reserve(static_cast<size_t>(machines) * kMetrics * kBankSeconds);
    Rng rng(1, 0);
    std::vector<std::string> machine_names, metric_names;
    for (int m = 0; m < machines; ++m) machine_names.push_back("node" + std::to_string(m));
    for (int k = 0; k < kMetrics; ++k) metric_names.push_back("signal_" + std::to_string(k));
    for (int t = 0; t < kBankSeconds; ++t) {
      for (int m = 0; m < machines; ++m) {
        for (int k = 0; k < kMetrics; ++k) {
          telemetry::RawSample s;
          s.time = kStart + t;
          s.machine = machine_names[static_cast<size_t>(m)];
          s.metric = metric_names[static_cast<size_t>(k)];
          s.value = 100 + k + rng.Normal(0, 2);
          telemetry::Point p;
          if (names_.Normalize(s, &p)) points_.push_back(p);
        }
      }
    }
    per_second_ = points_.size() / kBankSeconds;
  }

  const telemetry::Normalizer& names() const { return names_; }

  // Feeds seconds [from, to) of the job; returns the points fed.
  size_t Feed(detect::Detector& detector, int from, int to) const {
    for (int t = from; t < to; ++t) {
      const size_t first = static_cast<size_t>(t % kBankSeconds) * per_second_;
      for (size_t i = first; i < first + per_second_; ++i) {
        telemetry::Point p = points_[i];
        p.time = kStart + t;
        detector.Feed(p);
      }
    }
    return static_cast<size_t>(to - from) * per_second_;
  }

 private:
  static constexpr double kStart = 1.8e9;
  telemetry::Normalizer names_;
  std::vector<telemetry::Point> points_;
  size_t per_second_ = 0;
};

void BM_DetectorFeed(benchmark::State& state) {
  const Samples samples(static_cast<int>(state.range(0)));
  size_t fed = 0;
  for (auto _ : state) {
    detect::Detector detector({}, samples.names());
    fed += samples.Feed(detector, 0, kBankSeconds);
    detector.Flush();
    benchmark::DoNotOptimize(detector.TakeAlerts());
  }
  state.SetItemsProcessed(static_cast<int64_t>(fed));
}
BENCHMARK(BM_DetectorFeed)->Arg(1024)->Unit(benchmark::kMillisecond);

void BM_DetectorJudge(benchmark::State& state) {
  constexpr int kJudgedFrom = 330;
  const int judged_to = kJudgedFrom + static_cast<int>(state.range(1));
  const Samples samples(static_cast<int>(state.range(0)));
  size_t fed = 0;
  for (auto _ : state) {
    state.PauseTiming();
    detect::Detector detector({}, samples.names());
    samples.Feed(detector, 0, kJudgedFrom);
    state.ResumeTiming();
    fed += samples.Feed(detector, kJudgedFrom, judged_to);
    detector.Flush();
    benchmark::DoNotOptimize(detector.TakeAlerts());
  }
  state.SetItemsProcessed(static_cast<int64_t>(fed));
}
BENCHMARK(BM_DetectorJudge)->Args({1024, 120})->Args({1024, 1200})->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace vigil

BENCHMARK_MAIN();
