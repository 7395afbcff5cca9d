// How CUDA errors read (cuda_check.cuh): the call, the error's name and text; running out of
// memory says so; no driver or no device is Unavailable (a skip), anything else Internal.
// Needs the CUDA runtime's headers and library, not a GPU.
#include "vigil/bench/cuda/cuda_check.cuh"

#include <gtest/gtest.h>

namespace vigil::gpu {
namespace {

TEST(CudaErrorTest, NamesTheCallAndTheError) {
  const Status s = CudaError("cudaMemcpyAsync", cudaErrorIllegalAddress);
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_EQ(s.message().rfind("cudaMemcpyAsync: cudaErrorIllegalAddress (", 0), 0u) << s.message();
}

TEST(CudaErrorTest, OutOfMemorySaysSo) {
  const Status s = CudaError("cudaMalloc(&p, bytes)", cudaErrorMemoryAllocation);
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_EQ(
      s.message().rfind("out of GPU memory: cudaMalloc(&p, bytes): cudaErrorMemoryAllocation", 0),
      0u)
      << s.message();
}

TEST(CudaErrorTest, NoDriverOrDeviceIsUnavailable) {
  EXPECT_EQ(CudaError("cudaGetDeviceCount", cudaErrorNoDevice).code(), StatusCode::kUnavailable);
  EXPECT_EQ(CudaError("cudaGetDeviceCount", cudaErrorInsufficientDriver).code(),
            StatusCode::kUnavailable);
}

Status FailingCall() {
  VIGIL_CUDA_TRY(cudaErrorLaunchFailure);
  return Status::Ok();
}

TEST(CudaErrorTest, TheMacroReturnsTheCallsText) {
  const Status s = FailingCall();
  EXPECT_NE(s.message().find("cudaErrorLaunchFailure: cudaErrorLaunchFailure"), std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace vigil::gpu
