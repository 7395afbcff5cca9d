#include "vigil/plan/inference.h"

#include <gtest/gtest.h>

#include "vigil/plan/layout_fixture.h"
#include "vigil/plan/train.h"

namespace vigil::plan {
namespace {

// Llama 2 70B (Touvron et al., 2023): 80 layers, 8,192 wide, 64 heads sharing 8 KV heads, a
// SwiGLU MLP of 28,672, 32,000 tokens; published as 69B parameters.
ModelSpec Dense(int64_t layers, int64_t hidden, int64_t heads, int64_t kv_heads, int64_t ffn,
                int64_t seq_len) {
  ModelSpec m;
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.ffn_hidden = ffn;
  m.vocab = 32000;
  m.seq_len = seq_len;
  m.gated_mlp = true;
  m.tied_embeddings = false;  // Llama's and Mixtral's config.json: tie_word_embeddings false
  return m;
}

ModelSpec Llama70b() { return Dense(80, 8192, 64, 8, 28672, 4096); }

// Mixtral 8x7B (Jiang et al., 2024): 46.7B parameters, 12.9B active per token.
ModelSpec Mixtral() {
  ModelSpec m = Dense(32, 4096, 32, 8, 14336, 32768);
  m.experts = 8;
  m.top_k = 2;
  return m;
}

InferRequest Req(int64_t gpus, int64_t batch, int64_t prompt, int64_t output, bool fp8) {
  InferRequest r;
  r.gpus = gpus;
  r.batch = batch;
  r.prompt = prompt;
  r.output = output;
  r.fp8 = fp8;
  return r;
}

TEST(InferenceTest, CountsPublishedParameters) {
  Result<InferEstimate> e = EstimateInference(Llama70b(), H100(), Req(4, 1, 1, 1, false));
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_NEAR(e->params / 1e9, 69.0, 0.5);
  EXPECT_NEAR(e->weights_gb_per_gpu, e->params * 2 / 4 / 1e9, 1e-9);
  Result<InferEstimate> m = EstimateInference(Mixtral(), H100(), Req(2, 1, 1, 1, false));
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_NEAR(m->params / 1e9, 46.7, 0.3);
  EXPECT_NEAR(m->active_params / 1e9, 12.9, 0.3);  // the embedding is a lookup
}

// One model file, one count: plan infer's weights and plan train's parameters are the same
// CountParameters, tied or not, GPT or Llama.
TEST(InferenceTest, CountsTheParametersPlanTrainCounts) {
  ModelSpec gpt = GptModel(24, 2048, 16);
  for (ModelSpec m : {Llama70b(), Mixtral(), gpt}) {
    for (bool tied : {true, false}) {
      m.tied_embeddings = tied;
      Result<InferEstimate> e = EstimateInference(m, H100(), Req(8, 1, 1, 1, false));
      ASSERT_TRUE(e.ok()) << e.status().message();
      Layout l;
      l.gpus = l.tp = 8;
      const TrainPrediction t = PredictTrain(m, l, H100());
      EXPECT_DOUBLE_EQ(e->params, t.parameters);
      EXPECT_DOUBLE_EQ(e->params, CountParameters(m).total);
    }
  }
}

TEST(InferenceTest, DecodeReadsTheWeightsAndPrefillComputes) {
  Result<InferEstimate> e = EstimateInference(Llama70b(), H100(), Req(4, 1, 2048, 128, false));
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_EQ(e->decode.bound, "memory");
  EXPECT_EQ(e->prefill.bound, "compute");
  // One step reads a quarter of the weights at 80% of 3.35 TB/s, plus the cache.
  const double weights_s = e->weights_gb_per_gpu * 1e9 / (3350e9 * 0.8);
  EXPECT_GT(e->decode.memory_s, weights_s);
  EXPECT_LT(e->decode.memory_s, weights_s * 1.05);
  EXPECT_GT(e->decode.all_reduce_s, 0);
  EXPECT_DOUBLE_EQ(e->latency_s, e->prefill.seconds + 127 * e->decode.seconds);
  EXPECT_DOUBLE_EQ(e->output_tokens_per_s, 128 / e->latency_s);
}

// A measured figure is what Vigil's benchmark reached (its efficiency 1): inference's shares
// apply to it as they apply to the datasheet's achieved share, so a profile that measured exactly
// the datasheet's achieved figures predicts what the datasheet does.
TEST(InferenceTest, AMeasuredProfileTakesTheSharesOfWhatWasMeasured) {
  const HardwareProfile sheet = H100();
  HardwareProfile measured = sheet;
  measured.bf16_tflops = sheet.bf16_tflops * sheet.bf16_efficiency;
  measured.hbm_gbps = sheet.hbm_gbps * sheet.hbm_efficiency;
  measured.intra_node_gbps = sheet.intra_node_gbps * sheet.nvlink_efficiency;
  measured.bf16_efficiency = measured.hbm_efficiency = measured.nvlink_efficiency = 1;
  const InferRequest r = Req(4, 2, 1024, 64, false);
  const InferEstimate a = *EstimateInference(Llama70b(), sheet, r);
  const InferEstimate b = *EstimateInference(Llama70b(), measured, r);
  EXPECT_NEAR(b.prefill.compute_s, a.prefill.compute_s, a.prefill.compute_s * 1e-12);
  EXPECT_NEAR(b.decode.memory_s, a.decode.memory_s, a.decode.memory_s * 1e-12);
  EXPECT_NEAR(b.decode.all_reduce_s, a.decode.all_reduce_s, a.decode.all_reduce_s * 1e-12);
  // Prefill's GEMMs at 0.6 of the datasheet's peak, decode's reads at 0.8 of HBM's.
  const double prefill_flops = a.prefill.compute_s * sheet.bf16_tflops * 1e12 * 0.6;
  measured.bf16_tflops = 700;
  const InferEstimate c = *EstimateInference(Llama70b(), measured, r);
  EXPECT_NEAR(c.prefill.compute_s, prefill_flops / (700e12 * 0.6 / 0.85), 1e-12);
}

TEST(InferenceTest, Fp8HalvesTheBytesAndOneGpuHasNoAllReduce) {
  const InferRequest bf16 = Req(2, 1, 128, 128, false);
  InferRequest fp8 = bf16;
  fp8.fp8 = true;
  const InferEstimate a = *EstimateInference(Llama70b(), H100(), bf16);
  const InferEstimate b = *EstimateInference(Llama70b(), H100(), fp8);
  EXPECT_NEAR(b.weights_gb_per_gpu, a.weights_gb_per_gpu / 2, 1e-9);
  EXPECT_NEAR(b.decode.memory_s, a.decode.memory_s / 2, a.decode.memory_s * 1e-9);
  ModelSpec small = Llama70b();
  small.layers = 8;
  const InferEstimate one = *EstimateInference(small, H100(), Req(1, 1, 1, 1, false));
  EXPECT_EQ(one.decode.all_reduce_s, 0);
}

TEST(InferenceTest, MoeDecodeReadsTheExpertsItsBatchIsRoutedTo) {
  const InferEstimate one = *EstimateInference(Mixtral(), H100(), Req(2, 1, 1, 1, false));
  EXPECT_DOUBLE_EQ(one.experts_read, 2);
  const InferEstimate many = *EstimateInference(Mixtral(), H100(), Req(2, 64, 1, 1, false));
  EXPECT_NEAR(many.experts_read, 8, 1e-6);
  EXPECT_GT(many.decode.memory_s, one.decode.memory_s * 2);
}

TEST(InferenceTest, GroupedKvHeadsShrinkTheCache) {
  ModelSpec mha = Llama70b();
  mha.kv_heads = 64;
  const InferRequest r = Req(8, 8, 2000, 1000, false);
  const InferEstimate gqa = *EstimateInference(Llama70b(), H100(), r);
  const InferEstimate full = *EstimateInference(mha, H100(), r);
  EXPECT_NEAR(full.kv_cache_gb_per_gpu / gqa.kv_cache_gb_per_gpu, 8, 1e-9);
  // 16 GPUs share 8 KV heads: each still holds one, so the cache does not halve again.
  ModelSpec wide = Llama70b();
  const InferEstimate sixteen = *EstimateInference(wide, H100(), Req(16, 8, 2000, 1000, false));
  EXPECT_DOUBLE_EQ(sixteen.kv_cache_gb_per_gpu, gqa.kv_cache_gb_per_gpu);
}

TEST(InferenceTest, NamesTheConstraintAnImpossibleRequestBreaks) {
  auto error = [](const InferRequest& r, std::string_view gpu = "h100") {
    return EstimateInference(Llama70b(), *DatasheetProfile(gpu), r).status().message();
  };
  EXPECT_EQ(error(Req(3, 1, 1, 1, false)),
            "--gpus 3 does not divide the model's heads (64): tensor parallelism splits the "
            "attention heads over the GPUs");
  EXPECT_EQ(error(Req(4, 1, 1, 1, true), "a100"),
            "--precision fp8: the a100 has no FP8 tensor cores");
  EXPECT_EQ(error(Req(4, 1, 4000, 100, false)),
            "--prompt 4000 + --output 100 is above the model's seq_len (4096)");
  EXPECT_NE(error(Req(1, 1, 1, 1, false)).find("does not fit: 138.0 GB per GPU"), std::string::npos)
      << error(Req(1, 1, 1, 1, false));
  EXPECT_FALSE(EstimateInference(Llama70b(), H100(), Req(4, 0, 1, 1, false)).ok());
}

}  // namespace
}  // namespace vigil::plan
