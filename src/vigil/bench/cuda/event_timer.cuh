// Timing work on a GPU with a pair of CUDA events, for the .cu files: the events bracket the work
// on the stream, so what the host does while it runs does not count.
#pragma once

#include <cuda_runtime.h>

#include "vigil/bench/cuda/cuda_check.cuh"
#include "vigil/core/status.h"

namespace vigil::gpu {

// Records `start` on the current device's default stream, calls `enqueue()` (which launches the
// work to time there and returns a Status), records `stop`, waits for it and returns the seconds
// between the two. An error of `enqueue` or of a CUDA call is returned as it is.
// REQUIRES: `start` and `stop` were created on the current device.
template <typename Enqueue>
Result<double> TimeBetweenEvents(cudaEvent_t start, cudaEvent_t stop, Enqueue&& enqueue) {
  VIGIL_CUDA_TRY(cudaEventRecord(start));
  VIGIL_RETURN_IF_ERROR(enqueue());
  VIGIL_CUDA_TRY(cudaEventRecord(stop));
  VIGIL_CUDA_TRY(cudaEventSynchronize(stop));
  float ms = 0;
  VIGIL_CUDA_TRY(cudaEventElapsedTime(&ms, start, stop));
  return ms * 1e-3;
}

}  // namespace vigil::gpu
