// End-to-end tests of `vigil plan train` and `vigil plan search` through the built binary.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "vigil/core/file.h"
#include "vigil/core/json.h"
#include "vigil/testing/temp_dir.h"
#include "vigil_process.h"

namespace vigil::testing {
namespace {

const std::string kTrainModels = std::string(VIGIL_SOURCE_DIR) + "/eval/data/plan/models/";

std::vector<std::string> Train(const std::string& model, std::vector<std::string> layout) {
  std::vector<std::string> args = {"plan", "train", "--model", kTrainModels + model};
  args.insert(args.end(), layout.begin(), layout.end());
  return args;
}

TEST(PlanCliTest, TrainPrintsTheFieldsScriptsRead) {
  const ProcessResult r = RunVigil(Train(
      "gpt3-175b.yaml",
      {"--gpus",      "1024",      "--gpu",  "h100", "--tp",          "8", "--pp",           "8",
       "--vpp",       "2",         "--dp",   "16",   "--micro-batch", "1", "--global-batch", "1024",
       "--recompute", "selective", "--zero", "1",    "--json"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = JsonOf(r);
  for (const char* key :
       {"step_time_s", "tokens_per_s", "tflops_per_gpu", "mfu", "memory_gib_per_gpu"}) {
    ASSERT_TRUE(j.contains(key)) << key;
    EXPECT_GT(j[key].get<double>(), 0) << key;
  }
  EXPECT_NEAR(j["tokens_per_s"].get<double>() * j["step_time_s"].get<double>(), 1024 * 2048, 1);
  // The compute term, split into the matrix products and the memory-bound kernels.
  const double compute = j["time_s"]["compute"].get<double>();
  const double gemm = j["compute_split_s"]["gemm"].get<double>();
  const double memory_bound = j["compute_split_s"]["memory_bound"].get<double>();
  EXPECT_GT(gemm, 0);
  EXPECT_GT(memory_bound, 0);
  EXPECT_NEAR(gemm + memory_bound, compute, 1e-9 * compute);
  EXPECT_GT(j["mfu"].get<double>(), 0.2);
  EXPECT_LT(j["mfu"].get<double>(), 0.8);
  EXPECT_TRUE(j["fits"].get<bool>());
  EXPECT_NEAR(j["parameters"].get<double>() / 1e9, 175, 2);
  EXPECT_EQ(j["layout"]["vpp"], 2);
  EXPECT_EQ(j["profile"]["source"], "datasheet");

  const ProcessResult text = RunVigil(
      Train("gpt3-175b.yaml", {"--gpus", "1024", "--tp", "8", "--pp", "8", "--dp", "16",
                               "--micro-batch", "1", "--global-batch", "1024", "--zero", "1"}));
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("pipeline bubble"), std::string::npos) << text.out;
}

// --attention unfused keeps attention's scores in HBM, as Megatron-LM did in 2021: more memory
// (GPT-3 without recomputation no longer fits: exit 1) and a slower step than FlashAttention, the
// default; anything else exits 2.
TEST(PlanCliTest, AttentionKernelChoice) {
  auto train = [](std::string attention) {
    return RunVigil(Train("gpt3-175b.yaml", {"--gpus", "1024", "--tp", "8", "--pp", "8", "--dp",
                                             "16", "--micro-batch", "1", "--global-batch", "1024",
                                             "--attention", attention, "--json"}));
  };
  const ProcessResult flash = train("flash");
  const ProcessResult unfused = train("unfused");
  ASSERT_EQ(flash.exit_code, 0) << flash.err;
  ASSERT_EQ(unfused.exit_code, 1) << unfused.err;
  const Json f = JsonOf(flash), u = JsonOf(unfused);
  EXPECT_TRUE(f["fits"].get<bool>());
  EXPECT_FALSE(u["fits"].get<bool>());
  EXPECT_EQ(f["layout"]["attention"], "flash");
  EXPECT_EQ(u["layout"]["attention"], "unfused");
  EXPECT_LT(f["memory_gib_per_gpu"].get<double>(), u["memory_gib_per_gpu"].get<double>());
  EXPECT_LT(f["step_time_s"].get<double>(), u["step_time_s"].get<double>());
  const ProcessResult bad = train("fused");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--attention"), std::string::npos) << bad.err;
}

// --no-sequence-parallel: Megatron-LM before 2022; each TP rank keeps the norms whole, so more
// memory and a slower step, and the JSON says so.
TEST(PlanCliTest, SequenceParallelismChoice) {
  auto train = [](std::vector<std::string> extra) {
    std::vector<std::string> layout = {
        "--gpus",        "1024", "--tp",           "8",    "--pp",        "8",    "--dp",  "16",
        "--micro-batch", "1",    "--global-batch", "1024", "--recompute", "full", "--json"};
    layout.insert(layout.end(), extra.begin(), extra.end());
    return RunVigil(Train("gpt3-175b.yaml", layout));
  };
  const ProcessResult on = train({}), off = train({"--no-sequence-parallel"});
  ASSERT_EQ(on.exit_code, 0) << on.err;
  ASSERT_EQ(off.exit_code, 0) << off.err;
  const Json a = JsonOf(on), b = JsonOf(off);
  EXPECT_EQ(a["layout"]["sequence_parallel"], true);
  EXPECT_EQ(b["layout"]["sequence_parallel"], false);
  EXPECT_GT(b["memory_gib_per_gpu"].get<double>(), a["memory_gib_per_gpu"].get<double>());
  EXPECT_GT(b["step_time_s"].get<double>(), a["step_time_s"].get<double>());
  const ProcessResult text = RunVigil(Train(
      "gpt3-175b.yaml", {"--gpus", "1024", "--tp", "8", "--pp", "8", "--dp", "16", "--micro-batch",
                         "1", "--global-batch", "1024", "--no-sequence-parallel"}));
  EXPECT_NE(text.out.find("no sequence parallelism"), std::string::npos) << text.out;
  // plan search prices every layout without it too.
  const ProcessResult search =
      RunVigil({"plan", "search", "--model", kTrainModels + "gpt3-175b.yaml", "--gpus", "1024",
                "--global-batch", "1024", "--no-sequence-parallel", "--top", "3", "--json"});
  ASSERT_EQ(search.exit_code, 0) << search.err;
  const Json found = JsonOf(search);  // kept: a range over a temporary's member outlives it
  for (const Json& best : found.at("best")) {
    EXPECT_EQ(best["layout"]["sequence_parallel"], false);
  }
}

TEST(PlanCliTest, TrainWithMeasuredHardware) {
  const ProcessResult r =
      RunVigil(Train("gpt3-175b.yaml",
                     {"--gpus", "1024", "--gpu", "a100", "--hardware",
                      std::string(VIGIL_SOURCE_DIR) + "/tests/data/superbench_test_results.jsonl",
                      "--tp", "8", "--pp", "8", "--dp", "16", "--micro-batch", "1",
                      "--global-batch", "1024", "--recompute", "full", "--json"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = JsonOf(r);
  EXPECT_TRUE(j["profile"]["source"].get<std::string>().starts_with("measured: "));
  EXPECT_LT(j["profile"]["bf16_tflops"].get<double>(), 312);  // measured, below the peak
}

TEST(PlanCliTest, HardwareMayBeADirectory) {
  TempDir dir;
  Result<std::string> fleet =
      ReadFile(std::string(VIGIL_SOURCE_DIR) + "/tests/data/superbench_test_results.jsonl");
  ASSERT_TRUE(fleet.ok());
  dir.Write("fleet/sb.jsonl", *fleet);
  dir.Write("fleet/README", "not results");
  dir.Write("empty/README", "not results");
  const std::vector<std::string> layout = {
      "--gpus",         "1024", "--gpu",       "a100", "--tp",          "8",
      "--pp",           "8",    "--dp",        "16",   "--micro-batch", "1",
      "--global-batch", "1024", "--recompute", "full", "--json"};
  auto with = [&](const std::string& hardware) {
    std::vector<std::string> args = layout;
    args.insert(args.end(), {"--hardware", hardware});
    return RunVigil(Train("gpt3-175b.yaml", args));
  };
  const ProcessResult from_dir = with(dir.File("fleet"));
  const ProcessResult from_file = with(dir.File("fleet/sb.jsonl"));
  ASSERT_EQ(from_dir.exit_code, 0) << from_dir.err;
  ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
  EXPECT_EQ(JsonOf(from_dir)["profile"]["bf16_tflops"],
            JsonOf(from_file)["profile"]["bf16_tflops"]);
  const ProcessResult empty = with(dir.File("empty"));
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_EQ(empty.err, "vigil: " + dir.File("empty") +
                           ": a directory with no *.json or *.jsonl results file\n");
}

TEST(PlanCliTest, AnImpossibleLayoutExits2NamingTheConstraint) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--gpus", "1024", "--tp", "7", "--pp", "8", "--dp", "16"},
       "TP x PP x DP x CP = 7 x 8 x 16 x 1 = 896 is not the 1024 GPUs"},
      {{"--gpus", "1120", "--tp", "7", "--pp", "8", "--dp", "20"},
       "TP (7) does not divide the 96 heads"},
      {{"--gpus", "1280", "--tp", "8", "--pp", "10", "--dp", "16"},
       "PP x VPP (10 x 1) does not divide the 96 layers"},
  };
  for (const auto& [layout, message] : cases) {
    std::vector<std::string> flags = layout;
    flags.insert(flags.end(), {"--micro-batch", "1", "--global-batch", "1024"});
    const ProcessResult r = RunVigil(Train("gpt3-175b.yaml", flags));
    EXPECT_EQ(r.exit_code, 2) << message;
    EXPECT_EQ(r.err, "vigil: impossible layout: " + message + "\n");
    EXPECT_EQ(r.out, "");
  }
}

TEST(PlanCliTest, ALayoutThatDoesNotFitExits1) {
  const ProcessResult r =
      RunVigil(Train("gpt3-175b.yaml", {"--gpus", "8", "--tp", "8", "--pp", "1", "--dp", "1",
                                        "--micro-batch", "1", "--global-batch", "8", "--json"}));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_FALSE(JsonOf(r)["fits"].get<bool>());
}

TEST(PlanCliTest, AMalformedModelFileNamesFileLineAndField) {
  TempDir dir;
  dir.Write("bad.yaml", "layers: 96\nhidden: 12288\nheads: many\n");
  const std::string path = dir.path() + "/bad.yaml";
  const ProcessResult r =
      RunVigil({"plan", "train", "--model", path, "--gpus", "8", "--tp", "8", "--pp", "1", "--dp",
                "1", "--micro-batch", "1", "--global-batch", "8"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.err.starts_with("vigil: " + path + ":3: heads: ")) << r.err;
}

TEST(PlanCliTest, SearchRanksLayoutsAndPlacesStagesBySpeed) {
  const ProcessResult r =
      RunVigil({"plan", "search", "--model", kTrainModels + "gpt3-175b.yaml", "--gpus", "256",
                "--gpu", "h100", "--global-batch", "512", "--top", "3", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = JsonOf(r);
  ASSERT_EQ(j["best"].size(), 3u);
  EXPECT_GT(j["layouts"].get<int64_t>(), j["fitting"].get<int64_t>());
  EXPECT_GE(j["best"][0]["tokens_per_s"].get<double>(), j["best"][1]["tokens_per_s"].get<double>());

  const ProcessResult mixed =
      RunVigil({"plan", "search", "--model", kTrainModels + "gpt3-175b.yaml", "--gpus", "256",
                "--gpu", "h100", "--second-gpu", "h100", "--second-gpus", "64", "--second-speed",
                "0.5", "--global-batch", "512", "--top", "1", "--json"});
  ASSERT_EQ(mixed.exit_code, 0) << mixed.err;
  const Json placement = JsonOf(mixed)["best"][0]["placement"];
  EXPECT_GT(placement["first"]["layers_per_stage"].get<int>(),
            placement["second"]["layers_per_stage"].get<int>());
  EXPECT_GT(placement["speedup_over_even"].get<double>(), 1);
}

TEST(PlanCliTest, SearchSaysWhenTheModelFitsNowhere) {
  const ProcessResult r = RunVigil({"plan", "search", "--model", kTrainModels + "gpt-1t.yaml",
                                    "--gpus", "8", "--gpu", "a100", "--global-batch", "8"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.err.starts_with("vigil: the model fits nowhere")) << r.err;
}

}  // namespace
}  // namespace vigil::testing
