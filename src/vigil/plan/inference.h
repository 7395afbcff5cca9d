// `vigil plan infer`'s roofline: the time a tensor-parallel group of GPUs takes to prefill a batch
// of prompts and to decode each further token, and whether the weights and the KV cache fit
// (docs/plan.md, "Inference").
//
// Prefill multiplies every prompt token by the weights, so it is mostly bound by the tensor cores;
// each decode step reads every weight it uses and the whole KV cache for one token per sequence,
// so at small batch it is bound by HBM bandwidth. Each layer adds two tensor-parallel all-reduces
// of the activations (after attention and after the MLP) over NVLink, or the NIC when the group
// spans nodes. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "vigil/core/status.h"
#include "vigil/plan/hardware.h"
#include "vigil/plan/model_spec.h"

namespace vigil::plan {

// How far below what the profile's benchmarks reach inference's kernels run: one set for every
// model, GPU and batch, fixed before the model was scored against published measurements
// (docs/plan.md says where each value comes from). Each share multiplies the profile's figure
// times that figure's own efficiency (HardwareProfile), which is the datasheet's share for a
// datasheet row and 1 for a measured figure: with the datasheet, prefill's GEMMs reach 0.6 of the
// peak, decode's reads 0.8 of HBM's and a ring all-reduce 0.7 of the link's; with a measured
// profile, the same shares of what Vigil's large GEMM, streaming kernel and collective reached.
struct InferEfficiency {
  double compute = 0.6 / 0.85;  // prefill's GEMMs, of a large GEMM (datasheet: 0.85 of peak)
  double hbm = 0.8 / 0.85;      // decode's streaming reads, of a streaming kernel (0.85 of HBM)
  double link = 0.7 / 0.8;      // a ring all-reduce's bus bandwidth, of a large collective's (0.8)
  double allreduce_latency_s = 10e-6;  // fixed cost of one all-reduce (launch and handshakes)
  double usable_memory = 0.9;  // share of HBM the runtime can fill with weights and KV cache
};

struct InferRequest {
  int64_t gpus = 1;    // the tensor-parallel group: every weight matrix is split over them
  int64_t batch = 1;   // sequences decoded together
  int64_t prompt = 1;  // prompt tokens per sequence
  int64_t output = 1;  // output tokens per sequence, the first of which prefill produces
  bool fp8 = false;    // FP8 weights, KV cache and GEMMs; BF16 otherwise
  InferEfficiency efficiency;
};

// One phase's time and what bounds it.
struct PhaseTime {
  double seconds = 0;       // max(compute, memory) + communication
  double compute_s = 0;     // FLOPs / achieved tensor throughput
  double memory_s = 0;      // bytes read / achieved HBM bandwidth
  double all_reduce_s = 0;  // the layers' tensor-parallel all-reduces, not overlapped
  std::string bound;        // "compute" or "memory", whichever of the two is larger
};

struct InferEstimate {
  double params = 0;               // all parameters, embedding and output head included
  double active_params = 0;        // parameters each token multiplies (top_k experts for MoE)
  double experts_read = 0;         // experts per MoE layer a decode step reads (1 when dense)
  double weights_gb_per_gpu = 0;   // GB (1e9 bytes)
  double kv_cache_gb_per_gpu = 0;  // the whole batch at prompt + output tokens
  double memory_gb_per_gpu = 0;    // weights + KV cache
  double usable_memory_gb = 0;     // the profile's HBM times efficiency.usable_memory
  PhaseTime prefill;               // a_p: the batch's prompts, producing the first token
  PhaseTime decode;                // b: one decode step at the mean context length
  double latency_s = 0;            // a_p + b (output - 1)
  double output_tokens_per_s = 0;  // batch * output / latency
};

// The roofline of `request` for `model` on `hardware`. MoE: a decode step reads the experts its
// batch's tokens are routed to, E (1 - (1 - k/E)^B) of them per layer when routing is uniform and
// independent; prefill reads them all and computes with top_k.
// InvalidArgument naming the constraint: --gpus not dividing the model's heads, --precision fp8
// on a GPU without FP8, prompt + output above the model's seq_len, a batch whose weights and KV
// cache do not fit in the GPUs' memory, or a count below 1.
Result<InferEstimate> EstimateInference(const ModelSpec& model, const HardwareProfile& hardware,
                                        const InferRequest& request);

}  // namespace vigil::plan
