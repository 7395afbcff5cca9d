#include <gtest/gtest.h>

#include "vigil/bench/cuda/gpu_benchmarks.h"
#include "vigil/testing/temp_dir.h"

namespace vigil {
namespace {

gpu::DeviceProps H100() {
  gpu::DeviceProps p;
  p.name = "NVIDIA H100 80GB HBM3";
  p.cc_major = 9;
  p.total_bytes = 80ull << 30;
  p.free_bytes = 79ull << 30;
  p.l2_bytes = 50ull << 20;
  p.sms = 132;
  return p;
}

TEST(GpuMembwTest, BytesCountReadsAndWrites) {
  EXPECT_EQ(MembwBytesMoved(gpu::MembwKernel::kCopy, 1 << 30), 2.0 * (1 << 30));
  EXPECT_EQ(MembwBytesMoved(gpu::MembwKernel::kTriad, 1 << 30), 3.0 * (1 << 30));
}

TEST(GpuMembwTest, ArraysAreFarBeyondL2AndFitInFreeMemory) {
  EXPECT_EQ(*MembwArrayBytes(1ull << 30, H100(), 3), 1ull << 30);
  EXPECT_EQ(*MembwArrayBytes((1ull << 30) + 7, H100(), 3), 1ull << 30);  // whole accesses
  // 4 GiB arrays of triad ask for 12 GiB: fine on 79 GiB free, cut to a quarter of 8 GiB free.
  gpu::DeviceProps busy = H100();
  busy.free_bytes = 8ull << 30;
  EXPECT_EQ(*MembwArrayBytes(4ull << 30, busy, 2), 1ull << 30);
  // Almost no memory left: the figure would be the cache's.
  busy.free_bytes = 1ull << 30;
  Result<size_t> small = MembwArrayBytes(4ull << 30, busy, 3);
  ASSERT_FALSE(small.ok());
  EXPECT_NE(small.status().message().find("8x the 50 MiB L2"), std::string::npos)
      << small.status().message();
}

TEST(GpuMembwTest, WithoutAGpuTheBenchmarksAreSkippedWithTheReason) {
  if (nvml::VisibleGpus().ok() && gpu::BuiltWithCuda()) GTEST_SKIP() << "this machine has a GPU";
  for (const auto& b : {MakeGpuGemmBenchmark(), MakeGpuStressBenchmark(), MakeGpuMembwBenchmark(),
                        MakeGpuLaunchBenchmark(), MakeGpuCopyBenchmark(), MakeNcclBenchmark()}) {
    const Status s = b->Available(BenchContext{});
    EXPECT_EQ(s.code(), StatusCode::kUnavailable) << b->name();
    EXPECT_FALSE(s.message().empty());
  }
  // The device API itself answers every call without a device with an error, never a crash.
  Result<int> n = gpu::DeviceCount();
  if (n.ok()) {
    EXPECT_EQ(*n, 0);
  }
  const auto fails = [](const Status& s, const char* call) {
    EXPECT_FALSE(s.ok()) << call;
    EXPECT_FALSE(s.message().empty()) << call;
  };
  fails(gpu::Props(0).status(), "Props");
  fails(gpu::TimeMembw(0, gpu::MembwKernel::kTriad, 1 << 20, 1).status(), "TimeMembw");
  fails(gpu::TimeLaunch(0, 1, 1).status(), "TimeLaunch");
  fails(gpu::TimeCopies({{gpu::kHost, 0}, {0, gpu::kHost}}, 1 << 20, 1).status(), "TimeCopies");
  fails(gpu::CanAccessPeer(0, 1).status(), "CanAccessPeer");
  fails(gpu::TimeGemm(0, gpu::GemmType::kBf16, 256, 1).status(), "TimeGemm");
  fails(gpu::GemmError(0, gpu::GemmType::kFp8, 256).status(), "GemmError");
  fails(gpu::Stress(0, gpu::GemmType::kBf16, 256, 0.1, {}).status(), "Stress");
  fails(gpu::TimeCollective({0, 1}, gpu::Collective::kAllToAll, 1 << 20, 1).status(),
        "TimeCollective");
  fails(gpu::CheckAllReduce({0, 1}, 1 << 20), "CheckAllReduce");
}

TEST(GpuCopyTest, ACopyNeedsAGpuAtOneEnd) {
  if (!gpu::BuiltWithCuda()) GTEST_SKIP() << "built without CUDA";
  EXPECT_EQ(gpu::TimeCopies({}, 1 << 20, 1).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(gpu::TimeCopies({{gpu::kHost, gpu::kHost}}, 1 << 20, 1).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(GpuCopyTest, BidirectionalHostCopiesOnlyInTheFullSuite) {
  const auto quick = HostCopies(3, Suite::kQuick);
  ASSERT_EQ(quick.size(), 2u);
  EXPECT_EQ(quick[0].second, "h2d_gbps");
  ASSERT_EQ(quick[0].first.size(), 1u);
  EXPECT_EQ(quick[0].first[0].src, gpu::kHost);
  EXPECT_EQ(quick[0].first[0].dst, 3);
  EXPECT_EQ(quick[1].second, "d2h_gbps");
  EXPECT_EQ(quick[1].first[0].src, 3);
  EXPECT_EQ(quick[1].first[0].dst, gpu::kHost);
  const auto full = HostCopies(3, Suite::kFull);
  ASSERT_EQ(full.size(), 3u);
  EXPECT_EQ(full[2].second, "bidir_gbps");
  ASSERT_EQ(full[2].first.size(), 2u);  // both directions at once
  EXPECT_EQ(full[2].first[0].dst, 3);
  EXPECT_EQ(full[2].first[1].src, 3);
}

TEST(GpuGemmTest, TypesByComputeCapability) {
  using gpu::GemmType;
  EXPECT_FALSE(GemmTypeSupported(GemmType::kBf16, 7, 0));  // V100: no bf16 tensor cores
  EXPECT_TRUE(GemmTypeSupported(GemmType::kBf16, 8, 0));   // A100
  EXPECT_TRUE(GemmTypeSupported(GemmType::kTf32, 8, 6));
  EXPECT_FALSE(GemmTypeSupported(GemmType::kFp8, 8, 0));  // A100: no fp8
  EXPECT_FALSE(GemmTypeSupported(GemmType::kFp8, 8, 6));
  EXPECT_TRUE(GemmTypeSupported(GemmType::kFp8, 8, 9));  // L40S
  EXPECT_TRUE(GemmTypeSupported(GemmType::kFp8, 9, 0));  // H100
  EXPECT_TRUE(GemmTypeSupported(GemmType::kFp8, 10, 0));
  EXPECT_EQ(GemmTypeName(GemmType::kBf16), "bf16");
  EXPECT_EQ(GemmTypeName(GemmType::kFp8), "fp8");
  // Each tolerance lies above what rounding allows and far below a wrong answer's error (~1).
  EXPECT_GT(GemmTolerance(GemmType::kFp16), 1.0 / 2048);
  EXPECT_GT(GemmTolerance(GemmType::kBf16), 1.0 / 256);
  for (GemmType t :
       {GemmType::kFp64, GemmType::kTf32, GemmType::kFp16, GemmType::kBf16, GemmType::kFp8}) {
    EXPECT_LT(GemmTolerance(t), 0.05) << GemmTypeName(t);
  }
}

TEST(GpuStressTest, SamplesKeepThePeakAndEveryThrottleReason) {
  StressSamples seen;
  EXPECT_FALSE(seen.peak_c.has_value());
  nvml::HealthReading r;
  r.temperature_c = 61;
  seen.Add(r);  // no throttle reasons in this reading
  EXPECT_FALSE(seen.throttle_read);
  r.temperature_c = 74;
  r.throttle_reasons = nvml::throttle::kSwPowerCap;
  seen.Add(r);
  r.temperature_c = 70;
  r.throttle_reasons = nvml::throttle::kHwThermal;
  r.pcie_gen = 5;  // busy: the link at its trained generation
  seen.Add(r);
  r.pcie_gen = 1;  // between products, a moment idle
  seen.Add(r);
  EXPECT_EQ(seen.pcie_gen, 5);
  EXPECT_EQ(seen.peak_c, 74);
  EXPECT_TRUE(seen.throttle_read);
  EXPECT_EQ(seen.reasons, nvml::throttle::kSwPowerCap | nvml::throttle::kHwThermal);
}

TEST(GpuStressTest, FiguresOfOneGpu) {
  gpu::StressRun run;
  // Products of 2 * 10000^3 flops: 2, 4 and 1 ms are 1000, 500 and 2000 TFLOP/s.
  run.seconds = {2e-3, 4e-3, 1e-3};
  StressSamples seen;
  Result<std::vector<Metric>> m = StressMetrics(3, 10000, run, seen);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->size(), 2u);  // no NVML readings: no temperature, no throttle flag
  EXPECT_EQ((*m)[0].key.ToString(), "gpu-stress/median_tflops:3");
  EXPECT_DOUBLE_EQ((*m)[0].value, 1000);
  EXPECT_EQ((*m)[1].key.ToString(), "gpu-stress/min_tflops:3");
  EXPECT_DOUBLE_EQ((*m)[1].value, 500);
  EXPECT_TRUE((*m)[1].higher_is_better);

  seen.peak_c = 81;
  seen.throttle_read = true;
  seen.reasons = nvml::throttle::kSwPowerCap;  // a power cap under full load is no fault
  m = StressMetrics(3, 10000, run, seen);
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->size(), 4u);
  EXPECT_EQ((*m)[2].key.ToString(), "gpu-stress/peak_temperature_c:3");
  EXPECT_DOUBLE_EQ((*m)[2].value, 81);
  EXPECT_EQ((*m)[3].key.ToString(), "gpu-stress/throttled:3");
  EXPECT_DOUBLE_EQ((*m)[3].value, 0);
  seen.reasons |= nvml::throttle::kHwSlowdown;
  seen.pcie_gen = 4;
  m = StressMetrics(3, 10000, run, seen);
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->size(), 5u);
  EXPECT_DOUBLE_EQ((*m)[3].value, 1);
  EXPECT_EQ((*m)[4].key.ToString(), "gpu-stress/pcie_gen:3");
  EXPECT_DOUBLE_EQ((*m)[4].value, 4);
  EXPECT_TRUE((*m)[4].higher_is_better);
}

TEST(GpuStressTest, AProductThatDifferedIsSilentDataCorruption) {
  gpu::StressRun run;
  run.seconds = {1e-3, 1e-3, 1e-3, 1e-3};
  run.miscompares = 1;
  const Result<std::vector<Metric>> m = StressMetrics(5, 1000, run, {});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            "GPU 5: 1 of 4 bf16 products differed from the first: silent data corruption");
  EXPECT_FALSE(StressMetrics(5, 1000, gpu::StressRun{}, {}).ok());  // nothing timed
}

TEST(NcclTest, BusBandwidthFactorsAreNcclTests) {
  using gpu::Collective;
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kAllReduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kAllGather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kReduceScatter, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kAllToAll, 2), 0.5);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kAllReduce, 2), 1.0);
  EXPECT_EQ(CollectiveName(Collective::kReduceScatter), "reducescatter");
}

TEST(NcclTest, FewerThanTwoGpusIsSkipped) {
  BenchContext ctx;
  ctx.gpus = {0};
  const Status s = MakeNcclBenchmark()->Available(ctx);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);  // no CUDA or GPU here, or one GPU chosen
}

TEST(GpuCopyTest, TheGpusNumaNodeComesFromSysfs) {
  testing::TempDir dir;
  dir.Write("bus/pci/devices/0000:1a:00.0/numa_node", "1\n");
  dir.Write("bus/pci/devices/0000:1b:00.0/numa_node", "-1\n");
  EXPECT_EQ(PciNumaNode(dir.path(), "0000:1A:00.0"), 1);  // CUDA writes the id in capitals
  EXPECT_EQ(PciNumaNode(dir.path(), "0000:1B:00.0"), -1);
  EXPECT_EQ(PciNumaNode(dir.path(), "0000:99:00.0"), -1);
}

}  // namespace
}  // namespace vigil
