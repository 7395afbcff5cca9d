// What the GPU benchmarks ask of a GPU, behind a plain header: device.cu implements it with the
// CUDA runtime (linked statically: it finds the driver's libcuda at run time, so the binary runs
// on nodes without one); device_none.cc stands in when Vigil is built without CUDA, answering
// every call with Unavailable. Call only in a benchmark's child process (runner.h): CUDA state
// does not survive fork(), so the parent must never initialise it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "vigil/core/status.h"

namespace vigil::gpu {

// True when this binary holds the CUDA implementation.
bool BuiltWithCuda();

struct DeviceProps {
  std::string name;
  int cc_major = 0, cc_minor = 0;  // compute capability
  size_t total_bytes = 0, free_bytes = 0;
  size_t l2_bytes = 0;
  int sms = 0;
  std::string pci_bus_id;  // "0000:19:00.0"
};

// The number of CUDA devices. Unavailable with the CUDA error when there is no driver or device.
Result<int> DeviceCount();
Result<DeviceProps> Props(int device);

enum class MembwKernel {
  kCopy,   // b[i] = a[i]: reads and writes one array each
  kTriad,  // c[i] = a[i] + s * b[i]: reads two, writes one
};

// Times `reps` runs of `kernel` over arrays of `bytes_per_array` bytes on `device` (16-byte
// accesses, data that is never zero), after one untimed run, and checks every element of the
// result on the GPU. Returns the seconds of each run. Running out of GPU memory is Internal
// "out of GPU memory: <call> ..."; any other CUDA error is Internal naming the call and the
// error's name (cudaErrorIllegalAddress...).
Result<std::vector<double>> TimeMembw(int device, MembwKernel kernel, size_t bytes_per_array,
                                      int reps);

struct LaunchTimes {
  std::vector<double> device_us;      // per kernel, back to back between two events
  std::vector<double> round_trip_us;  // launch plus synchronize, seen from the host
};

// `reps` measurements of each: `batch` empty kernels back to back timed by events, and single
// launches each followed by a synchronize, timed on the host.
Result<LaunchTimes> TimeLaunch(int device, int reps, int batch);

// One side of a copy: a GPU's index, or pinned host memory.
constexpr int kHost = -1;

struct CopyPath {
  int src = kHost;
  int dst = kHost;
};

// Times `reps` runs of copying `bytes` along every path at once (bidirectional figures are two
// paths), after one untimed run: each path on a stream of its own, on the GPU that drives it (the
// source, unless that is the host), the run timed by CUDA events from the start of the first copy
// to the end of the last; then checks every word that arrived on every path. A path between two
// GPUs enables peer access first (ask CanAccessPeer before). Host memory is pinned and first
// touched by the calling thread: bind it to the GPU's NUMA node first.
Result<std::vector<double>> TimeCopies(const std::vector<CopyPath>& paths, size_t bytes, int reps);

// Whether `src` can reach `dst`'s memory directly (NVLink or PCIe peer to peer).
Result<bool> CanAccessPeer(int src, int dst);

enum class GemmType {
  kFp64,  // fp64 in and out, fp64 tensor cores
  kTf32,  // fp32 in and out, tensor cores rounding inputs to tf32
  kFp16,  // fp16 in and out, fp32 accumulation
  kBf16,  // bf16 in and out, fp32 accumulation
  kFp8,   // fp8 e4m3 in, bf16 out, fp32 accumulation (compute capability 8.9 and later)
};

// Times `reps` products D = A^T B of `size` x `size` matrices of `type` with cuBLASLt (loaded at
// run time), random data, the algorithm its heuristic picks, after two untimed products. Returns
// the seconds of each. Unavailable when cuBLASLt cannot be loaded.
Result<std::vector<double>> TimeGemm(int device, GemmType type, int size, int reps);

// One product of `type` at `size` on random data against a reference computed in fp64 on the GPU
// from the same inputs: the largest error of an element divided by the sum of |a| |b| over its
// dot product (so that it is comparable across sizes and data).
Result<double> GemmError(int device, GemmType type, int size);

struct StressRun {
  std::vector<double> seconds;  // of each product
  int64_t miscompares = 0;      // products whose result differed from the first, bit for bit
};

// Repeats the product of `type` at `size` on `device` for `seconds`, timing each and comparing
// each result with the first on the GPU; calls `between` on the host after every batch of
// products (to sample temperature and clocks).
Result<StressRun> Stress(int device, GemmType type, int size, double seconds,
                         const std::function<void()>& between);

enum class Collective { kAllReduce, kAllGather, kReduceScatter, kAllToAll };

// Times `reps` runs of `op` across `gpus` (one NCCL communicator per GPU, all in this process),
// after two untimed runs, with buffers of `bytes` per GPU as nccl-tests sizes them: the
// all-reduce's buffer, the all-gather's output, the reduce-scatter's input, the all-to-all's
// send buffer. NCCL (libnccl.so.2) is loaded at run time. Returns the seconds of each run.
Result<std::vector<double>> TimeCollective(const std::vector<int>& gpus, Collective op,
                                           size_t bytes, int reps);

// One float all-reduce (sum) of `bytes` across `gpus` of values known in advance, checked
// element by element on every GPU.
Status CheckAllReduce(const std::vector<int>& gpus, size_t bytes);

}  // namespace vigil::gpu
