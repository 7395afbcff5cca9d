// NCCL collectives for the nccl benchmark (device.h): one process drives every local GPU, one
// communicator each (ncclCommInitAll, once per benchmark run: it costs seconds per GPU), each
// collective issued to all of them in one group. Across nodes (Collectives::Join) each process
// still drives its own GPUs, as ranks of a communicator that NCCL bootstraps from NCCL_COMM_ID.
// NCCL is loaded at run time with dlopen, its functions typed by its header.

#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "vigil/bench/cuda/batch_timing.h"
#include "vigil/bench/cuda/cuda_check.cuh"
#include "vigil/bench/cuda/device.h"
#include "vigil/bench/cuda/dynamic_library.h"

namespace vigil::gpu {
namespace {

struct Nccl {
  decltype(&ncclCommInitAll) init_all = nullptr;
  decltype(&ncclCommInitRank) init_rank = nullptr;
  decltype(&ncclGetUniqueId) unique_id = nullptr;
  decltype(&ncclGetVersion) version = nullptr;
  decltype(&ncclCommDestroy) destroy = nullptr;
  decltype(&ncclCommAbort) abort = nullptr;
  decltype(&ncclCommGetAsyncError) async_error = nullptr;
  decltype(&ncclGetErrorString) error_string = nullptr;
  decltype(&ncclGetLastError) last_error = nullptr;
  decltype(&ncclAllReduce) all_reduce = nullptr;
  decltype(&ncclAllGather) all_gather = nullptr;
  decltype(&ncclReduceScatter) reduce_scatter = nullptr;
  decltype(&ncclSend) send = nullptr;
  decltype(&ncclRecv) recv = nullptr;
  decltype(&ncclGroupStart) group_start = nullptr;
  decltype(&ncclGroupEnd) group_end = nullptr;
};

Result<const Nccl*> LoadNccl() {
  static Nccl n;
  static const Status loaded = OpenLibrary(
      "libnccl.so." + std::to_string(NCCL_MAJOR), "install NCCL", "NCCL", [](void* lib) {
        return Resolve(lib, n.init_all, "ncclCommInitAll") &&
               Resolve(lib, n.init_rank, "ncclCommInitRank") &&
               Resolve(lib, n.unique_id, "ncclGetUniqueId") &&
               Resolve(lib, n.version, "ncclGetVersion") &&
               Resolve(lib, n.destroy, "ncclCommDestroy") &&
               Resolve(lib, n.abort, "ncclCommAbort") &&
               Resolve(lib, n.async_error, "ncclCommGetAsyncError") &&
               Resolve(lib, n.error_string, "ncclGetErrorString") &&
               Resolve(lib, n.last_error, "ncclGetLastError") &&
               Resolve(lib, n.all_reduce, "ncclAllReduce") &&
               Resolve(lib, n.all_gather, "ncclAllGather") &&
               Resolve(lib, n.reduce_scatter, "ncclReduceScatter") &&
               Resolve(lib, n.send, "ncclSend") && Resolve(lib, n.recv, "ncclRecv") &&
               Resolve(lib, n.group_start, "ncclGroupStart") &&
               Resolve(lib, n.group_end, "ncclGroupEnd");
      });
  if (!loaded.ok()) return loaded;
  return &n;
}

#define VIGIL_NCCL_TRY(n, call)                                                        \
  do {                                                                                 \
    const ncclResult_t vigil_r_ = (call);                                              \
    if (vigil_r_ != ncclSuccess) {                                                     \
      return Status::Internal(std::string(#call) + ": " + (n).error_string(vigil_r_) + \
                              ::vigil::gpu::SourcePlace(__FILE__, __LINE__));          \
    }                                                                                  \
  } while (0)

// rank r's element i before the all-reduce; small integers, so that float sums are exact.
__host__ __device__ inline float InputOf(size_t i, int rank) {
  return static_cast<float>(i % 7 + 1 + rank);
}

__global__ void FillInputs(float* p, size_t n, int rank) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    p[i] = InputOf(i, rank);
  }
}

__global__ void CheckSums(const float* p, size_t n, int ranks, unsigned long long* bad) {
  unsigned long long wrong = 0;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    float want = 0;
    for (int r = 0; r < ranks; ++r) want += InputOf(i, r);
    wrong += p[i] != want;
  }
  if (wrong != 0) atomicAdd(bad, wrong);
}

}  // namespace

// The communicators, streams and buffers of the GPUs, released on destruction.
class Collectives::Impl {
 public:
  // NCCL loaded, then Init: what Open and Join make their object from.
  static Result<std::unique_ptr<Impl>> Start(const std::vector<int>& gpus, bool joined,
                                             int first_rank, int world);

  // This process's `gpus` are ranks first_rank... of `world` across nodes when `joined`, else
  // the only ranks.
  Impl(const Nccl& nccl, std::vector<int> gpus, bool joined, int first_rank, int world)
      : n_(nccl),
        gpus_(std::move(gpus)),
        size_(gpus_.size()),
        joined_(joined),
        first_(joined ? first_rank : 0),
        world_(joined ? static_cast<size_t>(world) : size_) {}
  ~Impl() {
    for (size_t r = 0; r < comms_.size(); ++r) {
      cudaSetDevice(gpus_[r]);
      // A communicator that failed may never finish its work: abort it rather than wait.
      if (comms_[r] && failed_) {
        n_.abort(comms_[r]);
      } else if (comms_[r]) {
        n_.destroy(comms_[r]);
      }
      if (streams_[r]) cudaStreamDestroy(streams_[r]);
      cudaFree(send_[r]);
      cudaFree(recv_[r]);
    }
  }

  Status Init() {
    comms_.assign(size_, nullptr);
    streams_.assign(size_, nullptr);
    send_.assign(size_, nullptr);
    recv_.assign(size_, nullptr);
    if (joined_) {
      VIGIL_RETURN_IF_ERROR(JoinAcrossNodes());
    } else {
      VIGIL_NCCL_TRY(n_, n_.init_all(comms_.data(), static_cast<int>(size_), gpus_.data()));
    }
    for (size_t r = 0; r < size_; ++r) {
      VIGIL_CUDA_TRY(cudaSetDevice(gpus_[r]));
      VIGIL_CUDA_TRY(cudaStreamCreateWithFlags(&streams_[r], cudaStreamNonBlocking));
    }
    return Status::Ok();
  }

  // Makes every GPU's buffers hold `bytes` at least, the send buffers filled with InputOf.
  Status Reserve(size_t bytes) {
    if (bytes <= capacity_) return Status::Ok();
    capacity_ = 0;  // until every GPU holds the new buffers
    for (size_t r = 0; r < size_; ++r) {
      VIGIL_CUDA_TRY(cudaSetDevice(gpus_[r]));
      VIGIL_CUDA_TRY(cudaFree(send_[r]));
      VIGIL_CUDA_TRY(cudaFree(recv_[r]));
      send_[r] = recv_[r] = nullptr;
      VIGIL_CUDA_TRY(cudaMalloc(&send_[r], bytes));
      VIGIL_CUDA_TRY(cudaMalloc(&recv_[r], bytes));
      FillInputs<<<256, 256, 0, streams_[r]>>>(send_[r], bytes / sizeof(float),
                                               first_ + static_cast<int>(r));
      VIGIL_CUDA_TRY(cudaGetLastError());
    }
    capacity_ = bytes;
    return Sync();
  }

  // Issues `op` on every GPU as one group. `bytes` as Collectives::Time describes.
  Status Issue(Collective op, size_t bytes) {
    const size_t floats = bytes / sizeof(float);
    const size_t share = floats / world_;  // each rank's part of a gather, scatter or all-to-all
    VIGIL_NCCL_TRY(n_, n_.group_start());
    for (size_t r = 0; r < size_; ++r) {
      ncclResult_t rc = ncclSuccess;
      switch (op) {
        case Collective::kAllReduce:
          rc =
              n_.all_reduce(send_[r], recv_[r], floats, ncclFloat, ncclSum, comms_[r], streams_[r]);
          break;
        case Collective::kAllGather:
          rc = n_.all_gather(send_[r], recv_[r], share, ncclFloat, comms_[r], streams_[r]);
          break;
        case Collective::kReduceScatter:
          rc = n_.reduce_scatter(send_[r], recv_[r], share, ncclFloat, ncclSum, comms_[r],
                                 streams_[r]);
          break;
        case Collective::kAllToAll:
          for (size_t peer = 0; peer < world_ && rc == ncclSuccess; ++peer) {
            rc = n_.send(send_[r] + peer * share, share, ncclFloat, static_cast<int>(peer),
                         comms_[r], streams_[r]);
            if (rc == ncclSuccess) {
              rc = n_.recv(recv_[r] + peer * share, share, ncclFloat, static_cast<int>(peer),
                           comms_[r], streams_[r]);
            }
          }
          break;
      }
      if (rc != ncclSuccess) {
        n_.group_end();
        failed_ = true;
        return Status::Internal(std::string("NCCL collective: ") + n_.error_string(rc));
      }
    }
    if (const ncclResult_t rc = n_.group_end(); rc != ncclSuccess) {
      failed_ = true;
      return Status::Internal(std::string("ncclGroupEnd: ") + n_.error_string(rc));
    }
    return Status::Ok();
  }

  // Waits for every GPU's stream, watching each communicator for an asynchronous error (a GPU or
  // link that failed mid-collective), which would otherwise leave the wait hanging.
  Status Sync() {
    for (size_t r = 0; r < size_; ++r) {
      VIGIL_CUDA_TRY(cudaSetDevice(gpus_[r]));
      for (;;) {
        const cudaError_t e = cudaStreamQuery(streams_[r]);
        if (e == cudaSuccess) break;
        if (e != cudaErrorNotReady) {
          failed_ = true;
          return CudaError("cudaStreamQuery", e, __FILE__, __LINE__);
        }
        ncclResult_t async = ncclSuccess;
        const ncclResult_t rc = n_.async_error(comms_[r], &async);
        if (rc != ncclSuccess || async != ncclSuccess) {
          failed_ = true;
          const ncclResult_t bad = rc != ncclSuccess ? rc : async;
          return Status::Internal("NCCL on GPU " + std::to_string(gpus_[r]) + ": " +
                                  n_.error_string(bad) + " (" + n_.last_error(comms_[r]) + ")");
        }
      }
    }
    return Status::Ok();
  }

  // Seconds for `ops` collectives issued back to back, until the last GPU's stream has drained.
  Result<double> TimeBatch(Collective op, size_t bytes, int ops) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < ops; ++i) VIGIL_RETURN_IF_ERROR(Issue(op, bytes));
    VIGIL_RETURN_IF_ERROR(Sync());
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  // Whether a collective failed: the communicators are then unusable (NCCL's rule after an
  // asynchronous error), and every later call says so instead of hanging.
  Status Usable() const {
    if (!failed_) return Status::Ok();
    return Status::Internal("an earlier NCCL collective failed; the communicators are aborted");
  }

  Status CheckSumsEverywhere(size_t bytes) {
    for (size_t r = 0; r < size_; ++r) {
      VIGIL_CUDA_TRY(cudaSetDevice(gpus_[r]));
      unsigned long long* bad = nullptr;
      VIGIL_CUDA_TRY(cudaMalloc(&bad, sizeof *bad));
      cudaError_t e = cudaMemset(bad, 0, sizeof *bad);
      if (e == cudaSuccess) {
        CheckSums<<<256, 256>>>(recv_[r], bytes / sizeof(float), static_cast<int>(world_), bad);
        e = cudaGetLastError();
      }
      unsigned long long host = 0;
      if (e == cudaSuccess) e = cudaMemcpy(&host, bad, sizeof host, cudaMemcpyDeviceToHost);
      cudaFree(bad);
      if (e != cudaSuccess) return CudaError("checking the all-reduce", e, __FILE__, __LINE__);
      if (host != 0) {
        return Status::Internal(std::to_string(host) + " of " +
                                std::to_string(bytes / sizeof(float)) +
                                " all-reduce sums wrong on GPU " + std::to_string(gpus_[r]));
      }
    }
    return Status::Ok();
  }

 private:
  // One communicator per local GPU, rank first_ + r of world_, set up as one group (NCCL's rule
  // for a process with several GPUs). The id comes from NCCL_COMM_ID, the same in every process,
  // so nothing has to be passed between them; the process holding rank 0 listens there.
  Status JoinAcrossNodes() {
    if (std::getenv("NCCL_COMM_ID") == nullptr) {
      return Status::InvalidArgument("joining a collective across nodes needs NCCL_COMM_ID");
    }
    ncclUniqueId id;
    VIGIL_NCCL_TRY(n_, n_.unique_id(&id));
    VIGIL_NCCL_TRY(n_, n_.group_start());
    for (size_t r = 0; r < size_; ++r) {
      VIGIL_CUDA_TRY(cudaSetDevice(gpus_[r]));
      const ncclResult_t rc =
          n_.init_rank(&comms_[r], static_cast<int>(world_), id, first_ + static_cast<int>(r));
      if (rc != ncclSuccess) {
        n_.group_end();
        failed_ = true;
        return Status::Internal(std::string("ncclCommInitRank: ") + n_.error_string(rc));
      }
    }
    if (const ncclResult_t rc = n_.group_end(); rc != ncclSuccess) {
      failed_ = true;
      return Status::Internal(std::string("ncclCommInitRank (group): ") + n_.error_string(rc));
    }
    return Status::Ok();
  }

  const Nccl& n_;
  std::vector<int> gpus_;
  size_t size_;
  bool joined_;          // a communicator across nodes
  int first_;            // the global rank of gpus_[0]
  size_t world_;         // ranks in the communicator, every node's
  size_t capacity_ = 0;  // bytes of each send and receive buffer
  bool failed_ = false;
  std::vector<ncclComm_t> comms_;
  std::vector<cudaStream_t> streams_;
  std::vector<float*> send_, recv_;
};

Collectives::Collectives(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Collectives::~Collectives() = default;

Result<std::unique_ptr<Collectives::Impl>> Collectives::Impl::Start(const std::vector<int>& gpus,
                                                                    bool joined, int first_rank,
                                                                    int world) {
  UsePciBusOrder();
  VIGIL_ASSIGN_OR_RETURN(const Nccl* nccl, LoadNccl());
  auto impl = std::make_unique<Impl>(*nccl, gpus, joined, first_rank, world);
  VIGIL_RETURN_IF_ERROR(impl->Init());
  return Result<std::unique_ptr<Impl>>(std::move(impl));
}

Result<std::unique_ptr<Collectives>> Collectives::Open(const std::vector<int>& gpus) {
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<Impl> impl, Impl::Start(gpus, false, 0, 0));
  return std::unique_ptr<Collectives>(new Collectives(std::move(impl)));
}

Result<std::string> NcclVersion() {
  VIGIL_ASSIGN_OR_RETURN(const Nccl* nccl, LoadNccl());
  int code = 0;
  VIGIL_NCCL_TRY(*nccl, nccl->version(&code));
  // NCCL 2.9 and later: major x 10000 + minor x 100 + patch.
  return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." +
         std::to_string(code % 100);
}

Result<std::unique_ptr<Collectives>> Collectives::Join(const std::vector<int>& gpus, int first_rank,
                                                       int world) {
  if (gpus.empty() || first_rank < 0 || world < first_rank + static_cast<int>(gpus.size())) {
    return Status::InvalidArgument("Collectives::Join: ranks outside the communicator");
  }
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<Impl> impl, Impl::Start(gpus, true, first_rank, world));
  return std::unique_ptr<Collectives>(new Collectives(std::move(impl)));
}

Result<std::vector<double>> Collectives::Time(Collective op, size_t bytes, int reps) {
  VIGIL_RETURN_IF_ERROR(impl_->Usable());
  VIGIL_RETURN_IF_ERROR(impl_->Reserve(bytes));
  // Timed on the host, as nccl-tests does: the collectives of a batch are issued back to back on
  // every GPU's stream, and the batch ends when the last GPU's stream has drained.
  return TimePerOp(reps, [&](int ops) { return impl_->TimeBatch(op, bytes, ops); });
}

Result<std::vector<double>> Collectives::TimeFixed(Collective op, size_t bytes, int warmup, int ops,
                                                   int reps) {
  VIGIL_RETURN_IF_ERROR(impl_->Usable());
  VIGIL_RETURN_IF_ERROR(impl_->Reserve(bytes));
  VIGIL_RETURN_IF_ERROR(impl_->TimeBatch(op, bytes, warmup).status());
  std::vector<double> out;
  for (int i = 0; i < reps; ++i) {
    VIGIL_ASSIGN_OR_RETURN(const double s, impl_->TimeBatch(op, bytes, ops));
    out.push_back(s / ops);
  }
  return out;
}

Status Collectives::CheckAllReduce(size_t bytes) {
  VIGIL_RETURN_IF_ERROR(impl_->Usable());
  VIGIL_RETURN_IF_ERROR(impl_->Reserve(bytes));
  VIGIL_RETURN_IF_ERROR(impl_->Issue(Collective::kAllReduce, bytes));
  VIGIL_RETURN_IF_ERROR(impl_->Sync());
  return impl_->CheckSumsEverywhere(bytes);
}

}  // namespace vigil::gpu
