// The GPU device API on the CUDA runtime (device.h). Kernels use 16-byte accesses (float4) in
// grid-stride loops; data is a hash of the index, never zero, so that a dropped write shows.

#include <cuda_runtime.h>

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "vigil/bench/cuda/batch_timing.h"
#include "vigil/bench/cuda/cuda_check.cuh"
#include "vigil/bench/cuda/device.h"
#include "vigil/bench/cuda/event_timer.cuh"

namespace vigil::gpu {
namespace {

// Frees on scope exit whatever it holds.
struct DeviceBuffers {
  float4* p[3] = {nullptr, nullptr, nullptr};
  unsigned long long* mismatches = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  ~DeviceBuffers() {
    for (float4* q : p) cudaFree(q);
    cudaFree(mismatches);
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
  }
};

// A value in [1, 2) from the index: never zero, different for neighbours.
__device__ __forceinline__ float ValueOf(uint64_t i, uint32_t seed) {
  uint32_t h = static_cast<uint32_t>(i) * 2654435761u ^ seed;
  h ^= h >> 15;
  h *= 2246822519u;
  h ^= h >> 13;
  return 1.0f + static_cast<float>(h & 0xffffu) * (1.0f / 65536.0f);
}

__device__ __forceinline__ float4 Float4Of(size_t i, uint32_t seed) {
  return make_float4(ValueOf(4 * i, seed), ValueOf(4 * i + 1, seed), ValueOf(4 * i + 2, seed),
                     ValueOf(4 * i + 3, seed));
}

constexpr float kScale = 3.0f;
constexpr uint32_t kSeedA = 0x9e3779b9u, kSeedB = 0x85ebca6bu;

__global__ void FillKernel(float4* a, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    a[i] = Float4Of(i, seed);
  }
}

__device__ __forceinline__ float4 Triad(float4 a, float4 b) {
  return make_float4(__fadd_rn(a.x, __fmul_rn(kScale, b.x)), __fadd_rn(a.y, __fmul_rn(kScale, b.y)),
                     __fadd_rn(a.z, __fmul_rn(kScale, b.z)),
                     __fadd_rn(a.w, __fmul_rn(kScale, b.w)));
}

// Accesses in flight per thread: each thread loads this many float4 (a grid's width apart)
// before it stores any, so that enough bytes are in flight to cover HBM's latency.
constexpr int kUnroll = 4;

// out[i] = a[i] (copy) or a[i] + kScale * b[i] (triad, b non-null) over n float4.
template <bool kTriad>
__global__ void StreamKernel(const float4* __restrict__ a, const float4* __restrict__ b,
                             float4* __restrict__ out, size_t n) {
  const size_t stride = size_t{gridDim.x} * blockDim.x;
  for (size_t base = blockIdx.x * size_t{blockDim.x} + threadIdx.x; base < n;
       base += stride * kUnroll) {
    float4 x[kUnroll], y[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const size_t i = base + u * stride;
      if (i < n) {
        x[u] = a[i];
        if (kTriad) y[u] = b[i];
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const size_t i = base + u * stride;
      if (i < n) out[i] = kTriad ? Triad(x[u], y[u]) : x[u];
    }
  }
}

// Counts the elements of `out` that differ from what the kernel must have written (exactly: the
// triad rounds each operation explicitly, so no contraction can change the answer).
__global__ void CheckKernel(const float4* __restrict__ out, size_t n, bool triad,
                            unsigned long long* mismatches) {
  unsigned long long bad = 0;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    const float4 want =
        triad ? Triad(Float4Of(i, kSeedA), Float4Of(i, kSeedB)) : Float4Of(i, kSeedA);
    const float4 got = out[i];
    bad += (got.x != want.x) + (got.y != want.y) + (got.z != want.z) + (got.w != want.w);
  }
  if (bad != 0) atomicAdd(mismatches, bad);
}

__global__ void EmptyKernel() {}

// The copy benchmarks' data: one 32-bit word per index, never zero, the same on host and GPU.
__host__ __device__ inline uint32_t WordOf(size_t i, uint32_t seed) {
  uint32_t h = static_cast<uint32_t>(i) * 2654435761u ^ seed;
  h ^= h >> 16;
  h *= 2246822519u;
  h ^= h >> 13;
  return h | 1u;
}

__global__ void FillWords(uint32_t* p, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    p[i] = WordOf(i, seed);
  }
}

__global__ void CheckWords(const uint32_t* p, size_t n, uint32_t seed,
                           unsigned long long* mismatches) {
  unsigned long long bad = 0;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    bad += p[i] != WordOf(i, seed);
  }
  if (bad != 0) atomicAdd(mismatches, bad);
}

constexpr uint32_t kSeedCopy = 0xc2b2ae35u;

// Memory on `where` (a GPU, or pinned host memory for kHost), freed on scope exit.
class CopyBuffer {
 public:
  CopyBuffer() = default;
  CopyBuffer(const CopyBuffer&) = delete;
  CopyBuffer& operator=(const CopyBuffer&) = delete;
  ~CopyBuffer() {
    if (p_ == nullptr) return;
    if (where_ == kHost) {
      cudaFreeHost(p_);
    } else {
      cudaSetDevice(where_);
      cudaFree(p_);
    }
  }

  Status Allocate(int where, size_t words) {
    where_ = where;
    if (where == kHost) {
      VIGIL_CUDA_TRY(cudaHostAlloc(&p_, words * sizeof(uint32_t), cudaHostAllocDefault));
    } else {
      VIGIL_CUDA_TRY(cudaSetDevice(where));
      VIGIL_CUDA_TRY(cudaMalloc(&p_, words * sizeof(uint32_t)));
    }
    return Status::Ok();
  }

  uint32_t* get() const { return p_; }

 private:
  int where_ = kHost;
  uint32_t* p_ = nullptr;
};

// One path of a copy benchmark: its two buffers, and the stream and events of the GPU that
// drives the copy (the source, unless that is the host).
struct PathState {
  CopyPath path;
  int device = 0;
  uint32_t seed = 0;
  CopyBuffer src, dst;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, done = nullptr;
  ~PathState() {
    cudaSetDevice(device);
    if (stream) cudaStreamDestroy(stream);
    if (start) cudaEventDestroy(start);
    if (done) cudaEventDestroy(done);
  }
};

std::string Describe(const CopyPath& p) {
  const auto end = [](int where) {
    return where == kHost ? std::string("host") : "GPU " + std::to_string(where);
  };
  return end(p.src) + " to " + end(p.dst);
}

// Allocates and fills `s`'s buffers: the source with its words, the destination with zeros. Host
// memory is first touched here, by the calling thread.
Status Prepare(PathState& s, size_t words) {
  const CopyPath& p = s.path;
  s.device = p.src != kHost ? p.src : p.dst;
  if (s.device == kHost) return Status::InvalidArgument("a copy from the host to the host");
  VIGIL_RETURN_IF_ERROR(s.src.Allocate(p.src, words));
  VIGIL_RETURN_IF_ERROR(s.dst.Allocate(p.dst, words));
  if (p.src == kHost) {
    for (size_t i = 0; i < words; ++i) s.src.get()[i] = WordOf(i, s.seed);
  } else {
    VIGIL_CUDA_TRY(cudaSetDevice(p.src));
    FillWords<<<256, 256>>>(s.src.get(), words, s.seed);
    VIGIL_CUDA_TRY(cudaGetLastError());
    VIGIL_CUDA_TRY(cudaDeviceSynchronize());
  }
  if (p.dst == kHost) {
    std::fill(s.dst.get(), s.dst.get() + words, 0u);
  } else {
    VIGIL_CUDA_TRY(cudaSetDevice(p.dst));
    VIGIL_CUDA_TRY(cudaMemset(s.dst.get(), 0, words * sizeof(uint32_t)));
  }
  VIGIL_CUDA_TRY(cudaSetDevice(s.device));
  if (p.src != kHost && p.dst != kHost) {
    const cudaError_t peer = cudaDeviceEnablePeerAccess(p.dst, 0);
    if (peer != cudaSuccess && peer != cudaErrorPeerAccessAlreadyEnabled) {
      return CudaError("cudaDeviceEnablePeerAccess", peer, __FILE__, __LINE__);
    }
    cudaGetLastError();  // clears "already enabled"
  }
  VIGIL_CUDA_TRY(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
  VIGIL_CUDA_TRY(cudaEventCreate(&s.start));
  VIGIL_CUDA_TRY(cudaEventCreate(&s.done));
  return Status::Ok();
}

// Counts the words of `s`'s destination that differ from its source's; Internal naming the path
// when any is wrong.
Status CheckArrived(const PathState& s, size_t words) {
  unsigned long long bad = 0;
  if (s.path.dst == kHost) {
    for (size_t i = 0; i < words; ++i) bad += s.dst.get()[i] != WordOf(i, s.seed);
  } else {
    int sms = 0;
    VIGIL_CUDA_TRY(cudaSetDevice(s.path.dst));
    VIGIL_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, s.path.dst));
    unsigned long long* counter = nullptr;
    VIGIL_CUDA_TRY(cudaMalloc(&counter, sizeof *counter));
    cudaError_t e = cudaMemset(counter, 0, sizeof *counter);
    if (e == cudaSuccess) {
      CheckWords<<<sms * 8, 256>>>(s.dst.get(), words, s.seed, counter);
      e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaMemcpy(&bad, counter, sizeof bad, cudaMemcpyDeviceToHost);
    cudaFree(counter);
    if (e != cudaSuccess) return CudaError("checking a copy", e, __FILE__, __LINE__);
  }
  if (bad == 0) return Status::Ok();
  return Status::Internal(std::to_string(bad) + " of " + std::to_string(words) +
                          " words arrived wrong (" + Describe(s.path) + ")");
}

}  // namespace

void UsePciBusOrder() {
  static const bool once = setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1) == 0;
  (void)once;
}

bool BuiltWithCuda() { return true; }

Result<int> DeviceCount() {
  UsePciBusOrder();
  int n = 0;
  VIGIL_CUDA_TRY(cudaGetDeviceCount(&n));
  return n;
}

Result<DeviceProps> Props(int device) {
  UsePciBusOrder();
  cudaDeviceProp p{};
  VIGIL_CUDA_TRY(cudaGetDeviceProperties(&p, device));
  VIGIL_CUDA_TRY(cudaSetDevice(device));
  DeviceProps out;
  out.name = p.name;
  out.cc_major = p.major;
  out.cc_minor = p.minor;
  out.l2_bytes = static_cast<size_t>(p.l2CacheSize);
  out.sms = p.multiProcessorCount;
  VIGIL_CUDA_TRY(cudaMemGetInfo(&out.free_bytes, &out.total_bytes));
  char bus[32] = {};
  VIGIL_CUDA_TRY(cudaDeviceGetPCIBusId(bus, sizeof bus, device));
  out.pci_bus_id = bus;
  return out;
}

Result<std::vector<double>> TimeMembw(int device, MembwKernel kernel, size_t bytes_per_array,
                                      int reps) {
  UsePciBusOrder();
  VIGIL_CUDA_TRY(cudaSetDevice(device));
  int sms = 0;
  VIGIL_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const size_t n = bytes_per_array / sizeof(float4);
  const bool triad = kernel == MembwKernel::kTriad;
  DeviceBuffers d;
  for (int i = 0; i < (triad ? 3 : 2); ++i) {
    VIGIL_CUDA_TRY(cudaMalloc(&d.p[i], n * sizeof(float4)));
  }
  VIGIL_CUDA_TRY(cudaMalloc(&d.mismatches, sizeof(unsigned long long)));
  VIGIL_CUDA_TRY(cudaMemset(d.mismatches, 0, sizeof(unsigned long long)));
  VIGIL_CUDA_TRY(cudaEventCreate(&d.start));
  VIGIL_CUDA_TRY(cudaEventCreate(&d.stop));
  constexpr int kThreads = 256;
  const int blocks = sms * 8;
  // The timed kernel's grid is as many blocks as fit on the GPU at once: a grid-stride loop over
  // a second, partial wave of blocks would leave SMs idle at its end.
  auto* const timed = triad ? StreamKernel<true> : StreamKernel<false>;
  int resident = 0;
  VIGIL_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, timed, kThreads, 0));
  const int timed_blocks = sms * std::max(1, resident);
  FillKernel<<<blocks, kThreads>>>(d.p[0], n, kSeedA);
  if (triad) FillKernel<<<blocks, kThreads>>>(d.p[1], n, kSeedB);
  VIGIL_CUDA_TRY(cudaGetLastError());
  float4* out = triad ? d.p[2] : d.p[1];
  const auto time_batch = [&](int ops) {
    return TimeBetweenEvents(d.start, d.stop, [&]() -> Status {
      for (int i = 0; i < ops; ++i) {
        timed<<<timed_blocks, kThreads>>>(d.p[0], triad ? d.p[1] : nullptr, out, n);
      }
      VIGIL_CUDA_TRY(cudaGetLastError());
      return Status::Ok();
    });
  };
  VIGIL_ASSIGN_OR_RETURN(std::vector<double> seconds, TimePerOp(reps, time_batch));
  CheckKernel<<<blocks, kThreads>>>(out, n, triad, d.mismatches);
  VIGIL_CUDA_TRY(cudaGetLastError());
  unsigned long long bad = 0;
  VIGIL_CUDA_TRY(cudaMemcpy(&bad, d.mismatches, sizeof bad, cudaMemcpyDeviceToHost));
  if (bad != 0) {
    return Status::Internal(std::to_string(bad) + " of " + std::to_string(4 * n) +
                            " values written wrong (GPU " + std::to_string(device) + ")");
  }
  return seconds;
}

Result<LaunchTimes> TimeLaunch(int device, int reps, int batch) {
  UsePciBusOrder();
  VIGIL_CUDA_TRY(cudaSetDevice(device));
  DeviceBuffers d;
  VIGIL_CUDA_TRY(cudaEventCreate(&d.start));
  VIGIL_CUDA_TRY(cudaEventCreate(&d.stop));
  LaunchTimes out;
  for (int r = -1; r < reps; ++r) {  // run -1 warms up
    VIGIL_ASSIGN_OR_RETURN(const double batch_s,
                           TimeBetweenEvents(d.start, d.stop, [&]() -> Status {
                             for (int k = 0; k < batch; ++k) EmptyKernel<<<1, 1>>>();
                             VIGIL_CUDA_TRY(cudaGetLastError());
                             return Status::Ok();
                           }));
    const auto t0 = std::chrono::steady_clock::now();
    EmptyKernel<<<1, 1>>>();
    VIGIL_CUDA_TRY(cudaGetLastError());
    VIGIL_CUDA_TRY(cudaDeviceSynchronize());
    const std::chrono::duration<double, std::micro> rt = std::chrono::steady_clock::now() - t0;
    if (r < 0) continue;
    out.device_us.push_back(batch_s * 1e6 / batch);
    out.round_trip_us.push_back(rt.count());
  }
  return out;
}

Result<bool> CanAccessPeer(int src, int dst) {
  UsePciBusOrder();
  int can = 0;
  VIGIL_CUDA_TRY(cudaDeviceCanAccessPeer(&can, src, dst));
  return can != 0;
}

Result<std::vector<double>> TimeCopies(const std::vector<CopyPath>& paths, size_t bytes, int reps) {
  UsePciBusOrder();
  if (paths.empty()) return Status::InvalidArgument("no copy to time");
  const size_t words = bytes / sizeof(uint32_t);
  std::vector<std::unique_ptr<PathState>> state;
  for (const CopyPath& p : paths) {
    state.push_back(std::make_unique<PathState>());
    state.back()->path = p;
    state.back()->seed = kSeedCopy + static_cast<uint32_t>(state.size());  // one per path
    VIGIL_RETURN_IF_ERROR(Prepare(*state.back(), words));
  }
  // The first path's stream starts every run and ends it once the others have finished.
  PathState& first = *state.front();
  std::vector<double> seconds;
  for (int r = -1; r < reps; ++r) {  // run -1 warms up
    VIGIL_CUDA_TRY(cudaSetDevice(first.device));
    VIGIL_CUDA_TRY(cudaEventRecord(first.start, first.stream));
    for (const auto& s : state) {
      VIGIL_CUDA_TRY(cudaSetDevice(s->device));
      if (s.get() != &first) VIGIL_CUDA_TRY(cudaStreamWaitEvent(s->stream, first.start, 0));
      VIGIL_CUDA_TRY(cudaMemcpyAsync(s->dst.get(), s->src.get(), words * sizeof(uint32_t),
                                     cudaMemcpyDefault, s->stream));
      if (s.get() != &first) VIGIL_CUDA_TRY(cudaEventRecord(s->done, s->stream));
    }
    VIGIL_CUDA_TRY(cudaSetDevice(first.device));
    for (const auto& s : state) {
      if (s.get() != &first) VIGIL_CUDA_TRY(cudaStreamWaitEvent(first.stream, s->done, 0));
    }
    VIGIL_CUDA_TRY(cudaEventRecord(first.done, first.stream));
    VIGIL_CUDA_TRY(cudaEventSynchronize(first.done));
    float ms = 0;
    VIGIL_CUDA_TRY(cudaEventElapsedTime(&ms, first.start, first.done));
    if (r >= 0) seconds.push_back(ms * 1e-3);
  }
  for (const auto& s : state) VIGIL_RETURN_IF_ERROR(CheckArrived(*s, words));
  return seconds;
}

}  // namespace vigil::gpu
