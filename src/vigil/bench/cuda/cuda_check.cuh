// CUDA errors as Vigil statuses, for the .cu files of the GPU benchmarks: every failed call is
// reported with its text and the error's name, and running out of memory says so.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "vigil/core/status.h"

namespace vigil::gpu {

inline Status CudaError(const char* call, cudaError_t e) {
  std::string msg =
      std::string(call) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
  if (e == cudaErrorMemoryAllocation) msg = "out of GPU memory: " + msg;
  return e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver
             ? Status::Unavailable(std::move(msg))
             : Status::Internal(std::move(msg));
}

// CUDA numbers GPUs fastest first unless told otherwise; NVML and nvidia-smi number them in PCI
// bus order. The same order makes "GPU 3" the same GPU in every figure and in --gpus. Call before
// the first CUDA call of every entry point.
void UsePciBusOrder();

}  // namespace vigil::gpu

#define VIGIL_CUDA_TRY(call)                                                      \
  do {                                                                            \
    const cudaError_t vigil_e_ = (call);                                          \
    if (vigil_e_ != cudaSuccess) return ::vigil::gpu::CudaError(#call, vigil_e_); \
  } while (0)
