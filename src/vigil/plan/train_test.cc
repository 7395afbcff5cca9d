#include "vigil/plan/train.h"

#include <gtest/gtest.h>

#include "vigil/plan/layout_fixture.h"

namespace vigil::plan {
namespace {

HardwareProfile A100() { return *DatasheetProfile("a100"); }

// Narayanan et al. (2021), equation 3: 96 B s l h^2 (1 + s / 6h + V / 16 l h) with full
// recomputation, 72 B s l h^2 (1 + s / 6h + V / 12 l h) without.
TEST(PredictTrainTest, CountsFlopsAsNarayananEtAl) {
  const ModelSpec m = GptModel(128, 25600, 160);
  Layout l = Megatron(3072, 8, 64, 3072);
  l.attention = Attention::kUnfused;  // the paper's
  ASSERT_TRUE(CheckLayout(m, l, A100()).ok());
  const TrainPrediction p = PredictTrain(m, l, A100());
  const double B = 3072, s = 2048, L = 128, h = 25600, V = 51200;
  EXPECT_NEAR(p.hardware_flops / (96 * B * s * L * h * h * (1 + s / (6 * h) + V / (16 * L * h))), 1,
              1e-12);
  EXPECT_NEAR(p.model_flops / (72 * B * s * L * h * h * (1 + s / (6 * h) + V / (12 * L * h))), 1,
              1e-12);
  EXPECT_NEAR(p.tflops_per_gpu, p.hardware_flops / p.step_time_s / 3072 / 1e12, 1e-9);
  EXPECT_NEAR(p.tokens_per_s, 3072 * 2048 / p.step_time_s, 1e-6);
}

// A gated MLP (SwiGLU, Llama) multiplies by three matrices of h x ffn where a plain one has two:
// Llama 2 70B's 80 blocks of h 8192, 64 heads over 8 KV heads and ffn 28672, untied 32,000-token
// embedding and head, hold 68,976,648,192 parameters (its released weights: "70B").
TEST(PredictTrainTest, AGatedMlpHasAThirdMatrix) {
  ModelSpec m = GptModel(80, 8192, 64);
  m.kv_heads = 8;
  m.ffn_hidden = 28672;
  m.vocab = 32000;
  m.seq_len = 4096;
  const Layout l = Megatron(64, 8, 8, 64);
  const TrainPrediction plain = PredictTrain(m, l, A100());
  m.gated_mlp = true;
  m.tied_embeddings = false;
  const TrainPrediction gated = PredictTrain(m, l, A100());
  EXPECT_DOUBLE_EQ(gated.parameters, 68976648192.0);
  // Its FLOPs grow by the third matrix's 2 x tokens x h x ffn per pass.
  const double third = 80.0 * 8192 * 28672;
  EXPECT_NEAR((gated.model_flops - plain.model_flops) / (6 * 64 * 4096 * third), 1, 1e-9);
}

// An untied model holds a second V x h matrix: on a single stage both sit on every GPU, so its
// memory grows by the output layer's weights, gradients and optimizer state; in a pipeline each
// end stage holds one matrix whether or not they are tied.
TEST(PredictTrainTest, AnUntiedOutputLayerTakesMemoryOnASingleStage) {
  ModelSpec m = GptModel(24, 2048, 16);
  const Layout single = Megatron(8, 1, 1, 64);
  const Layout pipeline = Megatron(8, 1, 2, 64);
  const TrainPrediction tied = PredictTrain(m, single, A100());
  const TrainPrediction tied_pp = PredictTrain(m, pipeline, A100());
  m.tied_embeddings = false;
  const TrainPrediction untied = PredictTrain(m, single, A100());
  const TrainPrediction untied_pp = PredictTrain(m, pipeline, A100());
  const double matrix = 51200.0 * 2048;
  EXPECT_DOUBLE_EQ(untied.parameters - tied.parameters, matrix);
  EXPECT_NEAR(untied.memory.ModelStates() - tied.memory.ModelStates(), 16 * matrix, 1);
  EXPECT_DOUBLE_EQ(untied_pp.memory.ModelStates(), tied_pp.memory.ModelStates());
}

TEST(PredictTrainTest, StepIsTheSumOfItsParts) {
  const ModelSpec m = GptModel(80, 12288, 96);
  const TrainPrediction p = PredictTrain(m, Megatron(1536, 8, 8, 2304), A100());
  const StepBreakdown& t = p.time;
  EXPECT_NEAR(p.step_time_s,
              t.compute_s + t.tp_comm_s + t.cp_comm_s + t.pp_comm_s + t.dp_comm_s + t.ep_comm_s +
                  t.bubble_s + t.optimizer_s,
              1e-12);
  EXPECT_GT(t.tp_comm_s, 0);
  EXPECT_GT(t.pp_comm_s, 0);
  EXPECT_GT(t.dp_comm_s, 0);
  EXPECT_EQ(t.ep_comm_s, 0);  // dense
  EXPECT_EQ(t.cp_comm_s, 0);  // cp = 1
  EXPECT_GT(p.mfu, 0.2);
  EXPECT_LT(p.mfu, 0.85);
}

// One GPU, micro-batches of 4 sequences in a step of 32.
Layout OneGpuEightMicroBatches(Recompute recompute) {
  Layout l;
  l.gpus = l.dp = 1;
  l.micro_batch = 4;
  l.global_batch = 32;
  l.recompute = recompute;
  return l;
}

// compute_s splits into the matrix products and the memory-bound kernels, which are
// Korthikanti et al.'s activation bytes moved through HBM: on one GPU without recomputation,
// FlashAttention, TP 1, each block's kernels write s b h (10 + 24) bytes in the forward and read
// them and write their gradients in the backward, three times that, at the HBM rate.
TEST(PredictTrainTest, ComputeSplitsIntoMatrixProductsAndMemoryBoundKernels) {
  const ModelSpec m = GptModel(24, 2048, 16);
  const Layout l = OneGpuEightMicroBatches(Recompute::kNone);
  const HardwareProfile hw = A100();
  const TrainPrediction p = PredictTrain(m, l, hw);
  const double micro_batches = 8, layers = 24;
  const double bytes = 3 * 2048.0 * 4 * 2048 * (10 + 24);
  const double memory_bound =
      micro_batches * layers * bytes / (hw.hbm_gbps * hw.hbm_efficiency * 1e9);
  EXPECT_NEAR(p.time.compute_s - p.time.compute_gemm_s, memory_bound, 1e-9 * memory_bound);
  EXPECT_GT(p.time.compute_gemm_s, 5 * memory_bound);  // a 1.3B model's step is mostly products
}

// Unfused attention adds the kernels on its scores (b heads s^2 of them per block): 9 bytes each
// a forward (scale-mask-softmax and dropout), 11 a backward, the forward twice under full
// recomputation, at score_kernels_of_copy of the HBM rate; the hidden states' kernels are read
// and written once more by the recomputation (4 passes over s b h (10 + 24) bytes).
TEST(PredictTrainTest, UnfusedAttentionsScoreKernelsArePricedByTheirBytesAtTheirOwnRate) {
  const ModelSpec m = GptModel(24, 2048, 16);
  Layout l = OneGpuEightMicroBatches(Recompute::kFull);
  l.attention = Attention::kUnfused;
  const HardwareProfile hw = A100();
  TrainAssumptions a;
  a.score_kernels_of_copy = 0.5;
  const TrainPrediction p = PredictTrain(m, l, hw, a);
  const double micro_batches = 8, layers = 24, hbm = hw.hbm_gbps * hw.hbm_efficiency * 1e9;
  const double hidden = 4 * 2048.0 * 4 * 2048 * (10 + 24), scores = 4 * 16 * 2048.0 * 2048;
  const double memory_bound =
      micro_batches * layers * (hidden / hbm + scores * (2 * 9 + 11) / (hbm * 0.5));
  EXPECT_NEAR(p.time.compute_s - p.time.compute_gemm_s, memory_bound, 1e-9 * memory_bound);
  // Selective recomputation runs only attention's core again: the hidden states' kernels once.
  l.recompute = Recompute::kSelective;
  const TrainPrediction q = PredictTrain(m, l, hw, a);
  const double selective =
      micro_batches * layers * (0.75 * hidden / hbm + scores * (2 * 9 + 11) / (hbm * 0.5));
  EXPECT_NEAR(q.time.compute_s - q.time.compute_gemm_s, selective, 1e-9 * selective);
}

TEST(PredictTrainTest, BubbleShrinksWithInterleaving) {
  const ModelSpec m = GptModel(96, 12288, 96);
  Layout l = Megatron(1024, 8, 8, 512);  // dp 16: 32 micro-batches
  const TrainPrediction plain = PredictTrain(m, l, A100());
  EXPECT_EQ(plain.micro_batches, 32);
  EXPECT_DOUBLE_EQ(plain.bubble_fraction, 7.0 / 32);
  EXPECT_NEAR(
      plain.time.bubble_s / (plain.time.compute_s + plain.time.tp_comm_s + plain.time.pp_comm_s),
      7.0 / 32, 1e-9);
  l.vpp = 2;
  ASSERT_TRUE(CheckLayout(m, l, A100()).ok());
  const TrainPrediction interleaved = PredictTrain(m, l, A100());
  EXPECT_DOUBLE_EQ(interleaved.bubble_fraction, 7.0 / 64);
  EXPECT_LT(interleaved.step_time_s, plain.step_time_s);
}

// Rajbhandari et al. (2020): 2 + 2 + 12 bytes per parameter, sharded stage by stage.
TEST(PredictTrainTest, ModelStatesFollowZero) {
  const ModelSpec m = GptModel(36, 4096, 32);
  Layout l;
  l.gpus = l.dp = l.global_batch = 64;
  for (int zero = 0; zero <= 3; ++zero) {
    l.zero = zero;
    const TrainPrediction p = PredictTrain(m, l, A100());
    const double psi = p.parameters;
    const double expected[] = {16 * psi, 4 * psi + 12 * psi / 64, 2 * psi + 14 * psi / 64,
                               16 * psi / 64};
    EXPECT_NEAR(p.memory.ModelStates() / expected[zero], 1, 1e-12) << "ZeRO " << zero;
  }
}

// Korthikanti et al. (2022): selective recomputation drops the 5 a s / h term; full keeps 2 s b h.
TEST(PredictTrainTest, ActivationsFollowKorthikantiEtAl) {
  const ModelSpec m = GptModel(96, 12288, 96);
  Layout l = Megatron(8, 8, 1, 1);
  l.attention = Attention::kUnfused;  // the paper's
  auto activations = [&](Recompute r) {
    l.recompute = r;
    return PredictTrain(m, l, A100()).memory.activations;
  };
  const double none = activations(Recompute::kNone);
  const double selective = activations(Recompute::kSelective);
  const double full = activations(Recompute::kFull);
  const double s = 2048, h = 12288, a = 96, t = 8, L = 96;
  EXPECT_NEAR(none - selective, L * 5 * a * s * s / t, 1);
  EXPECT_NEAR(selective - full, L * 32 * s * h / t - s * h * (34 + 5 * a * s / h) / t, 1);
}

// Without sequence parallelism (Korthikanti et al. 2022, Table 2) every TP rank keeps the norms'
// and dropouts' 10 s b h bytes of a block whole, s b h (10 + 24 / t) against 34 s b h / t, and
// runs their kernels on the whole sequence; full recomputation keeps each block's whole input,
// and the output layer's input (4 s b h) is whole too. TP's communication moves the same bytes
// (all-reduce against reduce-scatter plus all-gather).
TEST(PredictTrainTest, WithoutSequenceParallelismEachTpRankKeepsTheNormsWhole) {
  const ModelSpec m = GptModel(96, 12288, 96);
  const double s = 2048, h = 12288, L = 96;
  for (const double t : {8.0, 1.0}) {
    Layout l = Megatron(static_cast<int64_t>(t), static_cast<int64_t>(t), 1, 1);
    l.attention = Attention::kUnfused;
    auto predict = [&](Recompute r, bool sequence_parallel) {
      l.recompute = r;
      l.sequence_parallel = sequence_parallel;
      return PredictTrain(m, l, A100());
    };
    const double norms = s * h * (10 - 10 / t);     // what a block keeps more without it
    const double output = 4 * s * h * (1 - 1 / t);  // and the output layer
    for (const Recompute r : {Recompute::kNone, Recompute::kSelective}) {
      const TrainPrediction with = predict(r, true), without = predict(r, false);
      EXPECT_NEAR(without.memory.activations - with.memory.activations, L * norms + output, 1) << t;
    }
    const TrainPrediction with = predict(Recompute::kFull, true);
    const TrainPrediction without = predict(Recompute::kFull, false);
    EXPECT_NEAR(without.memory.activations - with.memory.activations,
                L * 2 * s * h * (1 - 1 / t) + norms + output, 1)
        << t;
    EXPECT_EQ(without.time.tp_comm_s, with.time.tp_comm_s) << t;
    if (t > 1) {
      EXPECT_GT(without.time.compute_s, with.time.compute_s);
    } else {
      EXPECT_EQ(without.time.compute_s, with.time.compute_s);
    }
  }
}

// FlashAttention keeps the scores on chip: no 5 a s / h term in the activations (selective
// recomputation saves nothing more), its backward recomputes the scores (attention's two products
// count 3.5 passes, not 3), and the causal half it skips makes it faster than the unfused kernels.
TEST(PredictTrainTest, FlashAttentionKeepsTheScoresOnChip) {
  const ModelSpec m = GptModel(96, 12288, 96);
  Layout l = Megatron(8, 8, 1, 1);
  auto predict = [&](Attention a, Recompute r) {
    l.attention = a;
    l.recompute = r;
    return PredictTrain(m, l, A100());
  };
  const double s = 2048, h = 12288, L = 96;
  const TrainPrediction flash = predict(Attention::kFlash, Recompute::kNone);
  const TrainPrediction unfused = predict(Attention::kUnfused, Recompute::kNone);
  EXPECT_NEAR(flash.memory.activations,
              predict(Attention::kUnfused, Recompute::kSelective).memory.activations, 1);
  EXPECT_NEAR(flash.memory.activations,
              predict(Attention::kFlash, Recompute::kSelective).memory.activations, 1);
  // Attention's two products: 2 x 2 s^2 h per block and sequence in the forward.
  const double attention_forward = L * 4 * s * s * h;
  EXPECT_NEAR(flash.hardware_flops - unfused.hardware_flops, 0.5 * attention_forward,
              attention_forward * 1e-9);
  EXPECT_NEAR(flash.model_flops, unfused.model_flops, unfused.model_flops * 1e-12);
  EXPECT_LT(flash.time.compute_s, unfused.time.compute_s);
  EXPECT_LT(flash.memory.activations, unfused.memory.activations);
}

TEST(CheckLayoutTest, NamesEachBrokenConstraint) {
  const ModelSpec m = GptModel(96, 12288, 96);
  auto error = [&](Layout l) { return CheckLayout(m, l, A100()).message(); };
  EXPECT_EQ(error(Megatron(1000, 8, 8, 512)),
            "TP x PP x DP x CP = 8 x 8 x 15 x 1 = 960 is not the 1000 GPUs");
  Layout l = Megatron(1024, 8, 8, 512);
  l.tp = 7, l.dp = 1024 / 56 + 1, l.gpus = 7 * 8 * l.dp;
  EXPECT_EQ(error(l), "TP (7) does not divide the 96 heads");
  EXPECT_EQ(error(Megatron(640, 8, 5, 640)), "PP x VPP (5 x 1) does not divide the 96 layers");
  EXPECT_EQ(error(Megatron(1024, 8, 8, 500)),
            "the global batch (500) is not a multiple of DP x micro-batch (16 x 1)");
  l = Megatron(1024, 8, 8, 512);
  l.ep = 2;
  EXPECT_EQ(error(l), "EP (2) must divide the 1 experts and DP (16)");
  l = Megatron(1024, 8, 8, 512);
  l.precision = Precision::kFp8;
  EXPECT_EQ(error(l), "fp8: the a100 has no FP8 tensor cores");
  l = Megatron(64, 8, 1, 64);
  l.vpp = 2;
  EXPECT_EQ(error(l),
            "interleaving (VPP 2) needs PP > 1 and micro-batches (8) a multiple of PP (1)");
  ModelSpec moe = m;
  moe.experts = 8;
  moe.top_k = 2;
  l = Megatron(1024, 8, 8, 512);
  l.sequence_parallel = false;
  EXPECT_EQ(CheckLayout(moe, l, A100()).message(), "MoE with TP (8) needs sequence parallelism");
  l.sequence_parallel = true;
  EXPECT_TRUE(CheckLayout(moe, l, A100()).ok());
}

TEST(GemmEfficiencyTest, GrowsWithTheShapeBelowTheLargeGemmShare) {
  const HardwareProfile hw = A100();
  const double small = GemmEfficiency(2048, 96, 2048, hw, Precision::kBf16);
  const double medium = GemmEfficiency(2048, 2304, 2304, hw, Precision::kBf16);
  const double large = GemmEfficiency(8192, 8192, 8192, hw, Precision::kBf16);
  EXPECT_LT(small, medium);
  EXPECT_LT(medium, large);
  EXPECT_LT(large, hw.bf16_efficiency);
  EXPECT_GT(large, 0.9 * hw.bf16_efficiency);
}

TEST(CollectiveSecondsTest, UsesNcclTestsBusFactors) {
  EXPECT_EQ(CollectiveSeconds("allreduce", 1e9, 1, 100, 0), 0);
  EXPECT_NEAR(CollectiveSeconds("allreduce", 1e9, 8, 100, 0), 2 * 7.0 / 8 * 1e9 / 100e9, 1e-15);
  EXPECT_NEAR(CollectiveSeconds("allgather", 1e9, 8, 100, 1e-5), 7.0 / 8 * 0.01 + 1e-5, 1e-15);
}

TEST(ParseTest, NamesTheChoices) {
  EXPECT_EQ(*ParseRecompute("selective"), Recompute::kSelective);
  EXPECT_EQ(ParseRecompute("some").status().message(),
            "--recompute: expected none, selective or full, got 'some'");
  EXPECT_EQ(*ParsePrecision("fp8"), Precision::kFp8);
  EXPECT_FALSE(ParsePrecision("fp4").ok());
}

TEST(PredictMixedTest, TheSlowerTypeSetsThePaceOfAnEvenSplit) {
  const ModelSpec m = GptModel(96, 12288, 96);
  const Layout l = Megatron(1024, 8, 8, 512);
  const HardwareProfile fast = *DatasheetProfile("h100");
  const HardwareProfile slow = A100();
  const TrainPrediction all_slow = PredictTrain(m, l, slow);
  const TrainPrediction even = PredictMixed(m, l, {fast, 4, 12}, {slow, 4, 12});
  EXPECT_NEAR(even.time.compute_s, all_slow.time.compute_s, 1e-9 * all_slow.time.compute_s);
  EXPECT_LT(even.step_time_s, all_slow.step_time_s * 1.0001);
}

}  // namespace
}  // namespace vigil::plan
