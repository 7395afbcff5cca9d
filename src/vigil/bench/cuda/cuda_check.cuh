// CUDA errors as Vigil statuses, for the .cu files of the GPU benchmarks: every failed call is
// reported with its text, the error's name and where in the source it is, and running out of
// memory says so.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "vigil/core/status.h"

namespace vigil::gpu {

// " at gemm.cu:123": where in Vigil's source a call failed (the file without its directories),
// for the end of an error's message; "" without a file.
inline std::string SourcePlace(const char* file, int line) {
  if (file == nullptr || *file == '\0') return "";
  const std::string path(file);
  return " at " + path.substr(path.find_last_of('/') + 1) + ":" + std::to_string(line);
}

// `file` and `line`: where the call is (__FILE__, __LINE__), said at the end of the message.
inline Status CudaError(const char* call, cudaError_t e, const char* file = "", int line = 0) {
  std::string msg = std::string(call) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) +
                    ")" + SourcePlace(file, line);
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

#define VIGIL_CUDA_TRY(call)                                               \
  do {                                                                     \
    const cudaError_t vigil_e_ = (call);                                   \
    if (vigil_e_ != cudaSuccess) {                                         \
      return ::vigil::gpu::CudaError(#call, vigil_e_, __FILE__, __LINE__); \
    }                                                                      \
  } while (0)
