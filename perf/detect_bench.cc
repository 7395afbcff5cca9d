// The detector's throughput (docs/benchmarks.md): 1,024 machines x 16 metrics, one sample each
// per second, fed point by point on one core. Points are normalised before timing, so the figure
// is the detector's own work: frames, peer statistics, evidence, rules and silence checks.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "vigil/core/random.h"
#include "vigil/detect/detector.h"

namespace vigil {
namespace {

void BM_DetectorFeed(benchmark::State& state) {
  const int machines = static_cast<int>(state.range(0));
  constexpr int kMetrics = 16;
  constexpr int kSeconds = 120;
  telemetry::Normalizer names(telemetry::SignalMap::Default(), true);
  std::vector<telemetry::Point> points;
  points.reserve(static_cast<size_t>(machines) * kMetrics * kSeconds);
  Rng rng(1, 0);
  std::vector<std::string> machine_names, metric_names;
  for (int m = 0; m < machines; ++m) machine_names.push_back("node" + std::to_string(m));
  for (int k = 0; k < kMetrics; ++k) metric_names.push_back("signal_" + std::to_string(k));
  for (int t = 0; t < kSeconds; ++t) {
    for (int m = 0; m < machines; ++m) {
      for (int k = 0; k < kMetrics; ++k) {
        telemetry::RawSample s;
        s.time = 1.8e9 + t;
        s.machine = machine_names[static_cast<size_t>(m)];
        s.metric = metric_names[static_cast<size_t>(k)];
        s.value = 100 + k + rng.Normal(0, 2);
        telemetry::Point p;
        if (names.Normalize(s, &p)) points.push_back(p);
      }
    }
  }
  for (auto _ : state) {
    detect::Detector detector({}, names);
    for (const telemetry::Point& p : points) detector.Feed(p);
    detector.Flush();
    benchmark::DoNotOptimize(detector.TakeAlerts());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(points.size()));
}
BENCHMARK(BM_DetectorFeed)->Arg(1024)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace vigil

BENCHMARK_MAIN();
