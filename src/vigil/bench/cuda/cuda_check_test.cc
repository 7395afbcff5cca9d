// How CUDA errors read (cuda_check.cuh): the call, the error's name and text; running out of
// memory says so; no driver or no device is Unavailable (a skip), anything else Internal.
// Needs the CUDA runtime's headers and library, not a GPU.
#include "vigil/bench/cuda/cuda_check.cuh"

#include <gtest/gtest.h>

#include <string>

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
  // And where the call is, the file without its directories.
  EXPECT_NE(s.message().find(" at cuda_check_test.cc:"), std::string::npos) << s.message();
  const std::string m =
      CudaError("cudaMalloc", cudaErrorLaunchFailure, "/a/b/gemm.cu", 12).message();
  EXPECT_TRUE(m.ends_with(" at gemm.cu:12")) << m;
}

}  // namespace
}  // namespace vigil::gpu
