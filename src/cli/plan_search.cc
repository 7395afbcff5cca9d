#include "cli/plan_search.h"

#include <fmt/format.h>

#include "vigil/core/json.h"

namespace vigil::cli {

CLI::App* SetupPlanSearch(CLI::App& plan, PlanSearchOptions& o) {
  CLI::App* c = plan.add_subcommand(
      "search", "Rank every valid parallel layout of a model by predicted throughput");
  plan::SearchFlags& f = o.flags;
  AddPlanModelFlags(*c, f.model_path, f.gpu, f.hardware);
  c->add_option("--gpus", f.gpus, "GPUs in the job, of both types")
      ->required()
      ->check(InBounds(kGpusBounds));
  c->add_option("--global-batch", f.global_batch, "Sequences per step")
      ->required()
      ->check(InBounds(Bounds{.lo = 1, .hi = 1 << 30}));
  c->add_option("--memory-gb", f.memory_gb, "Memory limit per GPU in GB (default: the GPU's)")
      ->check(InBounds(Bounds{.lo = 1, .hi = 1e6}));
  c->add_option("--precision", f.precision, "GEMM precision: bf16, fp8")->capture_default_str();
  AddAttentionFlag(*c, f.attention);
  AddSequenceParallelFlag(*c, f.sequence_parallel);
  c->add_option("--second-gpu", f.second_gpu,
                "A second GPU type in the cluster (datasheet row), or the same type for "
                "degraded nodes with --second-speed");
  c->add_option("--second-gpus", f.second_gpus, "How many of --gpus are of the second type")
      ->check(InBounds(kGpusBounds));
  c->add_option("--second-speed", f.second_speed,
                "The second type's GEMM and HBM rates as a share of its datasheet (0.88: 12% "
                "slow)")
      ->capture_default_str();
  c->add_option("--top", f.top, "Layouts to show")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  c->add_flag("--json", o.json, "Print JSON");
  return c;
}

CommandResult RunPlanSearch(const PlanSearchOptions& o) {
  VIGIL_ASSIGN_OR_RETURN(const plan::SearchAnswer answer, plan::AnswerSearch(o.flags));
  if (o.json) {
    fmt::print("{}\n", DumpJson(plan::SearchJson(answer), 2));
  } else {
    fmt::print("{}", plan::SearchText(answer));
  }
  return ExitCode::kHealthy;
}

}  // namespace vigil::cli
