// Google Benchmark programs for Vigil's own hot paths: parsing metric keys and fleet summaries,
// and the robust statistics the validator runs over every metric of every node.
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "vigil/core/file.h"
#include "vigil/core/stats.h"
#include "vigil/results/metric_key.h"
#include "vigil/results/summary.h"

namespace vigil {
namespace {

const std::string kSuperBench =
    std::string(VIGIL_SOURCE_DIR) + "/tests/data/superbench_test_results.jsonl";

void BM_MetricKeyParse(benchmark::State& state) {
  const std::vector<std::string> keys = {"gpu-gemm/bf16_tflops:3", "cpu-stream/triad_gbps",
                                         "gpu-copy/p2p_gbps:0-3",
                                         "bert_models/pytorch-bert-base/steptime_train_float32"};
  size_t i = 0;
  for (auto _ : state) {
    Result<MetricKey> k = MetricKey::Parse(keys[i++ % keys.size()]);
    benchmark::DoNotOptimize(k);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MetricKeyParse);

// SuperBench's 3-node summary (about 460 metrics a node), parsed whole.
void BM_ParseFleetTable(benchmark::State& state) {
  const std::string text = *ReadFile(kSuperBench);
  size_t values = 0;
  for (auto _ : state) {
    Result<FleetTable> table = ParseFleetTable(text, "bench", 1);
    values += table->node_count() * table->metric_count();
    benchmark::DoNotOptimize(table);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.SetItemsProcessed(static_cast<int64_t>(values));
}
BENCHMARK(BM_ParseFleetTable);

void BM_FormatFleetRow(benchmark::State& state) {
  const FleetTable table = *ReadFleetTable(kSuperBench);
  const std::vector<FleetRow> rows = {table.Row(0)};
  for (auto _ : state) {
    std::string line = FormatFleetRow(rows[0]);
    benchmark::DoNotOptimize(line);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * rows[0].values.size()));
}
BENCHMARK(BM_FormatFleetRow);

// Median and MAD over one metric of a fleet (range(0) nodes).
void BM_MedianMad(benchmark::State& state) {
  std::mt19937_64 rng(1);
  std::normal_distribution<double> d(100.0, 5.0);
  std::vector<double> x(static_cast<size_t>(state.range(0)));
  for (double& v : x) v = d(rng);
  for (auto _ : state) {
    benchmark::DoNotOptimize(stats::Median(x));
    benchmark::DoNotOptimize(stats::Mad(x));
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_MedianMad)->Arg(1000)->Arg(10000);

}  // namespace
}  // namespace vigil

BENCHMARK_MAIN();
