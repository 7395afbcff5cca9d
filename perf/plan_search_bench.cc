// `vigil plan search` over every layout of a 1T-parameter GPT (Megatron-LM's weak-scaling row) on
// 4,096 H100s: the target is under a second (docs/benchmarks.md).
#include <benchmark/benchmark.h>

#include "vigil/plan/search.h"

namespace {

vigil::plan::SearchRequest OneTrillion(bool mixed) {
  vigil::plan::SearchRequest r;
  r.model = vigil::plan::GptModel(128, 25600, 160);
  r.model.name = "gpt-1t";
  r.hw = *vigil::plan::DatasheetProfile("h100");
  r.gpus = 4096;
  r.global_batch = 4096;
  if (mixed) {
    r.second = *vigil::plan::DatasheetProfile("a100");
    r.second_gpus = 1024;
  }
  return r;
}

void BM_SearchOneTrillionOn4096(benchmark::State& state) {
  const vigil::plan::SearchRequest r = OneTrillion(state.range(0) != 0);
  int64_t layouts = 0;
  for (auto _ : state) {
    vigil::Result<vigil::plan::SearchResult> s = vigil::plan::SearchLayouts(r);
    if (!s.ok()) {
      state.SkipWithError(s.status().message().c_str());
      return;
    }
    layouts = s->layouts;
    benchmark::DoNotOptimize(s->best);
  }
  state.counters["layouts"] = static_cast<double>(layouts);
}
// 0: 4,096 H100; 1: 3,072 H100 and 1,024 A100 (stages placed by speed).
BENCHMARK(BM_SearchOneTrillionOn4096)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
