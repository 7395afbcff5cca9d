// The GPU benchmarks on a real GPU (CTest label `gpu`): each runs with small sizes, verifies its
// results and reports plausible figures. Skipped where NVML sees no GPU or Vigil has no CUDA.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "vigil/bench/cuda/gpu_benchmarks.h"
#include "vigil/bench/runner.h"

namespace vigil {
namespace {

class GpuDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu::BuiltWithCuda()) GTEST_SKIP() << "built without CUDA";
    const Result<int> visible = nvml::VisibleGpus();
    if (!visible.ok()) GTEST_SKIP() << visible.status().message();
  }

  // Runs `b` on GPU 0 with `params` (as --set would) and checks every figure is positive.
  static std::vector<Metric> RunOnGpu0(const Benchmark& b,
                                       std::map<std::string, std::string> params) {
    RunnerOptions o;
    o.params[std::string(b.name())] = std::move(params);
    o.gpus = {0};
    BenchContext ctx = MakeContext(b, o);
    EXPECT_TRUE(b.Available(ctx).ok());
    Result<std::vector<Metric>> m = b.Run(ctx);
    EXPECT_TRUE(m.ok()) << b.name() << ": " << m.status().ToString();
    if (!m.ok()) return {};
    EXPECT_FALSE(m->empty()) << b.name();
    for (const Metric& x : *m) {
      EXPECT_TRUE(std::isfinite(x.value) && x.value > 0) << x.key.ToString() << " " << x.value;
      EXPECT_EQ(x.key.index->first, 0) << x.key.ToString();
    }
    return *m;
  }
};

TEST_F(GpuDeviceTest, GemmEveryTypeChecksAndRuns) {
  const auto m = RunOnGpu0(*MakeGpuGemmBenchmark(), {{"size", "2048"}, {"repetitions", "3"}});
  EXPECT_GE(m.size(), 4u);  // fp64, tf32, fp16, bf16 at least
}

TEST_F(GpuDeviceTest, StressComparesEveryProduct) {
  const auto m = RunOnGpu0(*MakeGpuStressBenchmark(), {{"duration", "2"}, {"size", "4096"}});
  EXPECT_GE(m.size(), 2u);
}

TEST_F(GpuDeviceTest, MembwCopyAndTriad) {
  const auto m = RunOnGpu0(*MakeGpuMembwBenchmark(), {{"array_size", "1G"}, {"repetitions", "3"}});
  ASSERT_EQ(m.size(), 2u);
  EXPECT_GT(m[0].value, 100);  // GB/s: any HBM or GDDR GPU of this decade
}

TEST_F(GpuDeviceTest, LaunchOverhead) {
  const auto m = RunOnGpu0(*MakeGpuLaunchBenchmark(), {{"repetitions", "5"}});
  ASSERT_EQ(m.size(), 2u);
  EXPECT_LT(m[0].value, 100);  // us per kernel
}

TEST_F(GpuDeviceTest, HostCopiesBothWays) {
  const auto m = RunOnGpu0(*MakeGpuCopyBenchmark(), {{"size", "64M"}, {"repetitions", "3"}});
  EXPECT_GE(m.size(), 2u);
}

TEST_F(GpuDeviceTest, BidirectionalHostCopyMovesBothWaysAtOnce) {
  Result<std::vector<double>> both =
      gpu::TimeCopies({{gpu::kHost, 0}, {0, gpu::kHost}}, 64 << 20, 3);
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  ASSERT_EQ(both->size(), 3u);
  for (const double s : *both) EXPECT_GT(s, 0);
}

// Peer copies between GPUs 0 and 1, one way and both ways at once, and the figures the full
// suite names after the pair.
TEST_F(GpuDeviceTest, PeerCopiesBetweenTwoGpus) {
  const Result<int> count = nvml::VisibleGpus();
  if (!count.ok() || *count < 2) GTEST_SKIP() << "needs two GPUs";
  const Result<bool> there = gpu::CanAccessPeer(0, 1);
  const Result<bool> back = gpu::CanAccessPeer(1, 0);
  ASSERT_TRUE(there.ok() && back.ok());
  if (!*there || !*back) GTEST_SKIP() << "GPUs 0 and 1 have no peer access both ways";
  for (const std::vector<gpu::CopyPath>& paths :
       {std::vector<gpu::CopyPath>{{0, 1}}, std::vector<gpu::CopyPath>{{0, 1}, {1, 0}}}) {
    Result<std::vector<double>> seconds = gpu::TimeCopies(paths, 64 << 20, 3);
    ASSERT_TRUE(seconds.ok()) << seconds.status().ToString();
    for (const double s : *seconds) EXPECT_GT(s, 0);
  }
  const auto b = MakeGpuCopyBenchmark();
  RunnerOptions o;
  o.suite = Suite::kFull;
  o.params["gpu-copy"] = {{"size", "64M"}, {"repetitions", "3"}};
  o.gpus = {0, 1};
  Result<std::vector<Metric>> m = b->Run(MakeContext(*b, o));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  std::set<std::string> keys;
  for (const Metric& x : *m) {
    keys.insert(x.key.ToString());
    EXPECT_GT(x.value, 1) << x.key.ToString();
  }
  for (const char* key : {"gpu-copy/p2p_gbps:0-1", "gpu-copy/p2p_gbps:1-0",
                          "gpu-copy/p2p_bidir_gbps:0-1", "gpu-copy/bidir_gbps:1"}) {
    EXPECT_TRUE(keys.count(key)) << key;
  }
}

TEST_F(GpuDeviceTest, NcclAcrossEveryGpu) {
  const Result<int> count = nvml::VisibleGpus();
  if (!count.ok() || *count < 2) GTEST_SKIP() << "needs two GPUs";
  const auto b = MakeNcclBenchmark();
  RunnerOptions o;
  o.params["nccl"] = {{"size", "256M"}, {"repetitions", "3"}};
  Result<std::vector<Metric>> m = b->Run(MakeContext(*b, o));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->size(), 4u);
  for (const Metric& x : *m) EXPECT_GT(x.value, 1) << x.key.ToString();
}

// Every GPU of the node under load at once, each with its own figures.
TEST_F(GpuDeviceTest, StressLoadsEveryGpu) {
  const Result<int> count = nvml::VisibleGpus();
  ASSERT_TRUE(count.ok());
  const auto b = MakeGpuStressBenchmark();
  RunnerOptions o;
  o.params["gpu-stress"] = {{"duration", "2"}, {"size", "4096"}};
  Result<std::vector<Metric>> m = b->Run(MakeContext(*b, o));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  std::set<std::string> keys;
  for (const Metric& x : *m) keys.insert(x.key.ToString());
  for (int g = 0; g < *count; ++g) {
    EXPECT_TRUE(keys.count("gpu-stress/median_tflops:" + std::to_string(g))) << g;
    EXPECT_TRUE(keys.count("gpu-stress/min_tflops:" + std::to_string(g))) << g;
  }
}

TEST_F(GpuDeviceTest, Health) { RunOnGpu0(*MakeGpuHealthBenchmark(), {}); }

}  // namespace
}  // namespace vigil
