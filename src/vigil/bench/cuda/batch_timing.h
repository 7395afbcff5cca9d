// How the GPU benchmarks time an operation (a GEMM, a bandwidth kernel, a collective), as
// nccl-tests and nvbench do: warm up for a while, then time back-to-back batches of the operation
// between one pair of marks, so that the host's launch overhead and the marks' resolution vanish
// in the batch. Plain C++17 with no CUDA: the .cu files call it with their own batch timers, and
// the tests with fakes.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "vigil/core/status.h"

namespace vigil::gpu {

struct BatchTiming {
  // Seconds the operation is repeated before timing: clocks ramp up, caches and TLBs fill,
  // libraries pick and load their kernels.
  double warmup_s = 0.2;
  // Runs of the operation in the warm-up at least, however long one takes.
  int warmup_ops = 2;
  // What one timed sample should last: long enough that a batch's launch gaps and the events'
  // 0.5 us resolution are noise, short enough that many samples fit in a run.
  double sample_s = 0.03;
  // Operations per batch at most: a near-empty operation must not make batches without end.
  int max_ops = 1 << 20;
};

// The operations per timed batch for an operation of `seconds_per_op`: what lasts about
// `t.sample_s`, at least 1, at most `t.max_ops` (also when `seconds_per_op` is not positive:
// faster than the timer can tell).
inline int OpsPerBatch(double seconds_per_op, const BatchTiming& t = {}) {
  if (!(seconds_per_op > 0)) return t.max_ops;
  const double ops = std::floor(t.sample_s / seconds_per_op + 0.5);
  return static_cast<int>(std::clamp(ops, 1.0, static_cast<double>(t.max_ops)));
}

// Times `samples` batches of an operation and returns the seconds per operation of each.
// `time_batch(n)` runs the operation n times back to back and returns the seconds the n took
// (Result<double>); its errors are returned as they are. The warm-up runs batches that double in
// size (1, 2, 4... operations, never longer than a sample) until `t.warmup_s` seconds and
// `t.warmup_ops` operations have passed; its last, warmest batch sizes the timed ones.
// REQUIRES: samples >= 1.
template <typename TimeBatch>
Result<std::vector<double>> TimePerOp(int samples, TimeBatch&& time_batch,
                                      const BatchTiming& t = {}) {
  double warm_s = 0;
  int warm_ops = 0, batch = 1;
  double per_op = 0;
  while (warm_s < t.warmup_s || warm_ops < t.warmup_ops) {
    VIGIL_ASSIGN_OR_RETURN(const double s, time_batch(batch));
    warm_s += s;
    warm_ops += batch;
    per_op = s / batch;
    batch = std::max(1, std::min(2 * batch, OpsPerBatch(per_op, t)));
  }
  const int ops = OpsPerBatch(per_op, t);
  std::vector<double> out;
  out.reserve(static_cast<size_t>(samples));
  for (int i = 0; i < samples; ++i) {
    VIGIL_ASSIGN_OR_RETURN(const double s, time_batch(ops));
    out.push_back(s / ops);
  }
  return out;
}

}  // namespace vigil::gpu
