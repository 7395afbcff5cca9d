#include "vigil/bench/registry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "vigil/bench/cpu/cpu_benchmarks.h"
#include "vigil/bench/cuda/gpu_benchmarks.h"
#include "vigil/bench/disk/disk_benchmark.h"
#include "vigil/bench/host/host_health.h"
#include "vigil/core/text.h"

namespace vigil {

void Registry::Add(std::unique_ptr<Benchmark> benchmark) {
  benchmarks_.push_back(std::move(benchmark));
}

const Benchmark* Registry::Find(std::string_view name) const {
  for (const auto& b : benchmarks_) {
    if (b->name() == name) return b.get();
  }
  return nullptr;
}

std::vector<const Benchmark*> Registry::All() const {
  std::vector<const Benchmark*> out;
  for (const auto& b : benchmarks_) out.push_back(b.get());
  return out;
}

Result<std::vector<const Benchmark*>> Registry::Select(
    Suite suite, const std::vector<std::string>& names) const {
  std::vector<const Benchmark*> out;
  if (names.empty()) {
    for (const auto& b : benchmarks_) {
      const bool in = suite == Suite::kFull || (suite == Suite::kQuick && b->in_quick_suite()) ||
                      (suite == Suite::kHealth && b->in_health_suite());
      if (in) out.push_back(b.get());
    }
    return out;
  }
  for (const std::string& n : names) {
    if (Find(n) == nullptr) {
      std::vector<std::string_view> valid;
      for (const auto& b : benchmarks_) valid.push_back(b->name());
      return Status::InvalidArgument(
          fmt::format("unknown benchmark {}; valid names: {}", Quote(n), fmt::join(valid, ", ")));
    }
  }
  for (const auto& b : benchmarks_) {
    if (std::find(names.begin(), names.end(), b->name()) != names.end()) out.push_back(b.get());
  }
  return out;
}

Registry BuiltinRegistry() {
  Registry r;
  r.Add(MakeCpuStreamBenchmark());
  r.Add(MakeCpuLatencyBenchmark());
  r.Add(MakeCpuFlopsBenchmark());
  r.Add(MakeDiskBenchmark());
  r.Add(MakeHostHealthBenchmark());
  r.Add(MakeGpuHealthBenchmark());
  r.Add(MakeGpuGemmBenchmark());
  r.Add(MakeGpuStressBenchmark());
  r.Add(MakeGpuMembwBenchmark());
  r.Add(MakeGpuMemtestBenchmark());
  r.Add(MakeGpuLaunchBenchmark());
  r.Add(MakeGpuCopyBenchmark());
  r.Add(MakeNcclBenchmark());
  return r;
}

}  // namespace vigil
