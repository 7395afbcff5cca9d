#include "vigil/plan/inference.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "vigil/plan/units.h"

namespace vigil::plan {
namespace {

// Activations travel in BF16 whatever the weights' precision (FP8 inference keeps them so).
constexpr double kActivationBytes = 2;
// Two all-reduces per layer: after attention's output projection and after the MLP.
constexpr double kAllReducesPerLayer = 2;

// The model's matrices, in parameters (CountParameters: the count plan train uses too).
struct Shape {
  ModelParameters params;
  double layer = 0;  // one block's attention, router and norms: read by every pass
  double head = 0;   // the output projection to the vocabulary (the embedding's, when tied)
  double head_dim = 0;
};

Shape ShapeOf(const ModelSpec& m) {
  Shape s;
  s.params = CountParameters(m);
  s.layer = s.params.attention + s.params.router + s.params.norms;
  s.head = s.params.embedding;
  s.head_dim = static_cast<double>(m.hidden) / static_cast<double>(m.heads);
  return s;
}

// Experts of one layer that `tokens` tokens touch when each picks top_k of E uniformly.
double ExpertsTouched(const ModelSpec& m, double tokens) {
  if (m.experts <= 1) return 1;
  const double e = static_cast<double>(m.experts);
  const double k = static_cast<double>(m.top_k);
  return e * (1 - std::pow(1 - k / e, tokens));
}

// Parameters a pass over `tokens` tokens reads (per layer: attention, router, touched experts).
double ParamsRead(const ModelSpec& m, const Shape& s, double tokens) {
  const double layer = s.layer + ExpertsTouched(m, tokens) * s.params.expert_mlp;
  return static_cast<double>(m.layers) * layer + s.head;
}

// Bytes of K and V one token adds to one GPU's cache: KV heads split over the group, a GPU
// holding at least one (a group larger than kv_heads replicates them).
double KvBytesPerToken(const ModelSpec& m, const Shape& s, int64_t gpus, double bytes) {
  const double heads_per_gpu = std::ceil(static_cast<double>(m.kv_heads) / gpus);
  return 2 * static_cast<double>(m.layers) * heads_per_gpu * s.head_dim * bytes;
}

// The layers' all-reduces of `tokens` tokens' activations over the group (ring: 2 (G-1)/G of the
// message crosses each GPU's link); the NIC's bandwidth when the group spans nodes.
double AllReduceSeconds(const ModelSpec& m, const HardwareProfile& hw, const InferRequest& r,
                        double tokens) {
  if (r.gpus == 1) return 0;
  const double link_gbps = r.gpus > hw.gpus_per_node ? hw.inter_node_gbps * hw.nic_efficiency
                                                     : hw.intra_node_gbps * hw.nvlink_efficiency;
  const double g = static_cast<double>(r.gpus);
  const double bytes = tokens * static_cast<double>(m.hidden) * kActivationBytes;
  const double one = r.efficiency.allreduce_latency_s +
                     2 * (g - 1) / g * bytes / (link_gbps * kGiga * r.efficiency.link);
  return kAllReducesPerLayer * static_cast<double>(m.layers) * one;
}

PhaseTime Roofline(double flops_per_gpu, double bytes_per_gpu, double all_reduce_s,
                   const HardwareProfile& hw, const InferRequest& r) {
  const double gemm_tflops =
      r.fp8 ? hw.fp8_tflops * hw.fp8_efficiency : hw.bf16_tflops * hw.bf16_efficiency;
  PhaseTime t;
  t.compute_s = flops_per_gpu / (gemm_tflops * kTera * r.efficiency.compute);
  t.memory_s = bytes_per_gpu / (hw.HbmBytesPerS() * r.efficiency.hbm);
  t.all_reduce_s = all_reduce_s;
  t.bound = t.compute_s >= t.memory_s ? "compute" : "memory";
  t.seconds = std::max(t.compute_s, t.memory_s) + all_reduce_s;
  return t;
}

// Attention's score and value products for `tokens` queries over `context` keys each:
// 2 FLOPs x 2 products x hidden per query-key pair, per layer.
double AttentionFlops(const ModelSpec& m, double tokens, double context) {
  return 4 * static_cast<double>(m.layers) * static_cast<double>(m.hidden) * tokens * context;
}

Status CheckRequest(const ModelSpec& m, const HardwareProfile& hw, const InferRequest& r) {
  if (r.gpus < 1 || r.batch < 1 || r.prompt < 1 || r.output < 1) {
    return Status::InvalidArgument("--gpus, --batch, --prompt and --output must be at least 1");
  }
  if (m.heads % r.gpus != 0) {
    return Status::InvalidArgument(fmt::format(
        "--gpus {} does not divide the model's heads ({}): tensor parallelism splits the "
        "attention heads over the GPUs",
        r.gpus, m.heads));
  }
  if (r.fp8 && hw.fp8_tflops <= 0) {
    return Status::InvalidArgument(
        fmt::format("--precision fp8: the {} has no FP8 tensor cores", hw.gpu));
  }
  if (r.prompt + r.output > m.seq_len) {
    return Status::InvalidArgument(
        fmt::format("--prompt {} + --output {} is above the model's seq_len ({})", r.prompt,
                    r.output, m.seq_len));
  }
  return Status::Ok();
}

}  // namespace

Result<InferEstimate> EstimateInference(const ModelSpec& model, const HardwareProfile& hardware,
                                        const InferRequest& r) {
  VIGIL_RETURN_IF_ERROR(CheckRequest(model, hardware, r));
  const Shape s = ShapeOf(model);
  const double g = static_cast<double>(r.gpus);
  const double batch = static_cast<double>(r.batch);
  const double prompt = static_cast<double>(r.prompt);
  const double output = static_cast<double>(r.output);
  const double bytes = r.fp8 ? 1 : 2;
  const double kv_token = KvBytesPerToken(model, s, r.gpus, bytes);

  InferEstimate e;
  e.params = s.params.total;
  e.active_params = s.params.active;
  e.experts_read = ExpertsTouched(model, batch);
  e.weights_gb_per_gpu = e.params * bytes / g / kGiga;
  e.kv_cache_gb_per_gpu = batch * (prompt + output) * kv_token / kGiga;
  e.memory_gb_per_gpu = e.weights_gb_per_gpu + e.kv_cache_gb_per_gpu;
  e.usable_memory_gb = hardware.memory_gb * r.efficiency.usable_memory;
  if (e.memory_gb_per_gpu > e.usable_memory_gb) {
    return Status::InvalidArgument(fmt::format(
        "does not fit: {:.1f} GB per GPU (weights {:.1f} GB + KV cache {:.1f} GB) is above the "
        "{:.1f} GB usable of the {}'s {:g} GB; use more --gpus or a smaller --batch",
        e.memory_gb_per_gpu, e.weights_gb_per_gpu, e.kv_cache_gb_per_gpu, e.usable_memory_gb,
        hardware.gpu, hardware.memory_gb));
  }

  // Prefill: every prompt token through the active weights (logits for the last token only),
  // causal attention over half the prompt on average; reads every weight and writes the cache.
  const double prompt_tokens = batch * prompt;
  const double prefill_flops = 2 * prompt_tokens * (e.active_params - s.head) + 2 * batch * s.head +
                               AttentionFlops(model, prompt_tokens, prompt / 2);
  const double prefill_bytes =
      ParamsRead(model, s, prompt_tokens) * bytes / g + prompt_tokens * kv_token;
  e.prefill = Roofline(prefill_flops / g, prefill_bytes,
                       AllReduceSeconds(model, hardware, r, prompt_tokens), hardware, r);

  // Decode: one token per sequence, at the mean context of the output's steps.
  const double context = prompt + output / 2;
  const double decode_flops = 2 * batch * e.active_params + AttentionFlops(model, batch, context);
  const double decode_bytes = ParamsRead(model, s, batch) * bytes / g + batch * context * kv_token;
  e.decode = Roofline(decode_flops / g, decode_bytes, AllReduceSeconds(model, hardware, r, batch),
                      hardware, r);

  e.latency_s = e.prefill.seconds + e.decode.seconds * (output - 1);
  e.output_tokens_per_s = batch * output / e.latency_s;
  return e;
}

}  // namespace vigil::plan
