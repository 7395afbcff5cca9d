// Matrix multiplies with cuBLASLt for gpu-gemm (device.h). cuBLASLt is loaded at run time with
// dlopen, its functions resolved by the types its header declares, so that the vigil binary does
// not need the CUDA toolkit's libraries to start on a node without them.

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>

#include "vigil/bench/cuda/batch_timing.h"
#include "vigil/bench/cuda/cuda_check.cuh"
#include "vigil/bench/cuda/device.h"
#include "vigil/bench/cuda/dynamic_library.h"
#include "vigil/bench/cuda/event_timer.cuh"

namespace vigil::gpu {
namespace {

// The cuBLASLt functions gpu-gemm calls, resolved once per process.
struct Lt {
  decltype(&cublasLtCreate) create = nullptr;
  decltype(&cublasLtDestroy) destroy = nullptr;
  decltype(&cublasLtGetStatusName) status_name = nullptr;
  decltype(&cublasLtMatmulDescCreate) desc_create = nullptr;
  decltype(&cublasLtMatmulDescDestroy) desc_destroy = nullptr;
  decltype(&cublasLtMatmulDescSetAttribute) desc_set = nullptr;
  decltype(&cublasLtMatrixLayoutCreate) layout_create = nullptr;
  decltype(&cublasLtMatrixLayoutDestroy) layout_destroy = nullptr;
  decltype(&cublasLtMatmulPreferenceCreate) pref_create = nullptr;
  decltype(&cublasLtMatmulPreferenceDestroy) pref_destroy = nullptr;
  decltype(&cublasLtMatmulPreferenceSetAttribute) pref_set = nullptr;
  decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic = nullptr;
  decltype(&cublasLtMatmul) matmul = nullptr;
};

Result<const Lt*> LoadLt() {
  static Lt lt;
  // The library of the CUDA major version Vigil was built with ("libcublasLt.so.13").
  static const Status loaded =
      OpenLibrary("libcublasLt.so." + std::to_string(CUDART_VERSION / 1000),
                  "install the CUDA toolkit's cuBLAS", "cuBLASLt", [](void* lib) {
                    return Resolve(lib, lt.create, "cublasLtCreate") &&
                           Resolve(lib, lt.destroy, "cublasLtDestroy") &&
                           Resolve(lib, lt.status_name, "cublasLtGetStatusName") &&
                           Resolve(lib, lt.desc_create, "cublasLtMatmulDescCreate") &&
                           Resolve(lib, lt.desc_destroy, "cublasLtMatmulDescDestroy") &&
                           Resolve(lib, lt.desc_set, "cublasLtMatmulDescSetAttribute") &&
                           Resolve(lib, lt.layout_create, "cublasLtMatrixLayoutCreate") &&
                           Resolve(lib, lt.layout_destroy, "cublasLtMatrixLayoutDestroy") &&
                           Resolve(lib, lt.pref_create, "cublasLtMatmulPreferenceCreate") &&
                           Resolve(lib, lt.pref_destroy, "cublasLtMatmulPreferenceDestroy") &&
                           Resolve(lib, lt.pref_set, "cublasLtMatmulPreferenceSetAttribute") &&
                           Resolve(lib, lt.heuristic, "cublasLtMatmulAlgoGetHeuristic") &&
                           Resolve(lib, lt.matmul, "cublasLtMatmul");
                  });
  if (!loaded.ok()) return loaded;
  return &lt;
}

#define VIGIL_LT_TRY(lt, call)                                                         \
  do {                                                                                 \
    const cublasStatus_t vigil_s_ = (call);                                            \
    if (vigil_s_ != CUBLAS_STATUS_SUCCESS) {                                           \
      return Status::Internal(std::string(#call) + ": " + (lt).status_name(vigil_s_) + \
                              ::vigil::gpu::SourcePlace(__FILE__, __LINE__));          \
    }                                                                                  \
  } while (0)

// What cuBLASLt is told about a type.
struct TypeInfo {
  cudaDataType_t in, out, scale;
  cublasComputeType_t compute;
  size_t in_bytes, out_bytes;
};

// The element types of a product: what A and B hold, what D holds, and what cuBLASLt is told.
template <typename InT, typename OutT, cudaDataType_t kIn, cudaDataType_t kOut,
          cudaDataType_t kScale, cublasComputeType_t kCompute>
struct Elements {
  using In = InT;
  using Out = OutT;
  static constexpr TypeInfo kInfo{kIn, kOut, kScale, kCompute, sizeof(InT), sizeof(OutT)};
};

// Calls `f(Elements<...>{})` with the element types of `type`.
template <typename F>
Status WithElements(GemmType type, F&& f) {
  switch (type) {
    case GemmType::kFp64:
      return f(Elements<double, double, CUDA_R_64F, CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F>{});
    case GemmType::kTf32:  // fp32 data, tensor cores rounding the inputs to tf32
      return f(Elements<float, float, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                        CUBLAS_COMPUTE_32F_FAST_TF32>{});
    case GemmType::kFp16:
      return f(Elements<__half, __half, CUDA_R_16F, CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F>{});
    case GemmType::kBf16:
      return f(Elements<__nv_bfloat16, __nv_bfloat16, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_32F,
                        CUBLAS_COMPUTE_32F>{});
    case GemmType::kFp8:  // e4m3 in, bf16 out (and C), as torch._scaled_mm
      return f(Elements<__nv_fp8_e4m3, __nv_bfloat16, CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_32F,
                        CUBLAS_COMPUTE_32F>{});
  }
  return Status::Internal("unknown GEMM type");
}

TypeInfo InfoOf(GemmType type) {
  TypeInfo info{};
  (void)WithElements(type, [&](auto e) {
    info = decltype(e)::kInfo;
    return Status::Ok();
  });
  return info;
}

// Element conversions of the five storage types.
__device__ __forceinline__ void Store(double* p, float v) { *p = v; }
__device__ __forceinline__ void Store(float* p, float v) { *p = v; }
__device__ __forceinline__ void Store(__half* p, float v) { *p = __float2half_rn(v); }
__device__ __forceinline__ void Store(__nv_bfloat16* p, float v) { *p = __float2bfloat16_rn(v); }
__device__ __forceinline__ void Store(__nv_fp8_e4m3* p, float v) { *p = __nv_fp8_e4m3(v); }
__device__ __forceinline__ double Load(const double* p) { return *p; }
__device__ __forceinline__ double Load(const float* p) { return *p; }
__device__ __forceinline__ double Load(const __half* p) { return __half2float(*p); }
__device__ __forceinline__ double Load(const __nv_bfloat16* p) { return __bfloat162float(*p); }
__device__ __forceinline__ double Load(const __nv_fp8_e4m3* p) { return static_cast<float>(*p); }

// Uniform in [-1, 1) from a hash of the index.
template <typename T>
__global__ void FillRandom(T* p, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    uint32_t h = static_cast<uint32_t>(i) * 2654435761u ^ seed ^ static_cast<uint32_t>(i >> 32);
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    Store(p + i, static_cast<float>(h & 0xffffffu) * (1.0f / 8388608.0f) - 1.0f);
  }
}

constexpr int kCheckTile = 16;

// The error of each element of D = A^T B (A: k x n, B: k x n, D: n x n, column-major) against an
// fp64 dot product of the same inputs, relative to the sum of |a| |b|; the largest is kept as the
// bits of a non-negative double, which order as the doubles do. Each block computes a tile of D
// from tiles of A and B staged in shared memory, read along k so that the loads coalesce.
template <typename In, typename Out>
__global__ void CheckProduct(const In* a, const In* b, const Out* d, int n,
                             unsigned long long* max_bits) {
  __shared__ double as[kCheckTile][kCheckTile + 1], bs[kCheckTile][kCheckTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int i0 = blockIdx.x * kCheckTile, j0 = blockIdx.y * kCheckTile;
  double sum = 0, magnitude = 0;
  for (int l0 = 0; l0 < n; l0 += kCheckTile) {
    const int l = l0 + tx;  // threads along x read consecutive elements of a column
    const bool in_k = l < n;
    as[ty][tx] = in_k && i0 + ty < n ? Load(a + l + size_t{static_cast<unsigned>(i0 + ty)} * n) : 0;
    bs[ty][tx] = in_k && j0 + ty < n ? Load(b + l + size_t{static_cast<unsigned>(j0 + ty)} * n) : 0;
    __syncthreads();
    for (int k = 0; k < kCheckTile; ++k) {
      const double p = as[tx][k] * bs[ty][k];
      sum += p;
      magnitude += fabs(p);
    }
    __syncthreads();
  }
  const int i = i0 + tx, j = j0 + ty;
  double err = 0;
  if (i < n && j < n) {
    const double got = Load(d + i + size_t{static_cast<unsigned>(j)} * n);
    err = fabs(got - sum) / (magnitude > 0 ? magnitude : 1.0);
    if (!(err <= 1e300)) err = 1e300;  // NaN or infinity: as wrong as it gets
  }
  auto bits = static_cast<unsigned long long>(__double_as_longlong(err));
  for (int offset = 16; offset > 0; offset /= 2) {
    bits = max(bits, __shfl_down_sync(0xffffffffu, bits, offset));
  }
  if ((threadIdx.x + threadIdx.y * blockDim.x) % 32 == 0) atomicMax(max_bits, bits);
}

// Adds to `bad[slot]` the number of 32-bit words where `d` differs from `ref`.
__global__ void CompareWords(const uint32_t* d, const uint32_t* ref, size_t words,
                             unsigned long long* bad, int slot) {
  unsigned long long n = 0;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < words;
       i += size_t{gridDim.x} * blockDim.x) {
    n += d[i] != ref[i];
  }
  if (n != 0) atomicAdd(bad + slot, n);
}

// One GEMM problem on the current device: matrices, descriptors and the chosen algorithm.
class Problem {
 public:
  Problem() = default;
  Problem(const Problem&) = delete;
  Problem& operator=(const Problem&) = delete;
  ~Problem() {
    if (pref_) lt_->pref_destroy(pref_);
    for (cublasLtMatrixLayout_t l : {a_desc_, b_desc_, d_desc_}) {
      if (l) lt_->layout_destroy(l);
    }
    if (op_) lt_->desc_destroy(op_);
    if (handle_) lt_->destroy(handle_);
    for (void* p : {a_, b_, d_, workspace_}) cudaFree(p);
    if (start_) cudaEventDestroy(start_);
    if (stop_) cudaEventDestroy(stop_);
  }

  // Loads cuBLASLt, makes `device` current and sets up a product of `type` at `n` on it.
  Status Init(int device, GemmType type, int n) {
    UsePciBusOrder();
    VIGIL_ASSIGN_OR_RETURN(lt_, LoadLt());
    VIGIL_CUDA_TRY(cudaSetDevice(device));
    type_ = type;
    n_ = n;
    const TypeInfo t = InfoOf(type);
    const size_t elements = size_t{static_cast<unsigned>(n)} * static_cast<unsigned>(n);
    VIGIL_CUDA_TRY(cudaMalloc(&a_, elements * t.in_bytes));
    VIGIL_CUDA_TRY(cudaMalloc(&b_, elements * t.in_bytes));
    VIGIL_CUDA_TRY(cudaMalloc(&d_, elements * t.out_bytes));
    VIGIL_CUDA_TRY(cudaMalloc(&workspace_, kWorkspace));
    VIGIL_CUDA_TRY(cudaEventCreate(&start_));
    VIGIL_CUDA_TRY(cudaEventCreate(&stop_));
    VIGIL_RETURN_IF_ERROR(Fill(a_, elements, 0x243f6a88u));
    VIGIL_RETURN_IF_ERROR(Fill(b_, elements, 0x85a308d3u));

    VIGIL_LT_TRY(*lt_, lt_->create(&handle_));
    VIGIL_LT_TRY(*lt_, lt_->desc_create(&op_, t.compute, t.scale));
    // D = A^T B: the layout every type supports, fp8 included.
    const cublasOperation_t transpose = CUBLAS_OP_T, none = CUBLAS_OP_N;
    VIGIL_LT_TRY(*lt_,
                 lt_->desc_set(op_, CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof transpose));
    VIGIL_LT_TRY(*lt_, lt_->desc_set(op_, CUBLASLT_MATMUL_DESC_TRANSB, &none, sizeof none));
    VIGIL_LT_TRY(*lt_, lt_->layout_create(&a_desc_, t.in, n, n, n));
    VIGIL_LT_TRY(*lt_, lt_->layout_create(&b_desc_, t.in, n, n, n));
    VIGIL_LT_TRY(*lt_, lt_->layout_create(&d_desc_, t.out, n, n, n));
    VIGIL_LT_TRY(*lt_, lt_->pref_create(&pref_));
    const size_t workspace = kWorkspace;
    VIGIL_LT_TRY(*lt_, lt_->pref_set(pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                     sizeof workspace));
    int found = 0;
    VIGIL_LT_TRY(*lt_, lt_->heuristic(handle_, op_, a_desc_, b_desc_, d_desc_, d_desc_, pref_, 1,
                                      &algo_, &found));
    if (found == 0) return Status::Internal("cuBLASLt has no algorithm for this product");
    return Status::Ok();
  }

  // One product, D = A^T B, on the default stream.
  Status Run() {
    const double alpha64 = 1, beta64 = 0;
    const float alpha32 = 1, beta32 = 0;
    const bool fp64 = type_ == GemmType::kFp64;
    const void* alpha = fp64 ? static_cast<const void*>(&alpha64) : &alpha32;
    const void* beta = fp64 ? static_cast<const void*>(&beta64) : &beta32;
    VIGIL_LT_TRY(*lt_, lt_->matmul(handle_, op_, alpha, a_, a_desc_, b_, b_desc_, beta, d_, d_desc_,
                                   d_, d_desc_, &algo_.algo, workspace_, kWorkspace, nullptr));
    return Status::Ok();
  }

  // `ops` products back to back between one pair of events: their seconds together.
  Result<double> TimeBatch(int ops) {
    return TimeBetweenEvents(start_, stop_, [&]() -> Status {
      for (int i = 0; i < ops; ++i) VIGIL_RETURN_IF_ERROR(Run());
      return Status::Ok();
    });
  }

  void* output() const { return d_; }
  size_t output_bytes() const {
    return size_t{static_cast<unsigned>(n_)} * static_cast<unsigned>(n_) * InfoOf(type_).out_bytes;
  }

  Result<double> MaxError() {
    unsigned long long* bits = nullptr;
    VIGIL_CUDA_TRY(cudaMalloc(&bits, sizeof *bits));
    const Status s = CheckInto(bits);
    unsigned long long host = 0;
    const cudaError_t copied = cudaMemcpy(&host, bits, sizeof host, cudaMemcpyDeviceToHost);
    cudaFree(bits);
    VIGIL_RETURN_IF_ERROR(s);
    if (copied != cudaSuccess) return CudaError("cudaMemcpy", copied, __FILE__, __LINE__);
    double err = 0;
    static_assert(sizeof err == sizeof host);
    memcpy(&err, &host, sizeof err);
    return err;
  }

 private:
  static constexpr size_t kWorkspace = 32u << 20;  // what cuBLASLt's Hopper kernels ask for

  Status Fill(void* p, size_t n, uint32_t seed) {
    return WithElements(type_, [&](auto e) -> Status {
      FillRandom<<<1024, 256>>>(static_cast<typename decltype(e)::In*>(p), n, seed);
      VIGIL_CUDA_TRY(cudaGetLastError());
      return Status::Ok();
    });
  }

  Status CheckInto(unsigned long long* bits) {
    VIGIL_CUDA_TRY(cudaMemset(bits, 0, sizeof *bits));
    return WithElements(type_, [&](auto e) -> Status {
      using E = decltype(e);
      const unsigned tiles = (static_cast<unsigned>(n_) + kCheckTile - 1) / kCheckTile;
      CheckProduct<<<dim3(tiles, tiles), dim3(kCheckTile, kCheckTile)>>>(
          static_cast<const typename E::In*>(a_), static_cast<const typename E::In*>(b_),
          static_cast<const typename E::Out*>(d_), n_, bits);
      VIGIL_CUDA_TRY(cudaGetLastError());
      VIGIL_CUDA_TRY(cudaDeviceSynchronize());
      return Status::Ok();
    });
  }

  const Lt* lt_ = nullptr;
  GemmType type_ = GemmType::kFp64;
  int n_ = 0;
  void *a_ = nullptr, *b_ = nullptr, *d_ = nullptr, *workspace_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_desc_ = nullptr, b_desc_ = nullptr, d_desc_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
  cublasLtMatmulHeuristicResult_t algo_{};
};

}  // namespace

Result<std::vector<double>> TimeGemm(int device, GemmType type, int size, int reps,
                                     double warmup_s) {
  Problem p;
  VIGIL_RETURN_IF_ERROR(p.Init(device, type, size));
  BatchTiming timing;
  timing.warmup_s = warmup_s;
  return TimePerOp(
      reps, [&](int ops) { return p.TimeBatch(ops); }, timing);
}

Result<double> GemmError(int device, GemmType type, int size) {
  Problem p;
  VIGIL_RETURN_IF_ERROR(p.Init(device, type, size));
  VIGIL_RETURN_IF_ERROR(p.Run());
  return p.MaxError();
}

Result<StressRun> Stress(int device, GemmType type, int size, double seconds) {
  Problem p;
  VIGIL_RETURN_IF_ERROR(p.Init(device, type, size));
  VIGIL_RETURN_IF_ERROR(p.Run());
  // The first result is the reference; a healthy GPU repeats it bit for bit (cuBLASLt's
  // algorithm and the inputs stay the same).
  constexpr int kBatch = 8;
  struct Scratch {
    void* ref = nullptr;
    unsigned long long* bad = nullptr;
    cudaEvent_t ev[2 * kBatch] = {};
    ~Scratch() {
      cudaFree(ref);
      cudaFree(bad);
      for (cudaEvent_t e : ev) {
        if (e) cudaEventDestroy(e);
      }
    }
  } s;
  const size_t bytes = p.output_bytes();
  VIGIL_CUDA_TRY(cudaMalloc(&s.ref, bytes));
  VIGIL_CUDA_TRY(cudaMemcpy(s.ref, p.output(), bytes, cudaMemcpyDeviceToDevice));
  VIGIL_CUDA_TRY(cudaMalloc(&s.bad, kBatch * sizeof(unsigned long long)));
  for (cudaEvent_t& e : s.ev) VIGIL_CUDA_TRY(cudaEventCreate(&e));
  StressRun out;
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  do {
    VIGIL_CUDA_TRY(cudaMemset(s.bad, 0, kBatch * sizeof(unsigned long long)));
    for (int i = 0; i < kBatch; ++i) {
      VIGIL_CUDA_TRY(cudaEventRecord(s.ev[2 * i]));
      VIGIL_RETURN_IF_ERROR(p.Run());
      VIGIL_CUDA_TRY(cudaEventRecord(s.ev[2 * i + 1]));
      CompareWords<<<1024, 256>>>(static_cast<const uint32_t*>(p.output()),
                                  static_cast<const uint32_t*>(s.ref), bytes / 4, s.bad, i);
      VIGIL_CUDA_TRY(cudaGetLastError());
    }
    unsigned long long bad[kBatch] = {};
    VIGIL_CUDA_TRY(cudaMemcpy(bad, s.bad, sizeof bad, cudaMemcpyDeviceToHost));
    for (int i = 0; i < kBatch; ++i) {
      float ms = 0;
      VIGIL_CUDA_TRY(cudaEventElapsedTime(&ms, s.ev[2 * i], s.ev[2 * i + 1]));
      out.seconds.push_back(ms * 1e-3);
      out.miscompares += bad[i] != 0;
    }
  } while (std::chrono::steady_clock::now() < end);
  return out;
}

}  // namespace vigil::gpu
