// Runs each host CPU benchmark in-process on tiny sizes: the figures must be positive and finite,
// the keys as documented, and the built-in verification must pass on this machine.
#include "vigil/bench/cpu/cpu_benchmarks.h"

#include <gtest/gtest.h>

#include <cmath>

#include "vigil/bench/runner.h"

namespace vigil {
namespace {

std::vector<Metric> RunTiny(const Benchmark& b, std::map<std::string, std::string> params) {
  RunnerOptions opts;
  opts.params[std::string(b.name())] = std::move(params);
  EXPECT_TRUE(ValidateParams({&b}, opts).ok());
  const BenchContext ctx = MakeContext(b, opts);
  EXPECT_TRUE(b.Available(ctx).ok());
  Result<std::vector<Metric>> m = b.Run(ctx);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? *m : std::vector<Metric>{};
}

void ExpectPositive(const std::vector<Metric>& metrics) {
  for (const Metric& m : metrics) {
    EXPECT_TRUE(std::isfinite(m.value) && m.value > 0) << m.key.ToString() << " = " << m.value;
    for (double s : m.samples) EXPECT_TRUE(std::isfinite(s) && s > 0) << m.key.ToString();
  }
}

TEST(CpuBenchmarksTest, Stream) {
  auto b = MakeCpuStreamBenchmark();
  auto m = RunTiny(*b, {{"array_size", "2M"}, {"repetitions", "2"}});
  ASSERT_GE(m.size(), 4u);
  EXPECT_EQ(m[0].key.ToString(), "cpu-stream/copy_gbps");
  EXPECT_EQ(m[3].key.ToString(), "cpu-stream/triad_gbps");
  EXPECT_EQ(m[0].unit, "GB/s");
  EXPECT_EQ(m[0].samples.size(), 2u);
  ExpectPositive(m);
}

TEST(CpuBenchmarksTest, StreamSingleThread) {
  auto b = MakeCpuStreamBenchmark();
  ExpectPositive(RunTiny(*b, {{"array_size", "1M"}, {"repetitions", "1"}, {"threads", "1"}}));
}

TEST(CpuBenchmarksTest, Latency) {
  auto b = MakeCpuLatencyBenchmark();
  auto m = RunTiny(*b, {{"buffer_size", "4M"}, {"repetitions", "2"}});
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].key.ToString(), "cpu-latency/idle_latency_ns");
  EXPECT_FALSE(m[0].higher_is_better);
  ExpectPositive(m);
}

// Stretches shorter than the chain (65,536 lines), wrapping around it: each must end where the
// cycle's order says.
TEST(CpuBenchmarksTest, LatencyTimesStretchesOfTheChain) {
  auto b = MakeCpuLatencyBenchmark();
  ExpectPositive(RunTiny(*b, {{"buffer_size", "4M"}, {"repetitions", "7"}, {"loads", "10000"}}));
}

TEST(CpuBenchmarksTest, Flops) {
  auto b = MakeCpuFlopsBenchmark();
  auto m = RunTiny(*b, {{"round_time", "0.01"}, {"repetitions", "2"}});
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].key.ToString(), "cpu-flops/fp32_gflops");
  EXPECT_EQ(m[1].key.ToString(), "cpu-flops/fp64_gflops");
  EXPECT_EQ(m[2].key.ToString(), "cpu-flops/vector_bits");
  EXPECT_GE(m[2].value, 128);
  ExpectPositive(m);
}

}  // namespace
}  // namespace vigil
