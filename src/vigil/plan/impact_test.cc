#include "vigil/plan/impact.h"

#include <gtest/gtest.h>

#include <cmath>

#include "vigil/plan/layout_fixture.h"

namespace vigil::plan {
namespace {

// A 1.3B GPT (24 blocks of 2048) under data parallelism alone, one sequence per GPU.
ModelSpec Small() { return GptModel(24, 2048, 16); }

Layout DataParallel(int64_t gpus) {
  Layout l;
  l.gpus = l.dp = gpus;
  l.global_batch = gpus * 4;
  return l;
}

ImpactResult ImpactOf(const ModelSpec& m, const Layout& l, const HardwareProfile& hw,
                      const Ratios& ratios, DrainPolicy policy = {}) {
  EXPECT_TRUE(CheckLayout(m, l, hw).ok());
  Result<ImpactResult> r = Impact(m, l, hw, ratios, policy);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : ImpactResult{};
}

TEST(ParseSlowdownsTest, ReadsNamesAndRatios) {
  Result<Ratios> r = ParseSlowdowns("gemm=0.88, nic = 0.5");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r,
            (Ratios{{Component::kBf16, 0.88}, {Component::kFp8, 0.88}, {Component::kNic, 0.5}}));
  r = ParseSlowdowns("hbm=1,nvlink=0.25,host=0.1,fp8=0.9");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->size(), 4u);
}

TEST(ParseSlowdownsTest, NamesTheBadItem) {
  auto error = [](std::string_view text) { return ParseSlowdowns(text).status().message(); };
  EXPECT_EQ(error("gpu=0.5"),
            "--slow: 'gpu=0.5': the name must be one of gemm, bf16, fp8, hbm, nvlink, nic, host");
  EXPECT_EQ(error("nic=1.5"),
            "--slow: 'nic=1.5': the ratio must be a number above 0 and at most 1 (0.88: 12% slow)");
  EXPECT_EQ(error("nic=0").substr(0, 16), "--slow: 'nic=0':");
  EXPECT_EQ(error("nic=nan").substr(0, 18), "--slow: 'nic=nan':");
  EXPECT_EQ(error("nic=0.5x").substr(0, 19), "--slow: 'nic=0.5x':");
  EXPECT_EQ(error("nic=0.5,"), "--slow: '': expected NAME=RATIO");
  EXPECT_EQ(error("gemm=0.9,bf16=0.8"), "--slow: 'bf16=0.8': bf16 is given twice");
  EXPECT_EQ(error(""), "--slow: '': expected NAME=RATIO items, e.g. gemm=0.88,nic=0.5");
}

TEST(ImpactTest, ANodeAsFastAsTheFleetCostsNothing) {
  const ImpactResult r =
      ImpactOf(Small(), DataParallel(16), H100(), {{Component::kBf16, 1}, {Component::kNic, 1}});
  EXPECT_EQ(r.slowdown, 0);
  EXPECT_TRUE(r.moved.empty());
  EXPECT_EQ(r.verdict, Verdict::kKeep);
  EXPECT_TRUE(std::isinf(r.spare.break_even_s));
  ASSERT_EQ(r.components.size(), 2u);
  EXPECT_EQ(r.components[0].term, "");
}

// Under data parallelism alone every replica waits for the slow GPU's backward: with HBM too fast
// to matter, the compute term grows by exactly the GEMM factor and no communication moves.
TEST(ImpactTest, AGemmSlowGpuSlowsDataParallelComputeByItsFactor) {
  HardwareProfile hw = H100();
  hw.hbm_gbps = 1e12;
  const ImpactResult r = ImpactOf(Small(), DataParallel(8), hw, {{Component::kBf16, 0.88}});
  EXPECT_NEAR(r.degraded.time.compute_s / r.healthy.time.compute_s, 1 / 0.88, 1e-6);
  EXPECT_EQ(r.degraded.time.dp_comm_s, r.healthy.time.dp_comm_s);
  EXPECT_EQ(r.degraded.time.optimizer_s, r.healthy.time.optimizer_s);
  EXPECT_GT(r.slowdown, 0);
  EXPECT_LT(r.slowdown, 1 / 0.88 - 1);
  ASSERT_EQ(r.moved.size(), 1u);
  EXPECT_EQ(r.moved[0].first, "compute");
  EXPECT_EQ(r.components.at(0).term, "compute");
}

// A NIC at half bandwidth slows the collectives that cross it (here DP's gradient all-reduce
// between two nodes), and nothing else; a job inside one node does not use it.
TEST(ImpactTest, ASlowNicMovesOnlyTheCommunicationThatCrossesNodes) {
  const Ratios nic = {{Component::kNic, 0.5}};
  const ImpactResult across = ImpactOf(Small(), Megatron(16, 8, 1, 64), H100(), nic);
  EXPECT_EQ(across.degraded.time.compute_s, across.healthy.time.compute_s);
  EXPECT_EQ(across.degraded.time.tp_comm_s, across.healthy.time.tp_comm_s);  // NVLink
  EXPECT_GT(across.degraded.time.dp_comm_s, across.healthy.time.dp_comm_s);
  EXPECT_GT(across.slowdown, 0);
  EXPECT_EQ(across.moved.front().first, "dp_comm");
  const ImpactResult inside = ImpactOf(Small(), Megatron(8, 8, 1, 64), H100(), nic);
  EXPECT_EQ(inside.slowdown, 0);
}

// The job runs at its slowest stage's pace: the degraded profile on every stage prices the same
// step as one degraded stage among healthy ones (PredictMixed, the heterogeneous pipeline).
TEST(ImpactTest, OneSlowStagePacesThePipeline) {
  const ModelSpec m = GptModel(32, 4096, 32);
  const Layout l = Megatron(64, 8, 4, 64);
  const HardwareProfile hw = H100();
  const Ratios gemm = {{Component::kBf16, 0.8}};
  const ImpactResult r = ImpactOf(m, l, hw, gemm);
  const TrainPrediction mixed = PredictMixed(m, l, {hw, 3, 8}, {Degrade(hw, gemm), 1, 8});
  EXPECT_DOUBLE_EQ(r.degraded.step_time_s, mixed.step_time_s);
  EXPECT_DOUBLE_EQ(r.degraded.mfu * r.degraded.step_time_s, r.healthy.mfu * r.healthy.step_time_s);
}

TEST(ImpactTest, BreakEvenFallsAsTheSlowdownGrows) {
  DrainPolicy policy;
  policy.interruption.restart_s = 600;
  policy.interruption.interval_s = 3600;
  double last = std::numeric_limits<double>::infinity();
  for (double ratio : {0.99, 0.95, 0.9, 0.8, 0.5, 0.2}) {
    const ImpactResult r =
        ImpactOf(Small(), DataParallel(16), H100(), {{Component::kBf16, ratio}}, policy);
    EXPECT_LT(r.spare.break_even_s, last) << ratio;
    EXPECT_NEAR(r.spare.break_even_s, (600 + 1800) / r.slowdown, 1e-6);
    EXPECT_EQ(r.verdict, Verdict::kDrainIfLonger);
    last = r.spare.break_even_s;
  }
}

TEST(ImpactTest, TheRemainingTimeDecides) {
  DrainPolicy policy;
  const Ratios gemm = {{Component::kBf16, 0.9}};
  const double even = ImpactOf(Small(), DataParallel(16), H100(), gemm).spare.break_even_s;
  policy.remaining_s = 2 * even;
  EXPECT_EQ(ImpactOf(Small(), DataParallel(16), H100(), gemm, policy).verdict, Verdict::kDrain);
  policy.remaining_s = even / 2;
  EXPECT_EQ(ImpactOf(Small(), DataParallel(16), H100(), gemm, policy).verdict, Verdict::kKeepToEnd);
}

TEST(ImpactTest, AOneNodeJobCannotShrink) {
  DrainPolicy policy;
  policy.spare = false;
  const ImpactResult r =
      ImpactOf(Small(), DataParallel(8), H100(), {{Component::kBf16, 0.5}}, policy);
  EXPECT_FALSE(r.shrink.possible);
  EXPECT_EQ(r.shrink.why_not, "the job's 8 GPUs are no more than one node's 8");
  EXPECT_EQ(r.verdict, Verdict::kKeep);
  EXPECT_TRUE(r.spare.possible);
}

// A 51B GPT needs 16 bytes of model state per parameter: 52 GB per GPU on 16 H100s under ZeRO 3,
// 103 GB on 8, more than they hold; no layout on one node fewer fits.
TEST(ImpactTest, AModelThatFitsNowhereSmallerCannotShrink) {
  DrainPolicy policy;
  policy.spare = false;
  const ImpactResult r = ImpactOf(GptModel(64, 8192, 64), Megatron(16, 8, 2, 16), H100(),
                                  {{Component::kBf16, 0.5}}, policy);
  EXPECT_FALSE(r.shrink.possible);
  EXPECT_TRUE(r.shrink.why_not.starts_with("no layout on 8 GPUs: ")) << r.shrink.why_not;
}

// Shrinking from two nodes to one halves the throughput of a job that computes far more than it
// communicates: a node 1% slow never costs that much, one at a fifth of the speed does.
TEST(ImpactTest, ShrinkingPaysOnlyWhenTheNodeCostsMoreThanItsShare) {
  DrainPolicy policy;
  policy.spare = false;
  Layout l = DataParallel(16);
  l.global_batch = 1024;
  const ImpactResult mild = ImpactOf(Small(), l, H100(), {{Component::kBf16, 0.99}}, policy);
  ASSERT_TRUE(mild.shrink.possible) << mild.shrink.why_not;
  EXPECT_LT(mild.shrink.speed, 0.75);
  EXPECT_TRUE(std::isinf(mild.shrink.break_even_s));
  EXPECT_EQ(mild.verdict, Verdict::kKeep);
  const ImpactResult severe =
      ImpactOf(Small(), l, H100(), {{Component::kBf16, 0.2}, {Component::kHbm, 0.2}}, policy);
  ASSERT_TRUE(severe.shrink.possible);
  EXPECT_TRUE(std::isfinite(severe.shrink.break_even_s));
  EXPECT_EQ(severe.verdict, Verdict::kDrainIfLonger);
}

// A job laid out worse than the best layout on one node fewer: shrinking would be faster even
// without the node, but that is re-planning's gain, not the drain's; a node that costs nothing is
// kept.
TEST(ImpactTest, AJobsOwnPoorLayoutIsNoReasonToDrain) {
  DrainPolicy policy;
  policy.spare = false;
  // A small model split eight ways in width and four in depth on 32 GPUs; on 24 a plain layout
  // (TP 1 x PP 3 x DP 8, say) beats it.
  Layout poor = Megatron(32, 8, 4, 64);
  const ImpactResult r = ImpactOf(Small(), poor, H100(), {{Component::kBf16, 1}}, policy);
  ASSERT_TRUE(r.shrink.possible) << r.shrink.why_not;
  ASSERT_GT(r.shrink.layout->prediction.tokens_per_s, r.healthy.tokens_per_s);  // the case
  EXPECT_EQ(r.shrink.speed, 1);
  EXPECT_EQ(r.verdict, Verdict::kKeep);
}

TEST(ImpactTest, DegradeCapsAtTheFleetAndKeepsThePeaks) {
  HardwareProfile hw = H100();
  hw.intra_node_bus["allreduce"] = {{1e6, 100}, {1e9, 400}};
  const HardwareProfile d =
      Degrade(hw, {{Component::kNvlink, 0.5}, {Component::kBf16, 1.2}, {Component::kHost, 0.5}});
  EXPECT_EQ(d.bf16_tflops, hw.bf16_tflops);
  EXPECT_EQ(d.peak_bf16_tflops, hw.bf16_tflops);
  EXPECT_EQ(d.intra_node_gbps, hw.intra_node_gbps / 2);
  EXPECT_EQ(d.intra_node_bus.at("allreduce")[1].second, 200);
  EXPECT_EQ(d.host_to_device_gbps, hw.host_to_device_gbps / 2);
}

TEST(ImpactTest, RatiosCompareWhatKernelsReach) {
  const HardwareProfile fleet = H100();  // datasheet: peak x efficiency
  HardwareProfile node;                  // measured: figures only, efficiency 1
  node.bf16_tflops = EffectiveFigure(fleet, Component::kBf16) * 0.88;
  node.inter_node_gbps = EffectiveFigure(fleet, Component::kNic);
  const Ratios r = RatiosToFleet(node, fleet);
  EXPECT_EQ(r.size(), 2u);
  EXPECT_NEAR(r.at(Component::kBf16), 0.88, 1e-12);
  EXPECT_NEAR(r.at(Component::kNic), 1, 1e-12);
}

TEST(ImpactTest, LinksAreComparedAtOneMessageSize) {
  constexpr double kGiB = 1 << 30;
  // The node measured up to 1 GiB, the fleet up to 8 GiB, where bus bandwidth is higher by
  // itself: a healthy node must not read as slow for that.
  HardwareProfile fleet = H100();
  fleet.intra_node_bus["allreduce"] = {{kGiB / 4, 300}, {2 * kGiB, 360}, {8 * kGiB, 400}};
  fleet.intra_node_gbps = 400;
  fleet.inter_node_curve = {{kGiB / 8, 40}, {8 * kGiB, 48}};
  fleet.inter_node_gbps = 48;
  fleet.nvlink_efficiency = fleet.nic_efficiency = 1;  // measured
  HardwareProfile node;
  node.intra_node_bus["allreduce"] = {{kGiB / 4, 300}, {kGiB, 340}};
  node.intra_node_gbps = 340;
  node.inter_node_curve = {{kGiB / 8, 20}, {kGiB, 22}};
  node.inter_node_gbps = 22;
  const Ratios r = RatiosToFleet(node, fleet);
  // At 1 GiB the fleet's curve is 300 + (360 - 300) x log(4) / log(8) = 340: the node matches.
  EXPECT_NEAR(r.at(Component::kNvlink), 1, 1e-12);
  // The NIC at 1 GiB: the fleet's 40 + 8 x log(8) / log(64) = 44, the node's 22: half.
  EXPECT_NEAR(r.at(Component::kNic), 0.5, 1e-12);
  // With no size in common, each side's largest, as before.
  node.inter_node_curve = {{16 * kGiB, 24}};
  node.inter_node_gbps = 24;
  EXPECT_NEAR(RatiosToFleet(node, fleet).at(Component::kNic), 0.5, 1e-12);
  // A fleet of the datasheet alone has no curve: the node's largest size against its figure.
  node.intra_node_bus.clear();
  EXPECT_NEAR(RatiosToFleet(node, H100()).at(Component::kNvlink),
              340 / EffectiveFigure(H100(), Component::kNvlink), 1e-12);
}

TEST(ImpactTest, RefusesNegativeTimes) {
  DrainPolicy policy;
  policy.interruption.restart_s = -1;
  const Result<ImpactResult> r = Impact(Small(), DataParallel(8), H100(), {}, policy);
  EXPECT_EQ(r.status().message(), "--restart must be a duration of at least 0, got -1");
}

}  // namespace
}  // namespace vigil::plan
