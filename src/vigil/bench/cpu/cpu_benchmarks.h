// The host CPU and memory benchmarks. Each factory returns a new, independent instance.
#pragma once

#include <memory>

#include "vigil/bench/benchmark.h"

namespace vigil {

// cpu-stream: STREAM copy, scale, add and triad bandwidth (GB/s) on all cores, and per NUMA node
// when there are several (key index = node).
std::unique_ptr<Benchmark> MakeCpuStreamBenchmark();

// cpu-latency: idle memory latency (ns) by a dependent pointer chase through a random cyclic
// permutation of cache lines in a buffer much larger than the last-level cache.
std::unique_ptr<Benchmark> MakeCpuLatencyBenchmark();

// cpu-flops: fp32 and fp64 fused multiply-add throughput (GFLOP/s) on all cores with the widest
// vector unit the CPU has, chosen at run time.
std::unique_ptr<Benchmark> MakeCpuFlopsBenchmark();

}  // namespace vigil
