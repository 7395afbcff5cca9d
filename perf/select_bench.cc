// The Selector's risk model fitted on 10,000 nodes x a year of history (issue 25: under 10 s
// here). The history is the fleet simulator's under the weekly full suite (docs/select.md); the
// timed part is FitRiskModel: the node-day rows with their covariates, and the Cox fit.
#include <benchmark/benchmark.h>

#include "vigil/select/fleet_sim.h"
#include "vigil/select/risk.h"

namespace vigil::select {
namespace {

const History& YearOfFleet(int nodes) {
  static const History history = [nodes] {
    FleetSimParams params;
    params.nodes = nodes;
    params.days = 365;
    params.warmup_days = 7;
    PolicyOptions weekly;
    weekly.kind = PolicyKind::kWeekly;
    return SimulateFleet(params, weekly).value().history;
  }();
  return history;
}

void BM_FitRiskModel(benchmark::State& state) {
  const History& h = YearOfFleet(static_cast<int>(state.range(0)));
  const double from = h.end_s - 365 * kSecondsPerDay;
  for (auto _ : state) {
    Result<RiskModel> model = FitRiskModel(h, from, h.end_s);
    if (!model.ok() || !model->has_cox) state.SkipWithError("the Cox model was not fitted");
    state.counters["iterations"] = model.ok() ? model->cox.iterations : 0;
    state.counters["events"] = model.ok() ? model->cox.events : 0;
    benchmark::DoNotOptimize(model);
  }
  state.counters["node_days"] = static_cast<double>(state.range(0)) * 365;
}
BENCHMARK(BM_FitRiskModel)->Arg(10000)->Unit(benchmark::kSecond)->Iterations(3);

}  // namespace
}  // namespace vigil::select

BENCHMARK_MAIN();
