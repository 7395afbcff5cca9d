// End-to-end tests of `vigil plan infer` and `vigil plan reconfigure` through the built binary:
// the JSON fields scripts read, file:line:field errors for malformed files, and exit 2 naming
// the constraint an impossible request breaks.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "vigil/core/json.h"
#include "vigil/testing/temp_dir.h"
#include "vigil_process.h"

namespace vigil::testing {
namespace {

const std::string kInferModels = std::string(VIGIL_SOURCE_DIR) + "/eval/data/plan/";

TEST(PlanInferCliTest, PrintsTheRooflineAndTheFit) {
  TempDir dir;
  // Measured latencies of a server with a_p = 30 ms + 0.1 ms per prompt token and b = 20 ms.
  std::string csv = "prompt_tokens,output_tokens,latency_s\n";
  for (int p : {256, 1024, 4096}) {
    for (int o : {16, 128, 512})
      csv += fmt::format("{},{},{}\n", p, o, 0.03 + 1e-4 * p + 0.02 * (o - 1));
  }
  dir.Write("lat.csv", csv);
  const ProcessResult r =
      RunVigil({"plan", "infer", "--model", kInferModels + "llama-3-70b.yaml", "--gpus", "4",
                "--gpu", "h100", "--batch", "8", "--prompt", "1024", "--output", "256",
                "--precision", "fp8", "--latencies", dir.File("lat.csv"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = JsonOf(r);
  EXPECT_EQ(j["model"], "llama-3-70b");
  for (const char* key : {"prefill_s", "decode_s_per_token", "latency_s", "output_tokens_per_s",
                          "weights_gb_per_gpu", "kv_cache_gb_per_gpu", "memory_gb_per_gpu"}) {
    ASSERT_TRUE(j.contains(key)) << key;
    EXPECT_GT(j[key].get<double>(), 0) << key;
  }
  EXPECT_EQ(j["decode"]["bound"], "memory");
  EXPECT_NEAR(j["weights_gb_per_gpu"].get<double>(), 70.6 / 4, 0.3);
  EXPECT_NEAR(j["fit"]["per_token_s"].get<double>(), 0.02, 1e-9);
  EXPECT_NEAR(j["fit"]["prefill_s"].get<double>(), 0.03 + 0.1024, 1e-9);
  const ProcessResult table =
      RunVigil({"plan", "infer", "--model", kInferModels + "mixtral-8x7b.yaml", "--gpus", "2"});
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("decode step (b)"), std::string::npos) << table.out;
}

// --hardware replaces the datasheet's figures with the measured ones: prefill's compute time
// scales with the GEMM throughput the profile holds.
TEST(PlanInferCliTest, PricesWithMeasuredHardware) {
  auto infer = [](std::vector<std::string> extra) {
    std::vector<std::string> args = {
        "plan",    "infer", "--model", kInferModels + "llama-3-70b.yaml",
        "--gpus",  "4",     "--gpu",   "a100",
        "--batch", "4",     "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const ProcessResult r = RunVigil(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return JsonOf(r);
  };
  const Json sheet = infer({});
  const Json measured = infer(
      {"--hardware", std::string(VIGIL_SOURCE_DIR) + "/tests/data/superbench_test_results.jsonl"});
  EXPECT_EQ(sheet["profile"]["source"], "datasheet");
  EXPECT_TRUE(measured["profile"]["source"].get<std::string>().starts_with("measured: "));
  const auto achieved = [](const Json& p) {
    return p["bf16_tflops"].get<double>() * p["bf16_efficiency"].get<double>();
  };
  EXPECT_NEAR(measured["prefill"]["compute_s"].get<double>() * achieved(measured["profile"]),
              sheet["prefill"]["compute_s"].get<double>() * achieved(sheet["profile"]), 1e-9);
  EXPECT_EQ(RunVigil({"plan", "infer", "--model", kInferModels + "llama-3-70b.yaml", "--hardware",
                      "/nonexistent.json"})
                .exit_code,
            2);
}

TEST(PlanInferCliTest, BadInputExitsTwoNamingWhere) {
  TempDir dir;
  dir.Write("m.yaml", "layers: 2\nhidden: 64\nheads: 4\nkv_heads: 4\nffn_hidden: x\n");
  ProcessResult r = RunVigil({"plan", "infer", "--model", dir.File("m.yaml")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(dir.File("m.yaml") + ":5: ffn_hidden:"), std::string::npos) << r.err;
  dir.Write("lat.csv", "prompt_tokens,output_tokens,latency_s\n10,10,1\n10,ten,1\n");
  r = RunVigil({"plan", "infer", "--model", kInferModels + "llama-3-8b.yaml", "--latencies",
                dir.File("lat.csv")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(dir.File("lat.csv") + ":3: output_tokens:"), std::string::npos) << r.err;
  r = RunVigil({"plan", "infer", "--model", kInferModels + "llama-3-70b.yaml", "--gpus", "3"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--gpus 3 does not divide the model's heads (64)"), std::string::npos)
      << r.err;
  r = RunVigil({"plan", "infer", "--model", kInferModels + "llama-3-70b.yaml", "--gpus", "1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("does not fit"), std::string::npos) << r.err;
}

constexpr std::string_view kInferJobs = R"(jobs:
  - name: pretrain
    weight: 1
    gpus: 64
    hit: true
    transition: 10m
    throughput:
      - {gpus: 48, tflops_per_gpu: 410}
      - {gpus: 56, tflops_per_gpu: 405}
      - {gpus: 64, tflops_per_gpu: 400}
  - name: finetune
    gpus: 8
    transition: 90s
    throughput: [{gpus: 8, tflops_per_gpu: 450}]
)";

TEST(PlanReconfigureCliTest, PlansBesideTheNaiveRestart) {
  TempDir dir;
  dir.Write("jobs.yaml", std::string(kInferJobs));
  const ProcessResult r = RunVigil({"plan", "reconfigure", "--jobs", dir.File("jobs.yaml"),
                                    "--gpus", "64", "--mttf", "6h", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = JsonOf(r);
  EXPECT_EQ(j["horizon_s"].get<double>(), 6 * 3600);
  EXPECT_EQ(j["plan"]["jobs"][0]["gpus"], 56);
  EXPECT_EQ(j["plan"]["jobs"][1]["gpus"], 8);
  EXPECT_EQ(j["naive"]["jobs"][0]["gpus"], 0);
  EXPECT_GT(j["gain"].get<double>(), 1);
  // The horizon from the MTTF model of 8 nodes at 6.5 failures per 1000 node-days: 19.2 days.
  const ProcessResult model =
      RunVigil({"plan", "reconfigure", "--jobs", dir.File("jobs.yaml"), "--gpus", "64"});
  ASSERT_EQ(model.exit_code, 0) << model.err;
  EXPECT_NE(model.out.find("MTTF of 64 GPUs"), std::string::npos) << model.out;
}

TEST(PlanReconfigureCliTest, BadInputExitsTwoNamingWhere) {
  TempDir dir;
  std::string bad(kInferJobs);
  bad.replace(bad.find("gpus: 8\n"), 8, "gpus: 16\n");
  dir.Write("jobs.yaml", bad);
  const ProcessResult r =
      RunVigil({"plan", "reconfigure", "--jobs", dir.File("jobs.yaml"), "--gpus", "64"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(dir.File("jobs.yaml") +
                       ":12: jobs[1].gpus: 16 is not one of the job's throughput sizes"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace vigil::testing
