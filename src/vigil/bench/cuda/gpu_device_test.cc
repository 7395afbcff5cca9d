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

  // Runs `b` on GPU 0 with `params` (as --set would) and checks every figure is plausible: a
  // count (unit "", lower is better: errors, remapped rows, miscompares) a whole number >= 0, a
  // flag (throttle reasons, pending or failed remaps) 0 or 1, anything else (rates, temperature,
  // power, link widths) > 0. A healthy GPU's counts and flags are 0.
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
      const std::string& metric = x.key.metric;
      const bool flag = metric.rfind("throttle", 0) == 0 || metric.ends_with("_pending") ||
                        metric.ends_with("_failure");
      const bool count = x.unit.empty() && !x.higher_is_better;
      EXPECT_TRUE(std::isfinite(x.value)) << x.key.ToString() << " " << x.value;
      if (flag) {
        EXPECT_TRUE(x.value == 0 || x.value == 1) << x.key.ToString() << " " << x.value;
      } else if (count) {
        EXPECT_TRUE(x.value >= 0 && x.value == std::floor(x.value))
            << x.key.ToString() << " " << x.value;
      } else {
        EXPECT_GT(x.value, 0) << x.key.ToString();
      }
      EXPECT_EQ(x.key.index->first, 0) << x.key.ToString();
    }
    return *m;
  }
};

TEST_F(GpuDeviceTest, GemmEveryTypeChecksAndRuns) {
  // Sizes that are no multiple of 16 (fp8 needs one): rounded down, not failed.
  const auto m = RunOnGpu0(*MakeGpuGemmBenchmark(),
                           {{"size", "2050"}, {"check_size", "1000"}, {"repetitions", "3"}});
  EXPECT_GE(m.size(), 4u);  // fp64, tf32, fp16, bf16 at least
}

// Batches of back-to-back products: a sample's products take about 30 ms together, so that a
// small product's time is its own, not the launch's.
TEST_F(GpuDeviceTest, GemmTimesBatchesAfterAWarmUp) {
  Result<std::vector<double>> s = gpu::TimeGemm(0, gpu::GemmType::kBf16, 1024, 5, 0.2);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->size(), 5u);
  for (const double x : *s) EXPECT_LT(x, 1e-3);  // a 1024^3 bf16 product: microseconds
}

TEST_F(GpuDeviceTest, StressComparesEveryProduct) {
  // 4000 is no multiple of 16: run at 3984.
  const auto m = RunOnGpu0(*MakeGpuStressBenchmark(), {{"duration", "2"}, {"size", "4000"}});
  ASSERT_GE(m.size(), 3u);
  EXPECT_EQ(m[2].key.ToString(), "gpu-stress/miscompares:0");
  EXPECT_EQ(m[2].value, 0);
  EXPECT_LE(m[0].samples.size(), 100u);
}

TEST_F(GpuDeviceTest, MemtestFindsNoErrorOnAHealthyGpu) {
  const auto m = RunOnGpu0(*MakeGpuMemtestBenchmark(),
                           {{"fraction", "0.05"}, {"max_size", "1G"}, {"duration", "0.5"}});
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].key.ToString(), "gpu-memtest/errors:0");
  EXPECT_EQ(m[0].value, 0);
  EXPECT_GT(m[1].value, 0.1);  // GiB
  EXPECT_LE(m[1].value, 1);
}

// A duration of 0 is one pass of every pattern, which finds nothing on a healthy GPU.
TEST_F(GpuDeviceTest, MemtestOnePassOverAChunk) {
  Result<gpu::MemtestRun> run = gpu::Memtest(0, 256 << 20, 0);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->tested_bytes, 256u << 20);
  EXPECT_EQ(run->passes, 1);
  EXPECT_EQ(run->errors, 0u);
  EXPECT_TRUE(run->first.empty());
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

// One set of communicators for several collectives and sizes, larger and smaller.
TEST_F(GpuDeviceTest, CollectivesServeEverySizeOnce) {
  const Result<int> count = nvml::VisibleGpus();
  if (!count.ok() || *count < 2) GTEST_SKIP() << "needs two GPUs";
  Result<std::unique_ptr<gpu::Collectives>> c = gpu::Collectives::Open({0, 1});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE((*c)->CheckAllReduce(8 << 20).ok());
  for (const size_t bytes : {size_t{1} << 20, size_t{64} << 20, size_t{4} << 20}) {
    Result<std::vector<double>> s = (*c)->Time(gpu::Collective::kAllGather, bytes, 2);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_EQ(s->size(), 2u);
  }
  EXPECT_TRUE((*c)->CheckAllReduce(16 << 20).ok());
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
