#include "cli/plan_infer.h"

#include <fmt/format.h>

#include "cli/plan_search.h"
#include "vigil/core/json.h"
#include "vigil/plan/inference_fit.h"
#include "vigil/plan/train_answer.h"

namespace vigil::cli {
namespace {

// Token counts: far above any context served.
constexpr Bounds kTokenBounds{.lo = 1, .hi = 16777216};
constexpr Bounds kDecodeBatchBounds{.lo = 1, .hi = 1048576};

Json PhaseJson(const plan::PhaseTime& t) {
  return Json{{"seconds", t.seconds},
              {"compute_s", t.compute_s},
              {"memory_s", t.memory_s},
              {"all_reduce_s", t.all_reduce_s},
              {"bound", t.bound}};
}

Json AnswerJson(const PlanInferOptions& o, const plan::InferAnswer& a) {
  const plan::InferEstimate& e = a.estimate;
  Json out{{"model", a.model.name},
           {"gpu", a.hardware.gpu},
           {"profile", plan::ProfileJson(a.hardware)},
           {"gpus", o.gpus},
           {"batch", o.batch},
           {"prompt_tokens", o.prompt},
           {"output_tokens", o.output},
           {"precision", o.precision},
           {"params", e.params},
           {"active_params", e.active_params},
           {"experts_read_per_step", e.experts_read},
           {"weights_gb_per_gpu", e.weights_gb_per_gpu},
           {"kv_cache_gb_per_gpu", e.kv_cache_gb_per_gpu},
           {"memory_gb_per_gpu", e.memory_gb_per_gpu},
           {"usable_memory_gb", e.usable_memory_gb},
           {"prefill_s", e.prefill.seconds},
           {"decode_s_per_token", e.decode.seconds},
           {"latency_s", e.latency_s},
           {"output_tokens_per_s", e.output_tokens_per_s},
           {"prefill", PhaseJson(e.prefill)},
           {"decode", PhaseJson(e.decode)}};
  if (a.fitted) {
    out["fit"] = Json{{"samples", a.fit.samples},
                      {"prefill_base_s", a.fit.prefill_base_s},
                      {"prefill_per_prompt_token_s", a.fit.prefill_per_token_s},
                      {"prompt_slope_fitted", a.fit.prompt_slope_fitted},
                      {"per_token_s", a.fit.per_token_s},
                      {"rms_residual_s", a.fit.rms_residual_s},
                      {"prefill_s", a.fit.PrefillSeconds(o.prompt)},
                      {"latency_s", a.fit.LatencySeconds(o.prompt, o.output)}};
  }
  return out;
}

std::string Milliseconds(double s) { return FormatFigure(s * 1000); }

void PrintAnswer(const PlanInferOptions& o, const plan::InferAnswer& a) {
  const plan::InferEstimate& e = a.estimate;
  fmt::print("{} on {} x {} ({}), batch {}, {} prompt + {} output tokens\n",
             a.model.name.empty() ? o.model : a.model.name, o.gpus, a.hardware.gpu, o.precision,
             o.batch, o.prompt, o.output);
  fmt::print("Profile: {}\n", a.hardware.source);
  fmt::print("Memory per GPU: {} GB weights + {} GB KV cache = {} GB of {} GB usable\n\n",
             FormatFigure(e.weights_gb_per_gpu), FormatFigure(e.kv_cache_gb_per_gpu),
             FormatFigure(e.memory_gb_per_gpu), FormatFigure(e.usable_memory_gb));
  Table table({"PHASE", "TIME_MS", "COMPUTE_MS", "MEMORY_MS", "ALL_REDUCE_MS", "BOUND"});
  for (const auto& [name, t] :
       {std::pair{"prefill (a_p)", e.prefill}, std::pair{"decode step (b)", e.decode}}) {
    table.Add({name, Milliseconds(t.seconds), Milliseconds(t.compute_s), Milliseconds(t.memory_s),
               Milliseconds(t.all_reduce_s), t.bound});
  }
  fmt::print("{}\nRoofline: T = a_p + b (o - 1) = {} s, {} output tokens/s\n", table.ToString(),
             FormatFigure(e.latency_s), FormatFigure(e.output_tokens_per_s));
  if (!a.fitted) return;
  fmt::print(
      "Fitted to {} measured requests: a_p = {} ms + {} ms x p, b = {} ms (rms residual {} ms)\n"
      "Fitted: a_p = {} ms, b = {} ms, T = {} s\n",
      a.fit.samples, Milliseconds(a.fit.prefill_base_s), Milliseconds(a.fit.prefill_per_token_s),
      Milliseconds(a.fit.per_token_s), Milliseconds(a.fit.rms_residual_s),
      Milliseconds(a.fit.PrefillSeconds(o.prompt)), Milliseconds(a.fit.per_token_s),
      FormatFigure(a.fit.LatencySeconds(o.prompt, o.output)));
}

}  // namespace

CLI::App* SetupPlanInfer(CLI::App& plan, PlanInferOptions& o) {
  CLI::App* c = plan.add_subcommand(
      "infer", "Inference roofline: prefill and per-token decode time on a tensor-parallel group");
  AddPlanModelFlags(*c, o.model, o.gpu, o.hardware);
  c->add_option("--gpus", o.gpus, "GPUs in the tensor-parallel group")
      ->check(InBounds(kGpusBounds))
      ->capture_default_str();
  c->add_option("--batch", o.batch, "Sequences decoded together")
      ->check(InBounds(kDecodeBatchBounds))
      ->capture_default_str();
  c->add_option("--prompt", o.prompt, "Prompt tokens per sequence")
      ->check(InBounds(kTokenBounds))
      ->capture_default_str();
  c->add_option("--output", o.output, "Output tokens per sequence")
      ->check(InBounds(kTokenBounds))
      ->capture_default_str();
  c->add_option("--precision", o.precision, "Weights, KV cache and GEMMs: bf16 or fp8")
      ->check(CLI::IsMember({"bf16", "fp8"}))
      ->capture_default_str();
  c->add_option("--latencies", o.latencies,
                "CSV of measured requests (prompt_tokens,output_tokens,latency_s) to fit "
                "T = a_p + b (o - 1) to")
      ->check(CLI::ExistingFile);
  c->add_flag("--json", o.json, "Print JSON");
  return c;
}

CommandResult RunPlanInfer(const PlanInferOptions& o) {
  plan::InferRequest request;
  request.gpus = o.gpus;
  request.batch = o.batch;
  request.prompt = o.prompt;
  request.output = o.output;
  request.fp8 = o.precision == "fp8";
  VIGIL_ASSIGN_OR_RETURN(const plan::InferAnswer a,
                         plan::AnswerInference(o.model, o.gpu, o.hardware, request, o.latencies));
  if (o.json) {
    fmt::print("{}\n", DumpJson(AnswerJson(o, a), 2));
  } else {
    PrintAnswer(o, a);
  }
  return ExitCode::kHealthy;
}

}  // namespace vigil::cli
