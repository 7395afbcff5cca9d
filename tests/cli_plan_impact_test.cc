// End-to-end tests of `vigil plan impact` through the built binary.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "vigil/core/json.h"
#include "vigil/testing/temp_dir.h"
#include "vigil_process.h"

namespace vigil::testing {
namespace {

const std::string kImpactModels = std::string(VIGIL_SOURCE_DIR) + "/eval/data/plan/models/";
const std::string kSuperBench =
    std::string(VIGIL_SOURCE_DIR) + "/tests/data/superbench_test_results.jsonl";

// GPT-3 175B on 1,024 GPUs as `plan train` takes it, and `more` flags.
std::vector<std::string> Impact(std::vector<std::string> more) {
  std::vector<std::string> args = {
      "plan",           "impact", "--model",       kImpactModels + "gpt3-175b.yaml",
      "--gpus",         "1024",   "--tp",          "8",
      "--pp",           "8",      "--dp",          "16",
      "--zero",         "1",      "--micro-batch", "1",
      "--global-batch", "1024"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST(PlanImpactCliTest, AWhatIfGivesTheSlowdownAndTheBreakEven) {
  const ProcessResult r = RunVigil(Impact({"--slow", "gemm=0.88,nic=0.5", "--json"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;  // a horizon without --remaining, not a decision
  const Json j = JsonOf(r);
  EXPECT_GT(j["slowdown"].get<double>(), 0.01);
  EXPECT_LT(j["slowdown"].get<double>(), 0.5);
  EXPECT_NEAR(j["degraded_step_time_s"].get<double>() / j["healthy_step_time_s"].get<double>(),
              1 + j["slowdown"].get<double>(), 1e-9);
  ASSERT_EQ(j["components"].size(), 3u);  // bf16, fp8, nic
  EXPECT_EQ(j["components"][0]["component"], "bf16");
  EXPECT_EQ(j["components"][0]["term"], "compute");
  EXPECT_EQ(j["components"][2]["component"], "nic");
  EXPECT_EQ(j["decision"], "drain_if_longer");
  const double hours = j["break_even_h"].get<double>();
  // A spare node: 10 min restart + half of a 1 h interval, over the slowdown.
  EXPECT_NEAR(hours, (600 + 1800) / 3600.0 / j["slowdown"].get<double>(), 1e-9);
  // 1,016 GPUs are 8 x 127: no layout divides the batch of 1,024 among them.
  EXPECT_FALSE(j["drain"]["shrink"]["possible"].get<bool>());
  EXPECT_TRUE(j["drain"]["shrink"]["why_not"].get<std::string>().starts_with("no layout on 1016"));

  const ProcessResult soon = RunVigil(Impact(
      {"--slow", "gemm=0.88,nic=0.5", "--remaining", fmt::format("{}h", hours / 2), "--json"}));
  EXPECT_EQ(soon.exit_code, 0) << soon.err;
  EXPECT_EQ(JsonOf(soon)["decision"], "keep_to_end");
  const ProcessResult later = RunVigil(Impact(
      {"--slow", "gemm=0.88,nic=0.5", "--remaining", fmt::format("{}h", hours * 2), "--json"}));
  EXPECT_EQ(later.exit_code, 1) << later.err;
  EXPECT_EQ(JsonOf(later)["decision"], "drain");

  const ProcessResult text = RunVigil(Impact({"--slow", "nic=0.5", "--no-spare"}));
  EXPECT_EQ(text.exit_code, 0) << text.err;  // the job cannot shrink by a node
  EXPECT_NE(text.out.find("Decision: keep the node"), std::string::npos) << text.out;
}

// A node whose GPU 3 reaches half the BF16 GEMM throughput of the fleet (SuperBench's A100
// results): the node is as slow as its slowest GPU.
TEST(PlanImpactCliTest, ANodesResultsAgainstTheFleet) {
  TempDir dir;
  std::string row = R"({"node": "slow-1")";
  for (int gpu = 0; gpu < 8; ++gpu) {
    row += fmt::format(R"(, "gemm-flops/BF16_TC:{}": {})", gpu, gpu == 3 ? 132500 : 265000);
  }
  dir.Write("node.jsonl", row + "}\n");
  const ProcessResult r = RunVigil(Impact({"--gpu", "a100", "--hardware", kSuperBench, "--node",
                                           dir.path() + "/node.jsonl", "--json"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = JsonOf(r);
  ASSERT_EQ(j["components"].size(), 1u);
  EXPECT_EQ(j["components"][0]["component"], "bf16");
  EXPECT_NEAR(j["components"][0]["ratio"].get<double>(), 0.5, 0.01);
  EXPECT_EQ(j["node"].get<std::string>().substr(0, 8), "slow-1 (");

  // The same node's host copies in a second file: one node, both files' figures.
  std::string copies = R"({"node": "slow-1")";
  for (int gpu = 0; gpu < 8; ++gpu) copies += fmt::format(R"(, "mem-bw/H2D_Mem_BW:{}": 20)", gpu);
  dir.Write("copies.jsonl", copies + "}\n");
  const ProcessResult both = RunVigil(
      Impact({"--gpu", "a100", "--hardware", kSuperBench, "--node", dir.path() + "/node.jsonl",
              "--node", dir.path() + "/copies.jsonl", "--json"}));
  ASSERT_EQ(both.exit_code, 0) << both.err;
  const Json merged = JsonOf(both);
  std::set<std::string> components;
  for (const Json& c : merged["components"]) components.insert(c["component"].get<std::string>());
  EXPECT_EQ(components, (std::set<std::string>{"bf16", "host"}));

  const ProcessResult many =
      RunVigil(Impact({"--gpu", "a100", "--hardware", kSuperBench, "--node", kSuperBench}));
  EXPECT_EQ(many.exit_code, 2);
  EXPECT_EQ(many.err,
            "vigil: " + kSuperBench +
                ": nodes 'sb-validation-01' and 'sb-validation-02'; name the degraded one with "
                "--node-name\n");
  const ProcessResult one =
      RunVigil(Impact({"--gpu", "a100", "--hardware", kSuperBench, "--node", kSuperBench,
                       "--node-name", "sb-validation-01", "--json"}));
  // The node is one of the fleet's, all of them one run's figures: like the fleet in every figure.
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const Json same = JsonOf(one);
  for (const Json& c : same["components"]) EXPECT_NEAR(c["ratio"].get<double>(), 1, 1e-3) << c;
  EXPECT_NEAR(same["slowdown"].get<double>(), 0, 1e-3);
}

TEST(PlanImpactCliTest, TheNodeMayBeADirectory) {
  TempDir dir;
  std::string gemm = R"({"node": "slow-1")";
  std::string copies = R"({"node": "slow-1")";
  for (int gpu = 0; gpu < 8; ++gpu) {
    gemm += fmt::format(R"(, "gemm-flops/BF16_TC:{}": {})", gpu, gpu == 3 ? 132500 : 265000);
    copies += fmt::format(R"(, "mem-bw/H2D_Mem_BW:{}": 20)", gpu);
  }
  dir.Write("node/a-gemm.jsonl", gemm + "}\n");
  dir.Write("node/b-copies.json", copies + "}\n");
  const ProcessResult r = RunVigil(
      Impact({"--gpu", "a100", "--hardware", kSuperBench, "--node", dir.File("node"), "--json"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = JsonOf(r);
  std::set<std::string> components;
  for (const Json& c : j["components"]) components.insert(c["component"].get<std::string>());
  EXPECT_EQ(components, (std::set<std::string>{"bf16", "host"}));
}

// The layout the job would shrink to keeps the job's sequence parallelism (a framework without
// it has none after the drain either).
TEST(PlanImpactCliTest, TheShrunkLayoutKeepsTheJobsSequenceParallelism) {
  for (const bool sp : {true, false}) {
    std::vector<std::string> args = {
        "plan",           "impact",  "--model",       kImpactModels + "gpt3-175b.yaml",
        "--gpus",         "520",     "--tp",          "8",
        "--pp",           "1",       "--dp",          "65",
        "--zero",         "1",       "--micro-batch", "1",
        "--global-batch", "1040",    "--recompute",   "full",
        "--slow",         "nic=0.5", "--json"};
    if (!sp) args.push_back("--no-sequence-parallel");
    const ProcessResult r = RunVigil(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const Json shrink = JsonOf(r)["drain"]["shrink"];
    ASSERT_TRUE(shrink["possible"].get<bool>()) << r.out;
    EXPECT_EQ(shrink["layout"]["sequence_parallel"].get<bool>(), sp) << r.out;
  }
}

TEST(PlanImpactCliTest, BadInputExits2) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--slow", "gpu=0.5"},
       "--slow: 'gpu=0.5': the name must be one of gemm, bf16, fp8, hbm, nvlink, nic, host"},
      {{}, "give the node's results (--node) or a what-if (--slow), one of the two"},
      {{"--slow", "nic=0.5", "--restart", "soon"}, "--restart: "},
      {{"--slow", "nic=0.5", "--node", "/nonexistent.json"},
       "give the node's results (--node) or a what-if (--slow), one of the two"},
      {{"--node", "/nonexistent.json"}, "/nonexistent.json"},
  };
  for (const auto& [flags, message] : cases) {
    const ProcessResult r = RunVigil(Impact(flags));
    EXPECT_EQ(r.exit_code, 2) << message;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_TRUE(r.err.starts_with("vigil: ")) << r.err;
    EXPECT_EQ(r.out, "");
  }
}

}  // namespace
}  // namespace vigil::testing
