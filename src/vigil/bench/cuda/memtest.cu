// gpu-memtest's device side (device.h): write a pattern over all the memory under test, then read
// it all back, so that a word has time to lose its value before it is checked, as DCGM's memory
// test and memtest86 do. Mismatches are counted on the GPU; the first few are recorded.

#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "vigil/bench/cuda/cuda_check.cuh"
#include "vigil/bench/cuda/device.h"
#include "vigil/bench/cuda/memtest.h"

namespace vigil::gpu {
namespace {

// What the verifying kernels found, in GPU memory.
struct Found {
  unsigned long long errors;
  unsigned int recorded;  // mismatches that claimed a slot; may pass kMemtestRecorded
  unsigned long long offset[kMemtestRecorded], expected[kMemtestRecorded], actual[kMemtestRecorded];
};

// The random pattern's seed differs from pass to pass, so that each pass writes new data.
constexpr uint64_t kSeed = 0x243f6a8885a308d3ull;

__global__ void WritePattern(uint64_t* p, size_t n, MemPattern pattern, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    p[i] = PatternWord(pattern, reinterpret_cast<uint64_t>(p + i), seed);
  }
}

// Counts the words of `p` that differ from the pattern; records the first kMemtestRecorded with
// their byte offset counted from `base` (where this chunk starts in the tested memory).
__global__ void VerifyPattern(const uint64_t* p, size_t n, MemPattern pattern, uint64_t seed,
                              uint64_t base, Found* found) {
  unsigned long long bad = 0;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    const uint64_t want = PatternWord(pattern, reinterpret_cast<uint64_t>(p + i), seed);
    const uint64_t got = p[i];
    if (got == want) continue;
    ++bad;
    // Reading the count first keeps a GPU whose every word is wrong from serialising on one
    // atomic.
    if (*static_cast<volatile unsigned int*>(&found->recorded) >= kMemtestRecorded) continue;
    const unsigned int slot = atomicAdd(&found->recorded, 1u);
    if (slot < kMemtestRecorded) {
      found->offset[slot] = base + i * sizeof(uint64_t);
      found->expected[slot] = want;
      found->actual[slot] = got;
    }
  }
  if (bad != 0) atomicAdd(&found->errors, bad);
}

struct Chunk {
  uint64_t* p = nullptr;
  size_t bytes = 0;
};

// The memory under test and the findings, freed on scope exit.
struct Memory {
  std::vector<Chunk> chunks;
  Found* found = nullptr;
  ~Memory() {
    for (const Chunk& c : chunks) cudaFree(c.p);
    cudaFree(found);
  }
};

// Allocates up to `bytes` in chunks as MemtestChunk says, into `m`.
Status Allocate(Memory& m, size_t bytes) {
  size_t remaining = bytes, ceiling = bytes;
  while (remaining > 0) {
    const size_t size = MemtestChunk(remaining, ceiling);
    if (size == 0) break;
    void* p = nullptr;
    const cudaError_t e = cudaMalloc(&p, size);
    if (e == cudaErrorMemoryAllocation) {
      cudaGetLastError();  // clears it: running out is expected here
      ceiling = size / 2;
      continue;
    }
    if (e != cudaSuccess) return CudaError("cudaMalloc", e, __FILE__, __LINE__);
    m.chunks.push_back({static_cast<uint64_t*>(p), size});
    remaining -= size;
  }
  if (m.chunks.empty()) {
    return Status::Internal("out of GPU memory: not even " +
                            std::to_string(kMemtestMinChunk >> 20) + " MiB could be allocated");
  }
  return Status::Ok();
}

}  // namespace

Result<MemtestRun> Memtest(int device, size_t bytes, double seconds) {
  UsePciBusOrder();
  VIGIL_CUDA_TRY(cudaSetDevice(device));
  int sms = 0;
  VIGIL_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  Memory m;
  VIGIL_CUDA_TRY(cudaMalloc(&m.found, sizeof(Found)));
  VIGIL_CUDA_TRY(cudaMemset(m.found, 0, sizeof(Found)));
  VIGIL_RETURN_IF_ERROR(Allocate(m, bytes));
  const int blocks = sms * 8;
  constexpr int kThreads = 256;
  MemtestRun run;
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  do {
    const uint64_t seed = kSeed + static_cast<uint64_t>(run.passes);
    for (const MemPattern pattern : kMemPatterns) {
      for (const Chunk& c : m.chunks) {
        WritePattern<<<blocks, kThreads>>>(c.p, c.bytes / sizeof(uint64_t), pattern, seed);
      }
      uint64_t base = 0;
      for (const Chunk& c : m.chunks) {
        VerifyPattern<<<blocks, kThreads>>>(c.p, c.bytes / sizeof(uint64_t), pattern, seed, base,
                                            m.found);
        base += c.bytes;
      }
      VIGIL_CUDA_TRY(cudaGetLastError());
    }
    VIGIL_CUDA_TRY(cudaDeviceSynchronize());
    ++run.passes;
  } while (std::chrono::steady_clock::now() < end);
  Found found{};
  VIGIL_CUDA_TRY(cudaMemcpy(&found, m.found, sizeof found, cudaMemcpyDeviceToHost));
  for (const Chunk& c : m.chunks) run.tested_bytes += c.bytes;
  run.errors = found.errors;
  for (unsigned int i = 0; i < found.recorded && i < kMemtestRecorded; ++i) {
    run.first.push_back({found.offset[i], found.expected[i], found.actual[i]});
  }
  return run;
}

}  // namespace vigil::gpu
