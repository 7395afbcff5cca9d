// What the GPU benchmarks ask of a GPU, behind a plain header: device.cu implements it with the
// CUDA runtime (linked statically: it finds the driver's libcuda at run time, so the binary runs
// on nodes without one); device_none.cc stands in when Vigil is built without CUDA, answering
// every call with Unavailable. Call only in a benchmark's child process (runner.h): CUDA state
// does not survive fork(), so the parent must never initialise it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
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

// Times `reps` samples of `kernel` over arrays of `bytes_per_array` bytes on `device` (16-byte
// accesses, data that is never zero) as batch_timing.h's TimePerOp does (a warm-up of about
// 200 ms, then batches of back-to-back runs between one pair of events), and checks every element
// of the result on the GPU. Returns the seconds per run of each sample. Running out of GPU memory
// is Internal "out of GPU memory: <call> ..."; any other CUDA error is Internal naming the call and
// the error's name (cudaErrorIllegalAddress...).
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

// Times `reps` samples of products D = A^T B of `size` x `size` matrices of `type` with cuBLASLt
// (loaded at run time), random data, the algorithm its heuristic picks, as TimePerOp does (a
// warm-up of about `warmup_s` seconds, then batches of back-to-back products between one pair of
// events). Returns the seconds per product of each sample. Unavailable when cuBLASLt cannot be
// loaded. Thread-safe for different devices. REQUIRES: `size` is a multiple of 16 (fp8's rule;
// GemmSize).
Result<std::vector<double>> TimeGemm(int device, GemmType type, int size, int reps,
                                     double warmup_s);

// One product of `type` at `size` on random data against a reference computed in fp64 on the GPU
// from the same inputs: the largest error of an element divided by the sum of |a| |b| over its
// dot product (so that it is comparable across sizes and data).
Result<double> GemmError(int device, GemmType type, int size);

struct StressRun {
  std::vector<double> seconds;  // of each product
  int64_t miscompares = 0;      // products whose result differed from the first, bit for bit
};

// Repeats the product of `type` at `size` on `device` for `seconds`, timing each and comparing
// each result with the first on the GPU. The calling thread only enqueues work and reads the
// comparisons back (whoever samples temperature and clocks does it on a thread of its own).
// Thread-safe for different devices. REQUIRES: `size` is a multiple of 16.
Result<StressRun> Stress(int device, GemmType type, int size, double seconds);

// One word gpu-memtest read back wrong.
struct MemtestMismatch {
  uint64_t offset = 0;  // bytes from the start of the tested memory (its chunks end to end)
  uint64_t expected = 0, actual = 0;
};

// The mismatches a memory test records the addresses of, at most; it counts all of them.
constexpr int kMemtestRecorded = 16;

struct MemtestRun {
  uint64_t tested_bytes = 0;  // what was allocated and tested
  uint64_t errors = 0;        // words read back wrong, over every pattern and pass
  int passes = 0;             // passes of every pattern over all of the memory
  // Up to kMemtestRecorded of the mismatches, the first the GPU found (not in address order).
  std::vector<MemtestMismatch> first;
};

// Allocates `bytes` of `device`'s memory (several smaller allocations where one does not fit, as
// memtest.h's MemtestChunk says) and holds all of it while it writes and then verifies each
// pattern of memtest.h's kMemPatterns over all of it, counting mismatching words on the GPU; pass
// after pass until `seconds` have passed, one pass at least. Internal "out of GPU memory: ..."
// when not even kMemtestMinChunk could be allocated; any other CUDA error is Internal naming the
// call. Thread-safe for different devices.
Result<MemtestRun> Memtest(int device, size_t bytes, double seconds);

enum class Collective { kAllReduce, kAllGather, kReduceScatter, kAllToAll };

// The version of the NCCL this process loads ("2.28.3"): Unavailable when it cannot be loaded.
Result<std::string> NcclVersion();

// NCCL communicators across GPUs of this process (one per GPU, ncclCommInitAll), with their
// streams and buffers: set up once per benchmark run, since setting them up takes seconds per
// GPU. NCCL (libnccl.so.2) is loaded at run time. A collective that fails (an error at issue, or
// an asynchronous one seen while waiting: a GPU or link that failed mid-collective) marks the
// communicators failed: the destructor then aborts them instead of waiting, and every later call
// returns Internal. Not thread-safe: one thread drives all the GPUs.
class Collectives {
 public:
  // Creates the communicators of `gpus`. Unavailable when NCCL cannot be loaded (or this Vigil
  // has no CUDA); Internal with NCCL's or CUDA's message when setting up fails.
  static Result<std::unique_ptr<Collectives>> Open(const std::vector<int>& gpus);
  // Joins a communicator that spans nodes: `gpus` are ranks first_rank, first_rank + 1, ... of
  // `world`, and every process of it was started with the same NCCL_COMM_ID (the address and port
  // where the process holding rank 0 listens to bootstrap the others; NCCL's own variable). Every
  // member must call it at about the same time: setting up waits for all `world` ranks.
  static Result<std::unique_ptr<Collectives>> Join(const std::vector<int>& gpus, int first_rank,
                                                   int world);
  ~Collectives();
  Collectives(const Collectives&) = delete;
  Collectives& operator=(const Collectives&) = delete;

  // Times `reps` samples of `op` as TimePerOp does (warm-up about 200 ms, then batches of
  // back-to-back collectives), timed on the host from the first issue to the last GPU's
  // completion, as nccl-tests does. Buffers of `bytes` per GPU as nccl-tests sizes them: the
  // all-reduce's buffer, the all-gather's output, the reduce-scatter's input, the all-to-all's
  // send buffer. Returns the seconds per collective of each sample.
  // REQUIRES: `bytes` is a multiple of 4 x the number of ranks (GPUs; across nodes, `world`).
  Result<std::vector<double>> Time(Collective op, size_t bytes, int reps);
  // The same with a count fixed in advance: `warmup` collectives, then `reps` samples of `ops`
  // each. Across nodes every member must issue the same number of collectives, so the adaptive
  // batches of Time (sized by each process's own clock) would leave one waiting for ever.
  Result<std::vector<double>> TimeFixed(Collective op, size_t bytes, int warmup, int ops, int reps);

  // One float all-reduce (sum) of `bytes` of values known in advance, checked element by element
  // on every GPU (across nodes: every member's). Internal naming the GPU when a sum is wrong.
  Status CheckAllReduce(size_t bytes);

 private:
  class Impl;  // nccl.cu
  explicit Collectives(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace vigil::gpu
