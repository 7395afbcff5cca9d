#include "vigil/plan/model_spec.h"

#include <gtest/gtest.h>

namespace vigil::plan {
namespace {

// GPT-3 175B as Brown et al. (2020) give it, with MHA (kv_heads = heads).
constexpr std::string_view kGpt3 =
    "name: gpt3-175b\nlayers: 96\nhidden: 12288\nheads: 96\nkv_heads: 96\n"
    "ffn_hidden: 49152\nvocab: 51200\nseq_len: 2048\n";

TEST(ModelSpecTest, ReadsADenseModel) {
  Result<ModelSpec> m = ParseModelSpec(kGpt3, "gpt3.yaml");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->name, "gpt3-175b");
  EXPECT_EQ(m->layers, 96);
  EXPECT_EQ(m->hidden, 12288);
  EXPECT_EQ(m->ffn_hidden, 49152);
  EXPECT_EQ(m->seq_len, 2048);
  EXPECT_EQ(m->experts, 1);
  EXPECT_EQ(m->top_k, 1);
}

TEST(ModelSpecTest, ReadsJsonAndMixtureOfExperts) {
  Result<ModelSpec> m = ParseModelSpec(
      R"({"layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8, "ffn_hidden": 14336,
          "vocab": 32000, "seq_len": 4096, "experts": 8, "top_k": 2})",
      "mixtral.json");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->kv_heads, 8);
  EXPECT_EQ(m->experts, 8);
  EXPECT_EQ(m->top_k, 2);
  EXPECT_FALSE(m->gated_mlp);
}

TEST(ModelSpecTest, ReadsTheMlpForm) {
  Result<ModelSpec> m = ParseModelSpec(std::string(kGpt3) + "mlp: gated\n", "g.yaml");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_TRUE(m->gated_mlp);
  EXPECT_FALSE(ParseModelSpec(std::string(kGpt3) + "mlp: swish\n", "g.yaml").ok());
}

TEST(ModelSpecTest, ReadsWhetherTheEmbeddingIsTied) {
  Result<ModelSpec> m = ParseModelSpec(kGpt3, "g.yaml");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_TRUE(m->tied_embeddings);  // Megatron-LM's GPT default
  m = ParseModelSpec(std::string(kGpt3) + "tied_embeddings: false\n", "g.yaml");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_FALSE(m->tied_embeddings);
  const std::string error =
      ParseModelSpec(std::string(kGpt3) + "tied_embeddings: maybe\n", "g.yaml").status().message();
  EXPECT_TRUE(error.starts_with("g.yaml:9: tied_embeddings: ")) << error;
  EXPECT_NE(error.find("not one of true, false"), std::string::npos) << error;
}

// Narayanan et al. (2021), section 5.1: a GPT block holds 12h^2 + 13h parameters (weights,
// biases, two LayerNorms); with the tied V x h embedding and the final LayerNorm, GPT-3 holds
// 174.6e9 (its 175B, less the 2048 x h learned positions no model file describes).
TEST(ModelSpecTest, CountsGptAsNarayananEtAl) {
  Result<ModelSpec> m = ParseModelSpec(kGpt3, "g.yaml");
  ASSERT_TRUE(m.ok()) << m.status().message();
  const double l = 96, h = 12288, v = 51200;
  ModelParameters p = CountParameters(*m);
  EXPECT_DOUBLE_EQ(p.total, 12 * l * h * h + 13 * l * h + v * h + 2 * h);
  EXPECT_DOUBLE_EQ(p.output, 0);
  m->tied_embeddings = false;
  EXPECT_DOUBLE_EQ(CountParameters(*m).total - p.total, v * h);
  // One token multiplies every block and the output projection; the embedding is a lookup.
  EXPECT_DOUBLE_EQ(p.active, p.total - 2 * h);
}

TEST(ModelSpecTest, NamesFileLineAndFieldOfEachProblem) {
  auto error = [](std::string_view text) {
    return ParseModelSpec(text, "m.yaml").status().message();
  };
  EXPECT_EQ(error("layers: 2\n"), "m.yaml:1: hidden: missing (a positive whole number)");
  EXPECT_EQ(error(std::string(kGpt3) + "dropout: 0.1\n"),
            "m.yaml:9: dropout: unknown key (expected one of name, layers, hidden, heads, "
            "kv_heads, ffn_hidden, vocab, seq_len, experts, top_k, mlp, tied_embeddings)");
  std::string bad(kGpt3);
  bad.replace(bad.find("heads: 96"), 9, "heads: 0");
  EXPECT_EQ(error(bad), "m.yaml:4: heads: 0 is out of range (1 to 16777216)");
  bad = kGpt3;
  bad.replace(bad.find("hidden: 12288"), 13, "hidden: 1000");
  EXPECT_EQ(error(bad), "m.yaml:3: hidden: 1000 is not a multiple of heads (96)");
  bad = kGpt3;
  bad.replace(bad.find("kv_heads: 96"), 12, "kv_heads: 7");
  EXPECT_EQ(error(bad), "m.yaml:5: kv_heads: heads (96) is not a multiple of 7");
  EXPECT_EQ(error(std::string(kGpt3) + "experts: 2\ntop_k: 3\n"),
            "m.yaml:10: top_k: 3 is above experts (2)");
  EXPECT_EQ(error("[1, 2]"), "m.yaml:1: model: expected a mapping of keys to values");
  EXPECT_TRUE(error("layers: [").starts_with("m.yaml:1: not valid YAML"));
  EXPECT_EQ(error(""), "m.yaml:1: model: expected a mapping of keys to values");
}

}  // namespace
}  // namespace vigil::plan
