// The GPU benchmarks. gpu-health needs only the driver's NVML, loaded at run time, so it is built
// into every Vigil; on a node without an NVIDIA driver it is skipped with the reason.
#pragma once

#include <memory>
#include <vector>

#include "vigil/bench/benchmark.h"
#include "vigil/bench/cuda/nvml.h"

namespace vigil {

// gpu-health: per GPU, from NVML: ECC error counts (volatile and aggregate), remapped rows and
// whether a remap is pending or failed (retired pages before A100), PCIe link generation and
// width, current and maximum, power, temperature, and the throttle reasons that signal trouble.
std::unique_ptr<Benchmark> MakeGpuHealthBenchmark();

// The metrics of one reading of GPU `index`, keyed "gpu-health/<metric>:<index>"; what the GPU
// does not report is absent.
std::vector<Metric> GpuHealthMetrics(int index, const nvml::HealthReading& reading);

}  // namespace vigil
