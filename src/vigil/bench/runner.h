// Runs benchmarks, each isolated in a child process with a time limit, so that a crash or a hang
// in one is recorded as that benchmark's failure while the rest of the suite runs on.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "vigil/bench/benchmark.h"
#include "vigil/core/clock.h"
#include "vigil/results/document.h"

namespace vigil {

struct RunnerOptions {
  Suite suite = Suite::kQuick;
  // Each benchmark gets a private directory "vigil-<name>-XXXXXX" inside it, removed afterwards.
  std::string scratch_root = "/tmp";
  // Parameter values set by the user, by benchmark then parameter name, as typed.
  std::map<std::string, std::map<std::string, std::string>> params;
  // The GPUs the GPU benchmarks measure, by NVML's index; empty: every GPU.
  std::vector<int> gpus;
  // When > 0, replaces every benchmark's own time limit (for tests).
  double time_limit_override_s = 0.0;
};

// Checks that every user-set parameter belongs to one of `benchmarks`, is declared by it and
// parses. InvalidArgument naming the parameter otherwise. Call before anything runs.
Status ValidateParams(const std::vector<const Benchmark*>& benchmarks,
                      const RunnerOptions& options);

// The context `benchmark` runs with: its parameters at their suite defaults unless set.
// REQUIRES: ValidateParams succeeded for a selection that contains `benchmark`.
BenchContext MakeContext(const Benchmark& benchmark, const RunnerOptions& options);

// Progress callbacks, called in the calling thread; either may be empty.
struct RunEvents {
  std::function<void(size_t index, size_t count, const Benchmark& benchmark)> on_start;
  std::function<void(size_t index, size_t count, const BenchmarkRecord& record)> on_finish;
};

// Runs `benchmarks` in order and returns one record for each:
//   - unavailable here: status skipped, the reason in `error`;
//   - Run() returned an error: failed, return code 1, its message;
//   - the child crashed: failed, return code 128 + signal, the signal's name;
//   - over its time limit: killed, failed, return code 124.
// `cancel` is polled at least every 100 ms (a signal handler may set it): the running child is
// killed, its scratch directory removed, and Cancelled returned with no records.
// Not thread-safe: forks, so the calling process should have no other threads running.
Result<std::vector<BenchmarkRecord>> RunBenchmarks(const std::vector<const Benchmark*>& benchmarks,
                                                   const RunnerOptions& options,
                                                   const RunEvents& events,
                                                   const std::atomic<bool>& cancel, Clock& clock);

}  // namespace vigil
