#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

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
                        MakeGpuLaunchBenchmark(), MakeGpuCopyBenchmark(), MakeNcclBenchmark(),
                        MakeGpuMemtestBenchmark()}) {
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
  fails(gpu::TimeGemm(0, gpu::GemmType::kBf16, 256, 1, 0.2).status(), "TimeGemm");
  fails(gpu::GemmError(0, gpu::GemmType::kFp8, 256).status(), "GemmError");
  fails(gpu::Stress(0, gpu::GemmType::kBf16, 256, 0.1).status(), "Stress");
  fails(gpu::Memtest(0, 64 << 20, 0.1).status(), "Memtest");
  fails(gpu::Collectives::Open({0, 1}).status(), "Collectives::Open");
  fails(gpu::Collectives::Join({0, 1}, 0, 4).status(), "Collectives::Join");
  NodeCollectiveSpec spec;
  spec.world = 16;
  spec.ops = {gpu::Collective::kAllReduce};
  fails(RunNodeCollective(spec).status(), "RunNodeCollective");
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
  ASSERT_EQ(m->size(), 3u);  // no NVML readings: no temperature, no throttle flag
  EXPECT_EQ((*m)[0].key.ToString(), "gpu-stress/median_tflops:3");
  EXPECT_DOUBLE_EQ((*m)[0].value, 1000);
  EXPECT_EQ((*m)[0].samples, (std::vector<double>{1000, 500, 2000}));
  EXPECT_EQ((*m)[1].key.ToString(), "gpu-stress/min_tflops:3");
  EXPECT_DOUBLE_EQ((*m)[1].value, 500);
  EXPECT_TRUE((*m)[1].higher_is_better);
  // No product differed from the first: the count is there, and 0.
  EXPECT_EQ((*m)[2].key.ToString(), "gpu-stress/miscompares:3");
  EXPECT_DOUBLE_EQ((*m)[2].value, 0);
  EXPECT_EQ((*m)[2].unit, "");
  EXPECT_FALSE((*m)[2].higher_is_better);

  seen.peak_c = 81;
  seen.throttle_read = true;
  seen.reasons = nvml::throttle::kSwPowerCap;  // a power cap under full load is no fault
  m = StressMetrics(3, 10000, run, seen);
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->size(), 5u);
  EXPECT_EQ((*m)[3].key.ToString(), "gpu-stress/peak_temperature_c:3");
  EXPECT_DOUBLE_EQ((*m)[3].value, 81);
  EXPECT_EQ((*m)[4].key.ToString(), "gpu-stress/throttled:3");
  EXPECT_DOUBLE_EQ((*m)[4].value, 0);
  seen.reasons |= nvml::throttle::kHwSlowdown;
  seen.pcie_gen = 4;
  m = StressMetrics(3, 10000, run, seen);
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->size(), 6u);
  EXPECT_DOUBLE_EQ((*m)[4].value, 1);
  EXPECT_EQ((*m)[5].key.ToString(), "gpu-stress/pcie_gen:3");
  EXPECT_DOUBLE_EQ((*m)[5].value, 4);
  EXPECT_TRUE((*m)[5].higher_is_better);
}

// Silent data corruption is a figure for the validator to judge, not a failed run: the other
// figures of the GPU still count.
TEST(GpuStressTest, ProductsThatDifferedAreCountedNotAFailure) {
  gpu::StressRun run;
  run.seconds = {1e-3, 1e-3, 1e-3, 1e-3};
  run.miscompares = 2;
  const Result<std::vector<Metric>> m = StressMetrics(5, 1000, run, {});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->size(), 3u);
  EXPECT_EQ((*m)[2].key.ToString(), "gpu-stress/miscompares:5");
  EXPECT_DOUBLE_EQ((*m)[2].value, 2);
  const Result<std::vector<Metric>> none = StressMetrics(5, 1000, gpu::StressRun{}, {});
  ASSERT_FALSE(none.ok());  // nothing timed
  EXPECT_EQ(none.status().message(), "GPU 5: gpu-stress timed no product");
}

// A full run times tens of thousands of products per GPU: its figures are of all of them, its
// samples a bounded, evenly spread selection.
TEST(GpuStressTest, ALongRunKeepsItsFiguresButBoundedSamples) {
  gpu::StressRun run;
  for (int i = 0; i < 50000; ++i) run.seconds.push_back(i == 31337 ? 4e-3 : 2e-3);
  const Result<std::vector<Metric>> m = StressMetrics(0, 10000, run, {});
  ASSERT_TRUE(m.ok());
  EXPECT_DOUBLE_EQ((*m)[0].value, 1000);  // median of every product
  EXPECT_DOUBLE_EQ((*m)[1].value, 500);   // the one slow product, not among the samples kept
  EXPECT_EQ((*m)[0].samples.size(), 100u);
  EXPECT_EQ((*m)[1].samples.size(), 100u);
  EXPECT_EQ((*m)[2].samples.size(), 1u);
}

TEST(GpuStressTest, EvenlyPickedKeepsTheEndsAndTheOrder) {
  EXPECT_EQ(EvenlyPicked({1, 2, 3}, 5), (std::vector<double>{1, 2, 3}));  // few enough: all
  EXPECT_EQ(EvenlyPicked({0, 1, 2, 3, 4, 5, 6, 7, 8}, 3), (std::vector<double>{0, 4, 8}));
  EXPECT_EQ(EvenlyPicked({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 4), (std::vector<double>{0, 3, 6, 9}));
  EXPECT_EQ(EvenlyPicked({5, 6, 7}, 2), (std::vector<double>{5, 7}));
  EXPECT_TRUE(EvenlyPicked({}, 2).empty());
}

// A figure for the fleet is the settled one, after the clocks drop under the power limit; the
// health suite only checks, and must stay within seconds.
TEST(GpuGemmTest, TimedProductsWarmUpForSecondsButNotInTheHealthSuite) {
  const std::vector<ParamSpec> params = MakeGpuGemmBenchmark()->params();
  const auto warmup = std::find_if(params.begin(), params.end(),
                                   [](const ParamSpec& p) { return p.name == "warmup"; });
  ASSERT_NE(warmup, params.end());
  EXPECT_EQ(warmup->kind, ParamKind::kSeconds);
  EXPECT_EQ(warmup->Default(Suite::kQuick), "2");
  EXPECT_EQ(warmup->Default(Suite::kFull), "2");
  EXPECT_EQ(warmup->Default(Suite::kHealth), "0.2");
}

TEST(GpuGemmTest, SizesAreMultiplesOf16ForFp8) {
  EXPECT_EQ(GemmSize(8192), 8192);
  EXPECT_EQ(GemmSize(1000), 992);
  EXPECT_EQ(GemmSize(1023), 1008);
  EXPECT_EQ(GemmSize(17), 16);
  EXPECT_EQ(GemmSize(15), 16);  // at least 16
  EXPECT_EQ(GemmSize(0), 16);
}

// Per-GPU benchmarks whose GPUs share nothing run on all of them at once; the figures come back
// in the GPUs' order whatever order the threads finish in, and an error names its GPU.
TEST(GpuParallelTest, EveryGpuAtOnceInTheGpusOrder) {
  std::atomic<int> started{0};
  const auto measure = [&](int g) -> Result<std::vector<Metric>> {
    // Each waits (a while at most) until all three have started: only at once do they all get
    // past it in time.
    ++started;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (started.load() < 3 && std::chrono::steady_clock::now() < until) {
      std::this_thread::yield();
    }
    if (started.load() < 3) return Status::Internal("not at once");
    std::this_thread::sleep_for(std::chrono::milliseconds(10 * (4 - g)));  // GPU 3 ends first
    return std::vector<Metric>{PerGpu("b", "x", g, "", true, {1.0 * g}),
                               PerGpu("b", "y", g, "", true, {2.0 * g})};
  };
  Result<std::vector<Metric>> m = MetricsOfEveryGpu({1, 3, 2}, measure);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  std::vector<std::string> keys;
  for (const Metric& x : *m) keys.push_back(x.key.ToString());
  EXPECT_EQ(keys, (std::vector<std::string>{"b/x:1", "b/y:1", "b/x:3", "b/y:3", "b/x:2", "b/y:2"}));

  const auto fails_on = [](int bad) {
    return [bad](int g) -> Result<std::vector<Metric>> {
      if (g == bad) return Status::Internal("cudaMalloc: cudaErrorIllegalAddress");
      return std::vector<Metric>{};
    };
  };
  const Result<std::vector<Metric>> failed = MetricsOfEveryGpu({0, 1, 2}, fails_on(1));
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().message(), "GPU 1: cudaMalloc: cudaErrorIllegalAddress");
  EXPECT_TRUE(MetricsOfEveryGpu({}, fails_on(0))->empty());
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

TEST(NcclTest, CollectivesAreNamedWithOrWithoutAHyphen) {
  EXPECT_EQ(*ParseCollective("all-reduce"), gpu::Collective::kAllReduce);
  EXPECT_EQ(*ParseCollective("allreduce"), gpu::Collective::kAllReduce);
  EXPECT_EQ(*ParseCollective("all-to-all"), gpu::Collective::kAllToAll);
  EXPECT_EQ(*ParseCollective("reduce-scatter"), gpu::Collective::kReduceScatter);
  EXPECT_EQ(*ParseCollective("allgather"), gpu::Collective::kAllGather);
  EXPECT_EQ(ParseCollective("broadcast").status().message(),
            "\"broadcast\" is not a collective: all-reduce, all-gather, reduce-scatter, "
            "all-to-all");
  EXPECT_FALSE(ParseCollective("").ok());
}

TEST(NcclTest, SizesAreWholeFloatsForEveryRank) {
  EXPECT_EQ(WholeFloatsPerRank(1 << 30, 16), size_t{1} << 30);
  EXPECT_EQ(WholeFloatsPerRank(1000, 24), 960u);  // 10 floats of each of 24 ranks
  EXPECT_EQ(WholeFloatsPerRank(10, 24), 96u);     // one float each at least
  EXPECT_EQ(WholeFloatsPerRank(-1, 2), 8u);
}

TEST(NcclTest, FewerThanTwoGpusIsSkipped) {
  BenchContext ctx;
  ctx.gpus = {0};
  const Status s = MakeNcclBenchmark()->Available(ctx);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);  // no CUDA or GPU here, or one GPU chosen
}

std::vector<std::string> Described(
    const std::vector<std::pair<std::vector<gpu::CopyPath>, std::string_view>>& copies) {
  std::vector<std::string> out;
  for (const auto& [paths, metric] : copies) {
    std::string s(metric);
    for (const gpu::CopyPath& p : paths) s += fmt::format(" {}>{}", p.src, p.dst);
    out.push_back(s);
  }
  return out;
}

// The quick suite's peer copies: every GPU's outgoing and incoming link once, n copies instead
// of n (n - 1) (56 on an 8-GPU node).
TEST(GpuCopyTest, QuickPeerCopiesGoAroundARingOfTheSelectedGpus) {
  EXPECT_EQ(
      Described(PeerCopies({0, 1, 2, 3}, Suite::kQuick)),
      (std::vector<std::string>{"p2p_gbps 0>1", "p2p_gbps 1>2", "p2p_gbps 2>3", "p2p_gbps 3>0"}));
  EXPECT_EQ(Described(PeerCopies({5, 2, 7}, Suite::kQuick)),  // in the order selected
            (std::vector<std::string>{"p2p_gbps 5>2", "p2p_gbps 2>7", "p2p_gbps 7>5"}));
  EXPECT_EQ(Described(PeerCopies({0, 1}, Suite::kQuick)),
            (std::vector<std::string>{"p2p_gbps 0>1", "p2p_gbps 1>0"}));
  EXPECT_TRUE(PeerCopies({4}, Suite::kQuick).empty());
  EXPECT_TRUE(PeerCopies({}, Suite::kFull).empty());
  std::vector<int> eight = {0, 1, 2, 3, 4, 5, 6, 7};
  EXPECT_EQ(PeerCopies(eight, Suite::kQuick).size(), 8u);
}

TEST(GpuCopyTest, FullPeerCopiesTakeEveryOrderedPairAndBothWaysOfEachPair) {
  EXPECT_EQ(Described(PeerCopies({0, 1, 2}, Suite::kFull)),
            (std::vector<std::string>{"p2p_gbps 0>1", "p2p_bidir_gbps 0>1 1>0", "p2p_gbps 0>2",
                                      "p2p_bidir_gbps 0>2 2>0", "p2p_gbps 1>0", "p2p_gbps 1>2",
                                      "p2p_bidir_gbps 1>2 2>1", "p2p_gbps 2>0", "p2p_gbps 2>1"}));
  std::vector<int> eight = {0, 1, 2, 3, 4, 5, 6, 7};
  EXPECT_EQ(PeerCopies(eight, Suite::kFull).size(), 56u + 28u);
}

TEST(GpuMemtestTest, ErrorsAndGibTestedPerGpu) {
  gpu::MemtestRun run;
  run.tested_bytes = uint64_t{72} << 30;
  run.passes = 3;
  std::vector<Metric> m = MemtestMetrics(2, run);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].key.ToString(), "gpu-memtest/errors:2");
  EXPECT_DOUBLE_EQ(m[0].value, 0);  // always there: 0 on a healthy GPU
  EXPECT_EQ(m[0].unit, "");
  EXPECT_FALSE(m[0].higher_is_better);
  EXPECT_EQ(m[1].key.ToString(), "gpu-memtest/tested_gib:2");
  EXPECT_DOUBLE_EQ(m[1].value, 72);
  EXPECT_EQ(m[1].unit, "GiB");
  EXPECT_TRUE(MemtestReport(2, run).empty());  // nothing to warn about

  run.errors = 3;
  run.first = {{0x1000, 0xaaaaaaaaaaaaaaaa, 0xaaaaaaaaaaaaaaab}, {0x2a0008, 0, 0x10}};
  m = MemtestMetrics(2, run);
  EXPECT_DOUBLE_EQ(m[0].value, 3);
  EXPECT_EQ(
      MemtestReport(2, run),
      (std::vector<std::string>{
          "GPU 2: gpu-memtest read 3 words back wrong in 3 passes over 72.0 GiB; the first 2:",
          "GPU 2: byte offset 0x1000: expected 0xaaaaaaaaaaaaaaaa, read 0xaaaaaaaaaaaaaaab "
          "(bits 0x0000000000000001 differ)",
          "GPU 2: byte offset 0x2a0008: expected 0x0000000000000000, read 0x0000000000000010 "
          "(bits 0x0000000000000010 differ)"}));
}

TEST(GpuMemtestTest, TheFractionIsAShareOfFreeMemory) {
  const auto b = MakeGpuMemtestBenchmark();
  EXPECT_EQ(b->name(), "gpu-memtest");
  EXPECT_TRUE(b->in_quick_suite());
  for (const ParamSpec& p : b->params()) {
    if (p.name != "fraction") continue;
    EXPECT_EQ(p.quick_default, "0.1");
    EXPECT_EQ(p.full_default, "0.9");
    EXPECT_EQ(p.kind, ParamKind::kFraction);  // 0 or 1.5 is exit 2 before anything runs
    EXPECT_DOUBLE_EQ(*ParseParamValue(p.kind, "0.25"), 0.25);
    EXPECT_FALSE(ParseParamValue(p.kind, "1.5").ok());
  }
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
