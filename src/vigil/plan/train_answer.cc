#include "vigil/plan/train_answer.h"

#include <fmt/format.h>

#include "vigil/core/text_table.h"
#include "vigil/plan/profile.h"
#include "vigil/plan/units.h"

namespace vigil::plan {
namespace {

double Gib(double bytes) { return bytes / kGib; }

std::string Seconds(double s, double step) {
  return fmt::format("{:.4g} s ({:.1f}%)", s, step > 0 ? 100 * s / step : 0);
}

// The step's terms in seconds, as `plan train --json` names them.
Json TermsJson(const StepBreakdown& t) {
  Json out = Json::object();
  for (const auto& [name, seconds] : StepTerms(t)) out[std::string(name)] = seconds;
  return out;
}

}  // namespace

Result<TrainAnswer> AnswerTrain(const TrainRequest& r, const HardwareProfile* hw) {
  TrainAnswer a;
  VIGIL_ASSIGN_OR_RETURN(a.model, ReadModelSpec(r.model_path));
  if (hw != nullptr) {
    a.hw = *hw;
  } else {
    VIGIL_ASSIGN_OR_RETURN(a.hw, ProfileFor(r.gpu, r.hardware));
  }
  a.layout = r.layout;
  VIGIL_ASSIGN_OR_RETURN(a.layout.recompute, ParseRecompute(r.recompute));
  VIGIL_ASSIGN_OR_RETURN(a.layout.precision, ParsePrecision(r.precision));
  VIGIL_ASSIGN_OR_RETURN(a.layout.attention, ParseAttention(r.attention));
  const Status layout = CheckLayout(a.model, a.layout, a.hw);
  if (!layout.ok()) {
    return Status::InvalidArgument(fmt::format("impossible layout: {}", layout.message()));
  }
  a.prediction = PredictTrain(a.model, a.layout, a.hw);
  return a;
}

Json LayoutJson(const Layout& l) {
  return Json{{"gpus", l.gpus},
              {"tp", l.tp},
              {"pp", l.pp},
              {"vpp", l.vpp},
              {"dp", l.dp},
              {"cp", l.cp},
              {"ep", l.ep},
              {"micro_batch", l.micro_batch},
              {"global_batch", l.global_batch},
              {"zero", l.zero},
              {"recompute", RecomputeName(l.recompute)},
              {"precision", PrecisionName(l.precision)},
              {"attention", AttentionName(l.attention)},
              {"sequence_parallel", l.sequence_parallel}};
}

Json ProfileJson(const HardwareProfile& hw) {
  return Json{{"gpu", hw.gpu},
              {"source", hw.source},
              {"bf16_tflops", hw.bf16_tflops},
              {"fp8_tflops", hw.fp8_tflops},
              {"hbm_gbps", hw.hbm_gbps},
              {"memory_gb", hw.memory_gb},
              {"intra_node_gbps", hw.intra_node_gbps},
              {"inter_node_gbps", hw.inter_node_gbps},
              {"host_to_device_gbps", hw.host_to_device_gbps},
              {"bf16_efficiency", hw.bf16_efficiency},
              {"fp8_efficiency", hw.fp8_efficiency},
              {"hbm_efficiency", hw.hbm_efficiency},
              {"nvlink_efficiency", hw.nvlink_efficiency},
              {"nic_efficiency", hw.nic_efficiency}};
}

Json TrainJson(const TrainAnswer& a) {
  const TrainPrediction& p = a.prediction;
  const StepBreakdown& t = p.time;
  const MemoryBreakdown& m = p.memory;
  return Json{{"model", a.model.name},
              {"parameters", p.parameters},
              {"step_time_s", p.step_time_s},
              {"tokens_per_s", p.tokens_per_s},
              {"tflops_per_gpu", p.tflops_per_gpu},
              {"mfu", p.mfu},
              {"memory_gib_per_gpu", Gib(m.Total())},
              {"memory_limit_gib", Gib(p.memory_limit_bytes)},
              {"fits", p.fits},
              {"model_flops_per_step", p.model_flops},
              {"hardware_flops_per_step", p.hardware_flops},
              {"micro_batches", p.micro_batches},
              {"bubble_fraction", p.bubble_fraction},
              {"time_s", TermsJson(t)},
              {"compute_split_s",
               {{"gemm", t.compute_gemm_s}, {"memory_bound", t.compute_s - t.compute_gemm_s}}},
              {"memory_gib",
               {{"parameters", Gib(m.parameters)},
                {"gradients", Gib(m.gradients)},
                {"optimizer", Gib(m.optimizer)},
                {"activations", Gib(m.activations)},
                {"reserve", Gib(m.reserve)}}},
              {"layout", LayoutJson(a.layout)},
              {"profile", ProfileJson(a.hw)}};
}

std::string LayoutText(const Layout& l) {
  return fmt::format("TP {} x PP {} (VPP {}) x DP {} x CP {}, EP {}", l.tp, l.pp, l.vpp, l.dp, l.cp,
                     l.ep);
}

std::string TrainText(const TrainAnswer& a) {
  const TrainPrediction& p = a.prediction;
  const Layout& l = a.layout;
  const StepBreakdown& t = p.time;
  std::string out = fmt::format(
      "{} ({:.3g}B parameters) on {} {} GPUs: {}, "
      "micro-batch {}, global batch {}, ZeRO {}, recompute {}, {}, {} attention{}\nProfile: {}\n\n",
      a.model.name.empty() ? "model" : a.model.name, p.parameters / 1e9, l.gpus, a.hw.gpu,
      LayoutText(l), l.micro_batch, l.global_batch, l.zero, RecomputeName(l.recompute),
      PrecisionName(l.precision), AttentionName(l.attention),
      l.sequence_parallel ? "" : ", no sequence parallelism", a.hw.source);
  out += fmt::format(
      "Step time {:.4g} s, {:.4g} tokens/s, {:.1f} TFLOP/s per GPU (recomputation counted), "
      "MFU {:.1f}%\n\n",
      p.step_time_s, p.tokens_per_s, p.tflops_per_gpu, 100 * p.mfu);
  Table time({"step time", "seconds (share)"});
  const double s = p.step_time_s;
  time.Add({"compute", Seconds(t.compute_s, s)});
  time.Add({"  of which matrix products", Seconds(t.compute_gemm_s, s)});
  time.Add({"  of which memory-bound kernels", Seconds(t.compute_s - t.compute_gemm_s, s)});
  time.Add({"TP communication (exposed)", Seconds(t.tp_comm_s, s)});
  time.Add({"CP communication (exposed)", Seconds(t.cp_comm_s, s)});
  time.Add({"PP communication (exposed)", Seconds(t.pp_comm_s, s)});
  time.Add({"DP gradient reduction (exposed)", Seconds(t.dp_comm_s, s)});
  time.Add({"EP all-to-all (exposed)", Seconds(t.ep_comm_s, s)});
  time.Add(
      {fmt::format("pipeline bubble ({:.1f}%)", 100 * p.bubble_fraction), Seconds(t.bubble_s, s)});
  time.Add({"optimizer step", Seconds(t.optimizer_s, s)});
  out += time.ToString();
  const MemoryBreakdown& m = p.memory;
  Table memory({"memory per GPU", "GiB"});
  memory.Add({"parameters", fmt::format("{:.2f}", Gib(m.parameters))});
  memory.Add({"gradients", fmt::format("{:.2f}", Gib(m.gradients))});
  memory.Add({"optimizer states", fmt::format("{:.2f}", Gib(m.optimizer))});
  memory.Add({"activations", fmt::format("{:.2f}", Gib(m.activations))});
  memory.Add({"reserve (context, workspaces)", fmt::format("{:.2f}", Gib(m.reserve))});
  memory.Add({"total", fmt::format("{:.2f} of {:.2f}", Gib(m.Total()), Gib(p.memory_limit_bytes))});
  out += '\n';
  out += memory.ToString();
  out += p.fits ? "Fits in memory.\n" : "Does NOT fit in memory.\n";
  return out;
}

}  // namespace vigil::plan
