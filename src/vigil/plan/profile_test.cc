#include "vigil/plan/profile.h"

#include <gtest/gtest.h>

#include <string>

#include "vigil/core/file.h"
#include "vigil/testing/temp_dir.h"

namespace vigil::plan {
namespace {

FleetRow Node(std::string name, double gemm, double busbw, int gemm_rc = 0) {
  FleetRow row{std::move(name), {}, ""};
  for (int g = 0; g < 8; ++g) {
    row.values.emplace_back("gpu-gemm/bf16_tflops:" + std::to_string(g), gemm + g);
    row.values.emplace_back("gpu-membw/triad_gbps:" + std::to_string(g), 3000);
    row.values.emplace_back("gpu-copy/h2d_gbps:" + std::to_string(g), 50);
  }
  row.values.emplace_back("gpu-gemm/return_code", gemm_rc);
  row.values.emplace_back("nccl/allreduce_busbw", busbw);
  row.values.emplace_back("nccl/allreduce_1048576_busbw", busbw / 4);
  row.values.emplace_back("nccl/allreduce_268435456_busbw", busbw * 0.9);
  return row;
}

// One node in a synchronous job runs at its slowest GPU's pace: kWorst takes the least of its GPUs
// (700 of 700 to 707) where kMedian takes their median (703.5).
TEST(MeasuredProfileTest, SumsANodeUpByItsWorstGpu) {
  const FleetTable table = TableOfRows({Node("a", 700, 400)}, "node.jsonl");
  Result<HardwareProfile> worst = MeasuredProfile(table, {}, "node.jsonl", PerNode::kWorst);
  ASSERT_TRUE(worst.ok()) << worst.status().message();
  EXPECT_DOUBLE_EQ(worst->bf16_tflops, 700);
  EXPECT_DOUBLE_EQ(worst->fp8_tflops, 0);  // not measured: the empty base's 0
  Result<HardwareProfile> median = MeasuredProfile(table, {}, "node.jsonl");
  ASSERT_TRUE(median.ok()) << median.status().message();
  EXPECT_DOUBLE_EQ(median->bf16_tflops, 703.5);
}

TEST(MeasuredProfileTest, TakesTheMedianOfHealthyNodes) {
  const HardwareProfile sheet = *DatasheetProfile("h100");
  // GPU medians 703.5, 713.5 and 603.5 (the third node's GEMM failed, so it does not count).
  const FleetTable table = TableOfRows(
      {Node("a", 700, 400), Node("b", 710, 420), Node("c", 600, 100, 1)}, "fleet.jsonl");
  Result<HardwareProfile> p = MeasuredProfile(table, sheet, "fleet.jsonl");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_DOUBLE_EQ(p->bf16_tflops, (703.5 + 713.5) / 2);
  EXPECT_DOUBLE_EQ(p->bf16_efficiency, 1);
  EXPECT_DOUBLE_EQ(p->fp8_efficiency, sheet.fp8_efficiency);  // FP8 was not measured
  EXPECT_DOUBLE_EQ(p->peak_bf16_tflops, sheet.bf16_tflops);   // MFU stays against the datasheet
  EXPECT_DOUBLE_EQ(p->hbm_gbps, 3000);
  EXPECT_DOUBLE_EQ(p->hbm_efficiency, 1);
  EXPECT_DOUBLE_EQ(p->host_to_device_gbps, 50);
  EXPECT_DOUBLE_EQ(p->intra_node_gbps, 400);  // the median of 400, 420 and 100
  EXPECT_DOUBLE_EQ(p->nvlink_efficiency, 1);
  ASSERT_EQ(p->intra_node_bus.at("allreduce").size(), 2u);
  EXPECT_DOUBLE_EQ(p->intra_node_bus.at("allreduce")[0].first, 1048576);
  EXPECT_DOUBLE_EQ(p->intra_node_bus.at("allreduce")[0].second, 100);
  // Not measured: the datasheet's.
  EXPECT_DOUBLE_EQ(p->fp8_tflops, sheet.fp8_tflops);
  EXPECT_DOUBLE_EQ(p->inter_node_gbps, sheet.inter_node_gbps);
  EXPECT_EQ(p->source, "measured: fleet.jsonl (3 nodes), datasheet for the rest");
}

TEST(MeasuredProfileTest, ReadsSuperBenchNamesAndUnits) {
  const FleetTable table = TableOfRows({{"sb",
                                         {{"gemm-flops/BF16_TC:0", 264965},
                                          {"gemm-flops/BF16_TC:1", 267501},
                                          {"nccl-bw/allreduce_8388608_busbw:0", 89.51},
                                          {"nccl-bw/allreduce_4294967296_busbw:0", 234.45},
                                          {"ib-loopback/IB_write_8388608_Avg_0:0", 23922.4},
                                          {"ib-loopback/IB_write_1024_Avg_0:0", 3215.97},
                                          {"mem-bw/H2D_Mem_BW:0", 26.2}},
                                         ""}},
                                       "sb.jsonl");
  Result<HardwareProfile> p = MeasuredProfile(table, *DatasheetProfile("a100"), "sb.jsonl");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_DOUBLE_EQ(p->bf16_tflops, (264.965 + 267.501) / 2);
  EXPECT_DOUBLE_EQ(p->intra_node_gbps, 234.45);  // the largest message
  EXPECT_NEAR(p->inter_node_gbps, 23.9224, 1e-9);
  ASSERT_EQ(p->inter_node_curve.size(), 2u);  // the NIC by size, for comparing at one size
  EXPECT_DOUBLE_EQ(p->inter_node_curve[0].first, 1024);
  EXPECT_NEAR(p->inter_node_curve[0].second, 3.21597, 1e-9);
  EXPECT_DOUBLE_EQ(p->host_to_device_gbps, 26.2);
}

TEST(MeasuredProfileTest, RefusesATableWithNothingToRead) {
  const FleetTable table = TableOfRows({{"n", {{"cpu-stream/triad_gbps", 200}}, ""}}, "x.jsonl");
  EXPECT_EQ(MeasuredProfile(table, *DatasheetProfile("a100"), "x.jsonl").status().message(),
            "x.jsonl: no GEMM, HBM, host copy, NCCL or InfiniBand figure to build a hardware "
            "profile from (docs/plan.md lists the keys read)");
}

TEST(ProfileForTest, ReadsTheRealSuperBenchFleet) {
  Result<HardwareProfile> p = ProfileFor(
      "a100", {std::string(VIGIL_SOURCE_DIR) + "/tests/data/superbench_test_results.jsonl"});
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_GT(p->bf16_tflops, 250);  // 8 x A100 GEMM medians near 265-277 TFLOP/s
  EXPECT_LT(p->bf16_tflops, 300);
  EXPECT_FALSE(ProfileFor("v100", {}).ok());
}

TEST(ProfilesForTest, BothSummariesFromOneReading) {
  const std::string fleet =
      std::string(VIGIL_SOURCE_DIR) + "/tests/data/superbench_test_results.jsonl";
  Result<FleetProfiles> both = ProfilesFor("a100", {fleet});
  ASSERT_TRUE(both.ok()) << both.status().message();
  EXPECT_DOUBLE_EQ(both->median.bf16_tflops, ProfileFor("a100", {fleet})->bf16_tflops);
  Result<FleetTable> table = ReadResultsTable({fleet});
  ASSERT_TRUE(table.ok());
  const HardwareProfile worst =
      *MeasuredProfile(*table, *DatasheetProfile("a100"), fleet, PerNode::kWorst);
  EXPECT_DOUBLE_EQ(both->worst.bf16_tflops, worst.bf16_tflops);
  EXPECT_LT(both->worst.bf16_tflops, both->median.bf16_tflops);  // 8 GPUs differ a little
  // No files: the datasheet row both ways.
  Result<FleetProfiles> sheet = ProfilesFor("h100", {});
  ASSERT_TRUE(sheet.ok());
  EXPECT_EQ(sheet->median.source, "datasheet");
  EXPECT_DOUBLE_EQ(sheet->worst.bf16_tflops, DatasheetProfile("h100")->bf16_tflops);
  EXPECT_FALSE(ProfilesFor("v100", {}).ok());
}

TEST(ResultFilesTest, ADirectoryIsItsResultsFilesSorted) {
  testing::TempDir dir;
  dir.Write("fleet/b.jsonl", "{}\n");
  dir.Write("fleet/a.json", "{}\n");
  dir.Write("fleet/notes.txt", "not results\n");
  dir.Write("fleet/deeper/c.json", "{}\n");  // not read: no recursion
  dir.Write("one.json", "{}\n");
  dir.Write("empty/readme.md", "nothing here\n");
  Result<std::vector<std::string>> files =
      ResultFiles({dir.File("one.json"), dir.File("fleet"), dir.File("missing.json")});
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_EQ(*files,
            (std::vector<std::string>{dir.File("one.json"), dir.File("fleet/a.json"),
                                      dir.File("fleet/b.jsonl"), dir.File("missing.json")}));
  EXPECT_EQ(ResultFiles({dir.File("empty")}).status().message(),
            dir.File("empty") + ": a directory with no *.json or *.jsonl results file");
}

TEST(ProfileForTest, ReadsADirectoryAsItsFiles) {
  testing::TempDir dir;
  Result<std::string> fleet =
      ReadFile(std::string(VIGIL_SOURCE_DIR) + "/tests/data/superbench_test_results.jsonl");
  ASSERT_TRUE(fleet.ok());
  dir.Write("fleet/superbench.jsonl", *fleet);
  Result<HardwareProfile> from_dir = ProfileFor("a100", {dir.File("fleet")});
  Result<HardwareProfile> from_file = ProfileFor("a100", {dir.File("fleet/superbench.jsonl")});
  ASSERT_TRUE(from_dir.ok()) << from_dir.status().message();
  ASSERT_TRUE(from_file.ok());
  EXPECT_DOUBLE_EQ(from_dir->bf16_tflops, from_file->bf16_tflops);
  EXPECT_DOUBLE_EQ(from_dir->intra_node_gbps, from_file->intra_node_gbps);
}

}  // namespace
}  // namespace vigil::plan
