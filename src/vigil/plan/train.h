// The training step model of `vigil plan train` (issue 26 part 2): a transformer's step time,
// throughput and memory per GPU under a parallel layout, from a hardware profile. The formulas,
// their sources (Narayanan et al. 2021, Korthikanti et al. 2022, Rajbhandari et al. 2020) and the
// one set of assumptions every prediction uses are in docs/plan.md.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "vigil/core/status.h"
#include "vigil/plan/hardware.h"
#include "vigil/plan/model_spec.h"

namespace vigil::plan {

enum class Recompute { kNone, kSelective, kFull };
enum class Precision { kBf16, kFp8 };
// How the framework computes attention's core: FlashAttention (fused; the scores never reach HBM,
// the backward recomputes them, the causal mask's upper half is skipped), as Megatron-Core,
// NeMo, MegaScale and PyTorch's scaled_dot_product_attention do today; or unfused (the scores,
// softmax and dropout written to HBM and kept for the backward), as Megatron-LM did in 2021.
enum class Attention { kFlash, kUnfused };

// "none", "selective", "full"; "bf16", "fp8"; "flash", "unfused".
std::string_view RecomputeName(Recompute r);
std::string_view PrecisionName(Precision p);
std::string_view AttentionName(Attention a);
Result<Recompute> ParseRecompute(std::string_view text);
Result<Precision> ParsePrecision(std::string_view text);
Result<Attention> ParseAttention(std::string_view text);

// A parallel layout, as Megatron-LM names its parts. Sequence parallelism is on wherever tp > 1.
struct Layout {
  int64_t gpus = 1;          // GPUs in the job: tp x pp x dp x cp
  int64_t tp = 1;            // tensor parallel
  int64_t pp = 1;            // pipeline stages
  int64_t vpp = 1;           // virtual stages (model chunks) per pipeline stage: interleaving
  int64_t dp = 1;            // data parallel
  int64_t cp = 1;            // context parallel (the sequence split)
  int64_t ep = 1;            // expert parallel, within the data parallel group
  int64_t micro_batch = 1;   // sequences per micro-batch
  int64_t global_batch = 1;  // sequences per step
  int zero = 0;              // ZeRO stage 0-3 over the data parallel group
  Recompute recompute = Recompute::kNone;
  Precision precision = Precision::kBf16;
  Attention attention = Attention::kFlash;
  // Megatron's sequence parallelism (Korthikanti et al. 2022): the norms, dropouts and residuals
  // between TP's GEMMs work on 1/TP of the sequence; without it (Megatron-LM before 2022, or a
  // framework that lacks it) every TP rank repeats them on the whole sequence.
  bool sequence_parallel = true;
};

// The one set of assumptions of docs/plan.md ("Assumptions"), frozen before scoring. Shares of a
// communication hidden behind compute: 0 is all exposed.
struct TrainAssumptions {
  double tp_hidden = 0;      // TP's all-reduce / reduce-scatter + all-gather: on the critical path
  double cp_hidden = 0.5;    // CP's key/value exchange, overlapped with the attention of a ring
  double pp_hidden = 0;      // PP's point-to-point sends in the 1F1B steady state
  double dp_hidden = 0;      // DP's gradient reduction after the last micro-batch's backward
  double ep_hidden = 0;      // EP's all-to-all dispatch and combine
  double latency_s = 20e-6;  // the fixed cost of one collective or send (NCCL's, order of)
  double reserve_gb = 4;     // CUDA context, workspaces and allocator fragmentation per GPU
  // FlashAttention's products of the large GEMM's speed: FlashAttention-2 reports 50-73% of the
  // A100's peak for its forward and backward (Dao 2023), where a large GEMM reaches 85%; 0.6 of
  // the peak is 0.7 of the GEMM.
  double flash_of_gemm = 0.7;
  // Unfused attention's softmax and dropout over the scores move their bytes at 0.6 of a device
  // copy's bandwidth: measured on an H200 at every unfused row's shapes of the scored tables,
  // 0.56-0.62 (docs/benchmarks.md, "Plan: what a block costs besides its products").
  double score_kernels_of_copy = 0.6;
};

// Seconds of one step, by what they are spent on. compute + the exposed communication + bubble
// + optimizer = step.
struct StepBreakdown {
  double compute_s = 0;  // GEMMs and memory-bound kernels of the slowest stage, all micro-batches
  // Of compute_s, the matrix products (the blocks' GEMMs, attention's products, the output
  // layer); the rest is the memory-bound kernels. Not a term of its own in StepTerms.
  double compute_gemm_s = 0;
  double tp_comm_s = 0;  // exposed shares of each communication
  double cp_comm_s = 0;
  double pp_comm_s = 0;
  double dp_comm_s = 0;
  double ep_comm_s = 0;
  double bubble_s = 0;     // the pipeline's fill and drain: (p - 1) / v micro-batch times
  double optimizer_s = 0;  // the optimizer's step over this GPU's share of the state
};

// StepBreakdown's terms in its order, by the names `plan train --json` gives them.
std::array<std::pair<std::string_view, double>, 8> StepTerms(const StepBreakdown& t);

// Bytes per GPU (1e9 = a GB) on the most loaded pipeline stage.
struct MemoryBreakdown {
  double parameters = 0;
  double gradients = 0;
  double optimizer = 0;  // fp32 master weights and Adam's two moments
  double activations = 0;
  double reserve = 0;
  double ModelStates() const { return parameters + gradients + optimizer; }
  double Total() const { return ModelStates() + activations + reserve; }
};

struct TrainPrediction {
  double parameters = 0;      // of the whole model
  double model_flops = 0;     // per step, forward and backward (3x the forward)
  double hardware_flops = 0;  // per step, recomputation included
  double step_time_s = 0;
  double tokens_per_s = 0;
  double tflops_per_gpu = 0;   // hardware FLOP/s per GPU (recomputation counted), in 1e12
  double mfu = 0;              // model FLOP/s over the GPUs' datasheet dense peak
  int64_t micro_batches = 0;   // per pipeline per step
  double bubble_fraction = 0;  // (p - 1) / (v m)
  StepBreakdown time;
  MemoryBreakdown memory;
  double memory_limit_bytes = 0;  // the profile's memory
  bool fits = false;              // memory.Total() <= memory_limit_bytes
};

// The layout's constraints against the model and the profile, each broken one named: tp x pp x dp
// x cp = gpus; tp divides heads (and kv_heads divides by tp or tp by kv_heads); pp x vpp divides
// layers; vpp > 1 needs pp > 1 and micro-batches a multiple of pp; dp x micro_batch divides the
// global batch; ep divides experts and dp; 2 cp divides seq_len when cp > 1; fp8 needs a GPU
// with FP8. InvalidArgument otherwise.
Status CheckLayout(const ModelSpec& model, const Layout& layout, const HardwareProfile& hw);

// The prediction for a layout CheckLayout accepts (REQUIRES: it does). Pure; thread-safe.
TrainPrediction PredictTrain(const ModelSpec& model, const Layout& layout,
                             const HardwareProfile& hw, const TrainAssumptions& a = {});

// Pipeline stages of one GPU type in a mixed cluster (AMP, Li et al. 2022): `stages` of the PP
// stages run on `hw`, each with `layers` blocks.
struct StageGroup {
  HardwareProfile hw;
  int64_t stages = 0;
  int64_t layers = 0;
};

// The prediction for a pipeline whose stages are split between two GPU types (`second.stages` may
// be 0): the slowest stage sets the pace, the memory is the fullest stage's, and `fits` needs every
// stage to fit in its own GPU. REQUIRES: CheckLayout accepts the layout against `first.hw`;
// first.stages + second.stages = pp; their blocks add up to the model's layers; vpp = 1 where
// second.stages > 0. Pure; thread-safe.
TrainPrediction PredictMixed(const ModelSpec& model, const Layout& layout, const StageGroup& first,
                             const StageGroup& second, const TrainAssumptions& a = {});

// Seconds of one micro-batch through one pipeline stage of `layers` blocks on `hw` (forward,
// backward, recomputation and the exposed communication inside it; the output layer counted, as
// on the last stage). Linear in `layers`. Pure; thread-safe.
double StageSeconds(const ModelSpec& model, const Layout& layout, const HardwareProfile& hw,
                    int64_t layers, const TrainAssumptions& a = {});

// The profile's GEMM rate in `precision`, TFLOP/s.
double PeakOf(const HardwareProfile& hw, Precision precision);

// Share of PeakOf(precision) a GEMM of m x k by k x n reaches: the time to compute it at that
// rate times its efficiency plus the time to move its operands and result through HBM once (they
// overlap only in part), over the compute time at the rate. One function for every GEMM, not
// fitted per shape.
double GemmEfficiency(double m, double n, double k, const HardwareProfile& hw, Precision precision);

// The seconds of one collective among `ranks` GPUs moving `bytes` per GPU (nccl-tests' size) over a
// bus bandwidth of `busbw_gbps`: nccl-tests' bus factor (2(n-1)/n for all-reduce, (n-1)/n for the
// others) times bytes over the bandwidth, plus the latency. 0 for one rank.
double CollectiveSeconds(std::string_view collective, double bytes, int64_t ranks,
                         double busbw_gbps, double latency_s);

}  // namespace vigil::plan
