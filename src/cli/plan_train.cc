#include "cli/plan_train.h"

#include <fmt/format.h>

#include "cli/plan_search.h"
#include "vigil/core/json.h"

namespace vigil::cli {

namespace {

// Parallel degrees and batches: far beyond any cluster, low enough that no product overflows.
constexpr Bounds kDegreeBounds{.lo = 1, .hi = 1048576};
constexpr Bounds kTrainBatchBounds{.lo = 1, .hi = 1 << 30};

}  // namespace

void AddPlanModelFlags(CLI::App& cmd, std::string& model, std::string& gpu,
                       std::vector<std::string>& hardware) {
  cmd.add_option("--model", model, "The model description (YAML or JSON; docs/plan.md)")
      ->required()
      ->type_name("MODEL.yaml");
  cmd.add_option("--gpu", gpu, "The GPU's datasheet row: a100, h100, h200, b200")
      ->capture_default_str();
  cmd.add_option(
         "--hardware", hardware,
         "Measured results (results documents or fleet summaries, Vigil's or "
         "SuperBench's; a directory: its *.json and *.jsonl) that override the datasheet: the "
         "fleet's median")
      ->type_name("RESULTS.json");
}

void AddPlanJobFlags(CLI::App& cmd, plan::TrainRequest& r) {
  AddPlanModelFlags(cmd, r.model_path, r.gpu, r.hardware);
  plan::Layout& l = r.layout;
  cmd.add_option("--gpus", l.gpus, "GPUs in the job (TP x PP x DP x CP)")
      ->required()
      ->check(InBounds(kGpusBounds));
  cmd.add_option("--tp", l.tp, "Tensor parallel degree")
      ->required()
      ->check(InBounds(kDegreeBounds));
  cmd.add_option("--pp", l.pp, "Pipeline stages")->required()->check(InBounds(kDegreeBounds));
  cmd.add_option("--vpp", l.vpp, "Virtual stages per pipeline stage (interleaving)")
      ->capture_default_str()
      ->check(InBounds(kDegreeBounds));
  cmd.add_option("--dp", l.dp, "Data parallel degree")->required()->check(InBounds(kDegreeBounds));
  cmd.add_option("--cp", l.cp, "Context parallel degree")
      ->capture_default_str()
      ->check(InBounds(kDegreeBounds));
  cmd.add_option("--ep", l.ep, "Expert parallel degree (within DP)")
      ->capture_default_str()
      ->check(InBounds(kDegreeBounds));
  cmd.add_option("--zero", l.zero, "ZeRO stage over DP: 0 (none), 1, 2, 3")
      ->capture_default_str()
      ->check(CLI::Range(0, 3));
  cmd.add_option("--micro-batch", l.micro_batch, "Sequences per micro-batch")
      ->required()
      ->check(InBounds(kTrainBatchBounds));
  cmd.add_option("--global-batch", l.global_batch, "Sequences per step")
      ->required()
      ->check(InBounds(kTrainBatchBounds));
  cmd.add_option("--recompute", r.recompute, "Activation recomputation: none, selective, full")
      ->capture_default_str();
  cmd.add_option("--precision", r.precision, "GEMM precision: bf16, fp8")->capture_default_str();
  AddAttentionFlag(cmd, r.attention);
  AddSequenceParallelFlag(cmd, l.sequence_parallel);
}

void AddSequenceParallelFlag(CLI::App& cmd, bool& sequence_parallel) {
  cmd.add_flag("--sequence-parallel,!--no-sequence-parallel", sequence_parallel,
               "Megatron's sequence parallelism: on by default; off, each TP rank repeats the "
               "norms and dropouts on the whole sequence (Megatron-LM before 2022)");
}

void AddAttentionFlag(CLI::App& cmd, std::string& attention) {
  cmd.add_option("--attention", attention,
                 "Attention's core: flash (FlashAttention, today's frameworks) or unfused (scores "
                 "in HBM, Megatron-LM in 2021)")
      ->check(CLI::IsMember({"flash", "unfused"}))
      ->capture_default_str();
}

CLI::App* SetupPlanTrain(CLI::App& plan, PlanTrainOptions& o) {
  CLI::App* c = plan.add_subcommand(
      "train", "Predict a training step: time, tokens/s, TFLOP/s per GPU, MFU, memory per GPU");
  AddPlanJobFlags(*c, o.request);
  c->add_flag("--json", o.json, "Print JSON");
  return c;
}

CommandResult RunPlanTrain(const PlanTrainOptions& o) {
  VIGIL_ASSIGN_OR_RETURN(const plan::TrainAnswer answer, plan::AnswerTrain(o.request));
  if (o.json) {
    fmt::print("{}\n", DumpJson(plan::TrainJson(answer), 2));
  } else {
    fmt::print("{}", plan::TrainText(answer));
  }
  return answer.prediction.fits ? ExitCode::kHealthy : ExitCode::kDefect;
}

}  // namespace vigil::cli
