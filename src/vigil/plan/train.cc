#include "vigil/plan/train.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "vigil/plan/units.h"

namespace vigil::plan {
namespace {

constexpr double kBytesPerValue = 2;   // bf16 activations, weights and gradients
constexpr double kMasterAndAdam = 12;  // fp32 master weights and Adam's two moments (ZeRO's K)
// The optimizer step reads the fp32 state and the gradient and writes the state and the weight:
// 12 + 2 read, 12 + 2 written, per parameter.
constexpr double kOptimizerTraffic = 28;

template <typename... Args>
Status Bad(fmt::format_string<Args...> format, Args&&... args) {
  return Status::InvalidArgument(fmt::format(format, std::forward<Args>(args)...));
}

// GB/s of a collective inside a node at `bytes`: the measured curve (log-linear between points,
// flat beyond the ends), or the link's peak times the bus efficiency.
double IntraBus(const HardwareProfile& hw, std::string_view collective, double bytes) {
  auto it = hw.intra_node_bus.find(std::string(collective));
  if (it == hw.intra_node_bus.end()) it = hw.intra_node_bus.find("allreduce");
  if (it == hw.intra_node_bus.end() || it->second.empty()) {
    return hw.intra_node_gbps * hw.nvlink_efficiency;
  }
  return CurveAt(it->second, bytes);
}

// A collective among `ranks` consecutive ranks spaced `stride` apart: inside a node when they all
// fit in one, over the NICs otherwise.
double GroupBus(const HardwareProfile& hw, std::string_view collective, double bytes, int64_t ranks,
                int64_t stride) {
  if (ranks * stride <= hw.gpus_per_node) return IntraBus(hw, collective, bytes);
  return hw.inter_node_gbps * hw.nic_efficiency;
}

// The per-GPU parameters of one transformer block (CountParameters' count split by the layout).
struct BlockParams {
  double dense = 0;    // attention, norms and a dense MLP: split by TP
  double experts = 0;  // the expert MLPs this GPU holds (MoE): split by TP and EP
};

BlockParams BlockParamsPerGpu(const ModelParameters& all, const ModelSpec& m, const Layout& l) {
  BlockParams p;
  if (m.experts > 1) {
    p.dense = (all.attention + all.norms) / D(l.tp) + all.router;
    p.experts = all.expert_mlp * D(m.experts) / D(l.ep) / D(l.tp);
  } else {
    p.dense = (all.attention + all.expert_mlp + all.norms) / D(l.tp);
  }
  return p;
}

// The embedding's and output layer's parameters on the most loaded end stage, per GPU (split by
// TP): both on a single stage (one matrix when tied); one V x h matrix on each end stage of a
// pipeline, which keeps a copy of a tied matrix on both ends (Megatron-LM does).
double EndStageParams(const ModelParameters& all, const Layout& l) {
  const double ends = l.pp == 1 ? all.embedding + all.output + all.final_norm : all.embedding;
  return ends / D(l.tp);
}

// Time of one micro-batch through one block on this GPU, forward and backward (recomputation
// included), and what it computes.
struct BlockCost {
  double gemm_s = 0;
  double memory_s = 0;
  double forward_flops = 0;     // the forward's FLOPs (model FLOPs are 3x)
  double hardware_flops = 0;    // forward, backward and recomputation
  double activation_bytes = 0;  // what the forward writes and the backward reads back
};

struct Gemm {
  double m, n, k, count;  // count: how many of this shape (heads, experts)
  bool attention;         // recomputed under selective recomputation
};

// Seconds of one of attention's batched products under FlashAttention: its scores stay on chip,
// so only Q, K, V and O cross HBM and the product runs at flash_of_gemm of a large GEMM; the
// causal mask's upper half is skipped (half the product's FLOPs are done, all are counted).
double FlashSeconds(double flops, const HardwareProfile& hw, const TrainAssumptions& a) {
  return 0.5 * flops /
         (PeakOf(hw, Precision::kBf16) * kTera * hw.bf16_efficiency * a.flash_of_gemm);
}

// What TP splits the tensors between its GEMMs by (a block's input, the norms' and dropouts'):
// TP with sequence parallelism, 1 without (each rank keeps them whole).
double SequenceSplit(const Layout& l) { return l.sequence_parallel ? D(l.tp) : 1; }

// The activations a block keeps of its norms, dropouts, residuals and GEMM inputs, in bytes per
// GPU (Korthikanti et al. 2022, Table 2): s b h (10 + 24 / t) where TP alone splits them and every
// rank keeps the 10 of the norms and dropouts whole; s b h 34 / t with sequence parallelism.
double LinearActivationBytes(const ModelSpec& m, const Layout& l) {
  const double sbh = D(m.seq_len) * D(l.micro_batch) * D(m.hidden) / D(l.cp), t = D(l.tp);
  return l.sequence_parallel ? 34 * sbh / t : sbh * (10 + 24 / t);
}

BlockCost BlockCostOf(const ModelSpec& m, const Layout& l, const HardwareProfile& hw,
                      const TrainAssumptions& a) {
  const bool flash = l.attention == Attention::kFlash;
  const double b = D(l.micro_batch), s = D(m.seq_len), h = D(m.hidden), n = D(m.heads);
  const double t = D(l.tp), c = D(l.cp);
  const double tokens = b * s / c, d = h / n, heads = b * n / t;
  const double kv = D(m.kv_heads) / n;
  const bool moe = m.experts > 1;
  const double expert_tokens = moe ? tokens * D(m.top_k) * D(l.ep) / D(m.experts) : tokens;
  const double local_experts = moe ? D(m.experts) / D(l.ep) : 1;
  const double up = m.gated_mlp ? 2 : 1;  // a gated MLP's gate and up projections, fused
  const Gemm gemms[] = {
      {tokens, h * (1 + 2 * kv) / t, h, 1, false},                         // QKV projection
      {s / c, s, d, heads, true},                                          // scores Q K^T
      {s / c, d, s, heads, true},                                          // scores x V
      {tokens, h, h / t, 1, false},                                        // output projection
      {expert_tokens, up * D(m.ffn_hidden) / t, h, local_experts, false},  // MLP up (and gate)
      {expert_tokens, h, D(m.ffn_hidden) / t, local_experts, false},       // MLP down
  };
  BlockCost cost;
  for (const Gemm& g : gemms) {
    // Attention's batched products stay in bf16 under fp8 training (Transformer Engine's recipe).
    const Precision precision = g.attention ? Precision::kBf16 : l.precision;
    const double rate = PeakOf(hw, precision);
    const double flops = 2 * g.m * g.n * g.k * g.count;
    const bool fused = flash && g.attention;
    const double seconds =
        fused ? FlashSeconds(flops, hw, a)
              : flops / (rate * kTera * GemmEfficiency(g.m, g.n, g.k, hw, precision));
    // Forward, and the backward's two products (data and weight gradients); FlashAttention-2's
    // backward does five products for the forward's two, recomputing the scores (3.5 each).
    double passes = fused ? 3.5 : 3;
    // Recomputation runs the forward again: all of it (full), or attention's core (selective),
    // which FlashAttention recomputes already.
    if (l.recompute == Recompute::kFull ||
        (l.recompute == Recompute::kSelective && g.attention && !fused)) {
      passes += 1;
    }
    cost.gemm_s += seconds * passes;
    cost.forward_flops += flops;
    cost.hardware_flops += flops * passes;
  }
  // Korthikanti et al. (2022): s b h (34 + 5 a s / h) bytes per block, split by CP and, with
  // sequence parallelism, all of it by TP (LinearActivationBytes); the 5 a s / h part is
  // attention's scores, softmax and dropout, split by TP's heads, which FlashAttention never
  // writes to HBM.
  const double linear = LinearActivationBytes(m, l);
  const double scores = flash ? 0 : n * s * s * b / (t * c);
  cost.activation_bytes = linear + 5 * scores;
  // The memory-bound kernels on the hidden states (norms, activation, dropout, residuals) write
  // their activations in the forward and read them and write their gradients in the backward.
  const double hbm = hw.HbmBytesPerS();
  double traffic = 3 * linear;
  if (l.recompute == Recompute::kFull) traffic += linear;
  // Unfused attention's kernels on the scores, as Megatron-LM fused them: scale, mask and softmax
  // read 2 bytes a score and write 2, dropout writes 2 more and a 1-byte mask (9 a forward); the
  // backward's dropout reads the gradient and the mask and writes 2 (5), its softmax reads the
  // gradient and the probabilities and writes 2 (6). Recomputation (full, or selective's core)
  // runs the forward twice. These kernels run at a measured fraction of the copy's bandwidth.
  const double forwards = l.recompute == Recompute::kNone ? 1 : 2;
  cost.memory_s = traffic / hbm + scores * (9 * forwards + 11) / (hbm * a.score_kernels_of_copy);
  return cost;
}

double ActivationBytes(const ModelSpec& m, const Layout& l, const BlockCost& block,
                       int64_t micro_batches, double layers_per_stage) {
  const double b = D(l.micro_batch), s = D(m.seq_len), h = D(m.hidden);
  const double t = D(l.tp), c = D(l.cp);
  double per_block = block.activation_bytes;
  if (l.recompute == Recompute::kSelective) per_block = LinearActivationBytes(m, l);
  // Full recomputation keeps each block's input, split by TP only with sequence parallelism.
  if (l.recompute == Recompute::kFull) per_block = 2 * s * b * h / (c * SequenceSplit(l));
  // 1F1B: the first stage holds min(p, m) micro-batches of its blocks; interleaving adds
  // (p - 1) / (p v) of that (Korthikanti et al. 2022, section 4.2.3).
  double in_flight = D(std::min(l.pp, micro_batches));
  if (l.vpp > 1) in_flight *= 1 + D(l.pp - 1) / D(l.pp * l.vpp);
  double bytes = per_block * layers_per_stage * in_flight;
  // Full recomputation rebuilds one block's activations at a time for its backward.
  if (l.recompute == Recompute::kFull) bytes += block.activation_bytes;
  // The output layer's input and its logits with their fp32 loss (Korthikanti's
  // 4 s b h / t (1 + V / h)); without sequence parallelism the input is whole on each TP rank.
  bytes += 4 * s * b * h / (c * SequenceSplit(l)) + 4 * s * b * D(m.vocab) / (t * c);
  return bytes;
}

// One pipeline stage of `layers` blocks on one GPU type: the time of one micro-batch through it
// (forward and backward), what of it is exposed communication, and the step's once-only costs.
struct StageCost {
  double compute_s = 0;                           // per micro-batch
  double gemm_s = 0;                              // of compute_s, the matrix products
  double tp_s = 0, cp_s = 0, ep_s = 0, pp_s = 0;  // exposed, per micro-batch
  double dp_s = 0;                                // exposed, once per step
  double optimizer_s = 0;                         // once per step
  MemoryBreakdown memory;
  double MicroBatch() const { return compute_s + tp_s + cp_s + ep_s + pp_s; }
};

StageCost StageCostOf(const ModelSpec& m, const Layout& l, const HardwareProfile& hw,
                      const TrainAssumptions& a, double layers) {
  StageCost c;
  const int64_t micro_batches = l.global_batch / (l.dp * l.micro_batch);
  const double h = D(m.hidden), s = D(m.seq_len), b = D(l.micro_batch);
  const BlockCost block = BlockCostOf(m, l, hw, a);

  // The output layer (logits) on the stage: the model's last; the slowest stage of a pipeline
  // whose blocks are spread evenly.
  const double tokens = b * s / D(l.cp);
  const double logit_s = 3 * 2 * tokens * D(m.vocab) / D(l.tp) * h /
                         (PeakOf(hw, l.precision) * kTera *
                          GemmEfficiency(tokens, D(m.vocab) / D(l.tp), h, hw, l.precision));
  c.gemm_s = layers * block.gemm_s + logit_s;
  c.compute_s = c.gemm_s + layers * block.memory_s;

  // Communication inside a micro-batch's pass through the stage, exposed share only.
  const double act_bytes = tokens * h * kBytesPerValue;
  const double tp_passes = l.recompute == Recompute::kFull ? 6 : 4;  // all-reduce equivalents
  c.tp_s = (1 - a.tp_hidden) * layers * tp_passes *
           CollectiveSeconds("allreduce", act_bytes, l.tp,
                             GroupBus(hw, "allreduce", act_bytes, l.tp, 1), a.latency_s);
  const double kv_bytes = act_bytes * D(m.kv_heads) / D(m.heads) * 2 / D(l.tp);
  c.cp_s = (1 - a.cp_hidden) * layers * 3 *
           CollectiveSeconds("allgather", kv_bytes, l.cp,
                             GroupBus(hw, "allgather", kv_bytes, l.cp, l.tp), a.latency_s);
  const double a2a_bytes = act_bytes * D(m.top_k);
  if (m.experts > 1) {
    c.ep_s = (1 - a.ep_hidden) * layers * tp_passes *
             CollectiveSeconds("alltoall", a2a_bytes, l.ep,
                               GroupBus(hw, "alltoall", a2a_bytes, l.ep, l.tp * l.cp), a.latency_s);
  }
  // Megatron's scatter-gather: each TP rank sends its 1/t share to the next stage, once forward
  // and once backward per model chunk.
  // A pipeline on more than one node has a stage boundary between nodes, and runs at that pace.
  const bool pp_across_nodes = l.gpus > hw.gpus_per_node;
  const double pp_bw = pp_across_nodes ? hw.inter_node_gbps * hw.nic_efficiency
                                       : IntraBus(hw, "allgather", act_bytes);
  if (l.pp > 1) {
    c.pp_s =
        (1 - a.pp_hidden) * 2 * D(l.vpp) * (a.latency_s + act_bytes / D(l.tp) / (pp_bw * kGiga));
  }

  // Parameters on the stage: its blocks, and an end stage's embedding or output layer.
  const ModelParameters all = CountParameters(m);
  const BlockParams block_params = BlockParamsPerGpu(all, m, l);
  const double dense = layers * block_params.dense + EndStageParams(all, l);
  const double experts = layers * block_params.experts;
  const double on_gpu = dense + experts;
  // The gradients' reduction over DP (experts over DP / EP); ZeRO-3 gathers weights twice more.
  const double zero3 = l.zero == 3 ? 1.5 : 1;
  const int64_t expert_dp = l.dp / l.ep;
  const double dense_bytes = kBytesPerValue * dense, expert_bytes = kBytesPerValue * experts;
  c.dp_s =
      (1 - a.dp_hidden) * zero3 *
      (CollectiveSeconds("allreduce", dense_bytes, l.dp,
                         GroupBus(hw, "allreduce", dense_bytes, l.dp, l.tp * l.cp), a.latency_s) +
       CollectiveSeconds("allreduce", expert_bytes, expert_dp,
                         GroupBus(hw, "allreduce", expert_bytes, expert_dp, l.tp * l.cp * l.ep),
                         a.latency_s));
  const double dp = D(l.dp);
  const double optimizer_share = l.zero >= 1 ? on_gpu / dp : on_gpu;
  c.optimizer_s = optimizer_share * kOptimizerTraffic / hw.HbmBytesPerS();

  // ZeRO's model states (Rajbhandari et al. 2020: 2 + 2 + 12 bytes per parameter).
  c.memory.parameters = kBytesPerValue * on_gpu / (l.zero >= 3 ? dp : 1);
  c.memory.gradients = kBytesPerValue * on_gpu / (l.zero >= 2 ? dp : 1);
  c.memory.optimizer = kMasterAndAdam * on_gpu / (l.zero >= 1 ? dp : 1);
  c.memory.activations = ActivationBytes(m, l, block, micro_batches, layers);
  c.memory.reserve = a.reserve_gb * kGiga;
  return c;
}
}  // namespace

std::string_view RecomputeName(Recompute r) {
  switch (r) {
    case Recompute::kNone:
      return "none";
    case Recompute::kSelective:
      return "selective";
    case Recompute::kFull:
      return "full";
  }
  return "none";
}

std::string_view PrecisionName(Precision p) { return p == Precision::kFp8 ? "fp8" : "bf16"; }

std::string_view AttentionName(Attention a) {
  return a == Attention::kUnfused ? "unfused" : "flash";
}

Result<Recompute> ParseRecompute(std::string_view text) {
  for (Recompute r : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
    if (text == RecomputeName(r)) return r;
  }
  return Status::InvalidArgument(
      fmt::format("--recompute: expected none, selective or full, got '{}'", text));
}

Result<Precision> ParsePrecision(std::string_view text) {
  if (text == "bf16") return Precision::kBf16;
  if (text == "fp8") return Precision::kFp8;
  return Status::InvalidArgument(fmt::format("--precision: expected bf16 or fp8, got '{}'", text));
}

Result<Attention> ParseAttention(std::string_view text) {
  if (text == "flash") return Attention::kFlash;
  if (text == "unfused") return Attention::kUnfused;
  return Status::InvalidArgument(
      fmt::format("--attention: expected flash or unfused, got '{}'", text));
}

Status CheckLayout(const ModelSpec& m, const Layout& l, const HardwareProfile& hw) {
  if (l.tp < 1 || l.pp < 1 || l.vpp < 1 || l.dp < 1 || l.cp < 1 || l.ep < 1 || l.micro_batch < 1 ||
      l.global_batch < 1 || l.zero < 0 || l.zero > 3) {
    return Bad("every parallel degree and batch must be at least 1, and ZeRO's stage 0 to 3");
  }
  // In doubles: the degrees come from flags, and their product may overflow an int64.
  const double product = D(l.tp) * D(l.pp) * D(l.dp) * D(l.cp);
  if (product != D(l.gpus)) {
    return Bad("TP x PP x DP x CP = {} x {} x {} x {} = {:.17g} is not the {} GPUs", l.tp, l.pp,
               l.dp, l.cp, product, l.gpus);
  }
  if (m.heads % l.tp != 0) return Bad("TP ({}) does not divide the {} heads", l.tp, m.heads);
  if (m.kv_heads % l.tp != 0 && l.tp % m.kv_heads != 0) {
    return Bad("TP ({}) and the {} key/value heads do not divide one another", l.tp, m.kv_heads);
  }
  if (m.layers % (l.pp * l.vpp) != 0) {
    return Bad("PP x VPP ({} x {}) does not divide the {} layers", l.pp, l.vpp, m.layers);
  }
  if (l.global_batch % (l.dp * l.micro_batch) != 0) {
    return Bad("the global batch ({}) is not a multiple of DP x micro-batch ({} x {})",
               l.global_batch, l.dp, l.micro_batch);
  }
  const int64_t micro_batches = l.global_batch / (l.dp * l.micro_batch);
  if (l.vpp > 1 && (l.pp == 1 || micro_batches % l.pp != 0)) {
    return Bad("interleaving (VPP {}) needs PP > 1 and micro-batches ({}) a multiple of PP ({})",
               l.vpp, micro_batches, l.pp);
  }
  if (m.experts % l.ep != 0 || l.dp % l.ep != 0) {
    return Bad("EP ({}) must divide the {} experts and DP ({})", l.ep, m.experts, l.dp);
  }
  // Megatron-Core refuses MoE with TP but without sequence parallelism.
  if (m.experts > 1 && l.tp > 1 && !l.sequence_parallel) {
    return Bad("MoE with TP ({}) needs sequence parallelism", l.tp);
  }
  if (l.cp > 1 && m.seq_len % (2 * l.cp) != 0) {
    return Bad("2 x CP ({}) does not divide the sequence length {}", 2 * l.cp, m.seq_len);
  }
  if (l.precision == Precision::kFp8 && hw.fp8_tflops <= 0) {
    return Bad("fp8: the {} has no FP8 tensor cores", hw.gpu);
  }
  return Status::Ok();
}

double PeakOf(const HardwareProfile& hw, Precision precision) {
  return precision == Precision::kFp8 ? hw.fp8_tflops : hw.bf16_tflops;
}

double GemmEfficiency(double m, double n, double k, const HardwareProfile& hw,
                      Precision precision) {
  const double peak_tflops = PeakOf(hw, precision);
  const double share = precision == Precision::kFp8 ? hw.fp8_efficiency : hw.bf16_efficiency;
  const double flops = 2 * m * n * k;
  const double compute_s = flops / (peak_tflops * share * kTera);
  const double memory_s = kBytesPerValue * (m * k + k * n + m * n) / hw.HbmBytesPerS();
  return flops / (peak_tflops * kTera) / (compute_s + memory_s);
}

double CollectiveSeconds(std::string_view collective, double bytes, int64_t ranks,
                         double busbw_gbps, double latency_s) {
  if (ranks <= 1 || bytes <= 0) return 0;
  const double n = D(ranks);
  const double factor = collective == "allreduce" ? 2 * (n - 1) / n : (n - 1) / n;
  return latency_s + bytes * factor / (busbw_gbps * kGiga);
}

double StageSeconds(const ModelSpec& m, const Layout& l, const HardwareProfile& hw, int64_t layers,
                    const TrainAssumptions& a) {
  return StageCostOf(m, l, hw, a, D(layers)).MicroBatch();
}

TrainPrediction PredictTrain(const ModelSpec& m, const Layout& l, const HardwareProfile& hw,
                             const TrainAssumptions& a) {
  return PredictMixed(m, l, {hw, l.pp, m.layers / l.pp}, {hw, 0, 0}, a);
}

TrainPrediction PredictMixed(const ModelSpec& m, const Layout& l, const StageGroup& first,
                             const StageGroup& second, const TrainAssumptions& a) {
  TrainPrediction p;
  const int64_t micro_batches = l.global_batch / (l.dp * l.micro_batch);
  const double mb = D(micro_batches);
  std::vector<std::pair<StageCost, const StageGroup*>> stages;
  for (const StageGroup* g : {&first, &second}) {
    if (g->stages > 0) stages.emplace_back(StageCostOf(m, l, g->hw, a, D(g->layers)), g);
  }
  // The pipeline runs at its slowest stage's pace; the step's once-only costs wait for the last.
  const auto slowest =
      std::ranges::max_element(stages, {}, [](const auto& s) { return s.first.MicroBatch(); });
  const StageCost& c = slowest->first;
  const double stage = c.MicroBatch();
  p.micro_batches = micro_batches;
  p.bubble_fraction = D(l.pp - 1) / (D(l.vpp) * mb);
  p.time.compute_s = mb * c.compute_s;
  p.time.compute_gemm_s = mb * c.gemm_s;
  p.time.tp_comm_s = mb * c.tp_s;
  p.time.cp_comm_s = mb * c.cp_s;
  p.time.ep_comm_s = mb * c.ep_s;
  p.time.pp_comm_s = mb * c.pp_s;
  p.time.bubble_s = D(l.pp - 1) / D(l.vpp) * stage;
  double peak_sum = 0;
  p.fits = true;
  for (const auto& [cost, group] : stages) {
    p.time.dp_comm_s = std::max(p.time.dp_comm_s, cost.dp_s);
    p.time.optimizer_s = std::max(p.time.optimizer_s, cost.optimizer_s);
    if (cost.memory.Total() > p.memory.Total()) {
      p.memory = cost.memory;
      p.memory_limit_bytes = group->hw.memory_gb * kGiga;
    }
    p.fits = p.fits && cost.memory.Total() <= group->hw.memory_gb * kGiga;
    const HardwareProfile& hw = group->hw;
    const double bf16 = hw.peak_bf16_tflops > 0 ? hw.peak_bf16_tflops : hw.bf16_tflops;
    const double fp8 = hw.peak_fp8_tflops > 0 ? hw.peak_fp8_tflops : hw.fp8_tflops;
    const double peak = l.precision == Precision::kFp8 ? fp8 : bf16;
    peak_sum += peak * kTera * D(group->stages * l.gpus / l.pp);
  }
  p.step_time_s = p.time.compute_s + p.time.tp_comm_s + p.time.cp_comm_s + p.time.ep_comm_s +
                  p.time.pp_comm_s + p.time.bubble_s + p.time.dp_comm_s + p.time.optimizer_s;

  // FLOPs over the whole job: a block's FLOPs on one GPU times the GPUs that share it (TP x CP),
  // for every block and micro-batch of every replica.
  const BlockCost block = BlockCostOf(m, l, first.hw, a);
  const double h = D(m.hidden), s = D(m.seq_len), b = D(l.micro_batch);
  const double share = D(l.tp * l.cp);
  const double logits = 2 * b * s * D(m.vocab) * h;
  const double micro_batches_all = D(l.global_batch) / b;
  p.model_flops = 3 * (block.forward_flops * share * D(m.layers) + logits) * micro_batches_all;
  p.hardware_flops = (block.hardware_flops * share * D(m.layers) + 3 * logits) * micro_batches_all;
  p.tokens_per_s = D(l.global_batch) * s / p.step_time_s;
  p.tflops_per_gpu = p.hardware_flops / p.step_time_s / D(l.gpus) / kTera;
  p.mfu = p.model_flops / p.step_time_s / peak_sum;
  p.parameters = CountParameters(m).total;
  return p;
}

std::array<std::pair<std::string_view, double>, 8> StepTerms(const StepBreakdown& t) {
  return {{{"compute", t.compute_s},
           {"tp_comm", t.tp_comm_s},
           {"cp_comm", t.cp_comm_s},
           {"pp_comm", t.pp_comm_s},
           {"dp_comm", t.dp_comm_s},
           {"ep_comm", t.ep_comm_s},
           {"bubble", t.bubble_s},
           {"optimizer", t.optimizer_s}}};
}

}  // namespace vigil::plan
