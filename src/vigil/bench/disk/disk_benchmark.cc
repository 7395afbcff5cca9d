// The disk benchmark works on one file in its private scratch directory, which the runner removes
// afterwards, also when the run is interrupted or the benchmark crashes. Every transfer uses
// O_DIRECT with page-aligned buffers, so that the figures are the device's and not the page
// cache's. The counting follows fio: MB/s are 10^6 bytes per second of the bytes transferred, IOPS
// are completed reads per second, and neither includes a final fsync.
//
// Every 4 KiB sector written carries its own offset, and every read checks it: a device that
// returns the wrong data (or stale data) fails the benchmark instead of producing a fast figure.

#include "vigil/bench/disk/disk_benchmark.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <random>
#include <thread>

#include "vigil/bench/host/host_health.h"
#include "vigil/core/file.h"

namespace vigil {
namespace {

constexpr size_t kSector = 4096;
constexpr uint64_t kMagic = 0x7669'6769'6c64'6973;  // "vigildis"
constexpr double kMB = 1e6;

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

struct AlignedFree {
  void operator()(void* p) const { std::free(p); }
};
using AlignedBuffer = std::unique_ptr<char, AlignedFree>;

Result<AlignedBuffer> AllocateAligned(size_t bytes) {
  void* p = nullptr;
  if (posix_memalign(&p, kSector, bytes) != 0) {
    return Status::IoError(fmt::format("cannot allocate {} bytes of I/O buffer", bytes));
  }
  std::memset(p, 0xa5, bytes);
  return AlignedBuffer(static_cast<char*>(p));
}

uint64_t Tag(uint64_t offset) { return offset ^ kMagic; }

void StampSectors(char* buf, size_t len, uint64_t offset) {
  for (size_t s = 0; s < len; s += kSector) {
    const uint64_t tag = Tag(offset + s);
    std::memcpy(buf + s, &tag, sizeof(tag));
  }
}

Status CheckSectors(const char* buf, size_t len, uint64_t offset, const std::string& path) {
  for (size_t s = 0; s < len; s += kSector) {
    uint64_t tag = 0;
    std::memcpy(&tag, buf + s, sizeof(tag));
    if (tag != Tag(offset + s)) {
      return Status::IoError(fmt::format(
          "verification failed: {} at offset {} returned data that was not written there", path,
          offset + s));
    }
  }
  return Status::Ok();
}

// Full-length positioned I/O; a short transfer on a regular file is an error here.
Status TransferAll(bool write, int fd, char* buf, size_t len, uint64_t off,
                   const std::string& path) {
  size_t done = 0;
  while (done < len) {
    const ssize_t n = write ? pwrite(fd, buf + done, len - done, static_cast<off_t>(off + done))
                            : pread(fd, buf + done, len - done, static_cast<off_t>(off + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      return ErrnoError(
          fmt::format("{} {} at offset {}", write ? "write" : "read", path, off + done));
    if (n == 0)
      return Status::IoError(
          fmt::format("{}: unexpected end of file at offset {}", path, off + done));
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

class Disk : public Benchmark {
 public:
  std::string_view name() const override { return "disk"; }
  std::string_view component() const override { return "disk"; }
  std::string_view description() const override {
    return "sequential write/read (MB/s) and random 4K read IOPS, O_DIRECT, in --scratch";
  }
  std::vector<ParamSpec> params() const override {
    return {
        {"file_size", ParamKind::kBytes, "256M", "4G", "size of the test file"},
        {"block_size", ParamKind::kBytes, "1M", "1M", "transfer size of the sequential passes"},
        {"random_block", ParamKind::kBytes, "4K", "4K", "transfer size of the random reads"},
        {"random_jobs", ParamKind::kInt, "16", "32", "threads issuing random reads (queue depth)"},
        {"random_time", ParamKind::kSeconds, "2", "10", "seconds per random-read repetition"},
        {"repetitions", ParamKind::kInt, "3", "5", "timed repetitions of each pattern"},
    };
  }
  double time_limit_s(Suite suite) const override { return suite == Suite::kQuick ? 180 : 1200; }

  Status Available(const BenchContext& ctx) const override {
    std::string probe = ctx.scratch_dir + "/.vigil-odirect-XXXXXX";
    const int fd = mkostemp(probe.data(), O_DIRECT);
    if (fd < 0) {
      if (errno == EINVAL) {
        return Status::Unavailable(fmt::format(
            "the filesystem of {} does not support O_DIRECT (tmpfs?); choose another --scratch",
            ctx.scratch_dir));
      }
      return Status::Unavailable(
          fmt::format("cannot create a file in {}: {}", ctx.scratch_dir, std::strerror(errno)));
    }
    close(fd);
    unlink(probe.c_str());
    return Status::Ok();
  }

  Result<std::vector<Metric>> Run(const BenchContext& ctx) const override {
    const auto file_size = static_cast<uint64_t>(ctx.Param("file_size"));
    const auto block = static_cast<size_t>(ctx.Param("block_size"));
    const auto rblock = static_cast<size_t>(ctx.Param("random_block"));
    const int jobs = std::max(1, static_cast<int>(ctx.Param("random_jobs")));
    const double rtime = ctx.Param("random_time");
    const int reps = std::max(1, static_cast<int>(ctx.Param("repetitions")));
    if (block == 0 || block % kSector != 0 || rblock == 0 || rblock % kSector != 0) {
      return Status::InvalidArgument("block_size and random_block must be multiples of 4K");
    }
    const uint64_t blocks = file_size / block;
    if (blocks == 0 || file_size / rblock == 0) {
      return Status::InvalidArgument("file_size must hold at least one block");
    }
    const uint64_t size = blocks * block;

    // A filesystem that cannot say how full it is gets its chance: the writes will tell.
    if (const Result<double> free = FreeBytes(ctx.scratch_dir); free.ok()) {
      const double avail = *free;
      if (avail < static_cast<double>(size)) {
        return Status::IoError(
            fmt::format("not enough free space in {}: {:.0f} MiB available, {:.0f} MiB needed "
                        "(choose another --scratch or --set disk.file_size=...)",
                        ctx.scratch_dir, avail / (1 << 20), static_cast<double>(size) / (1 << 20)));
      }
    }
    // The file is unlinked as soon as it is open, so that its blocks go back to the filesystem
    // when this process ends however it ends: a `vigil run` killed with SIGKILL (OOM, a launcher
    // ending its ranks) takes this child with it (PR_SET_PDEATHSIG) and cannot clean up itself.
    const std::string path = ctx.scratch_dir + "/vigil-disk.dat";
    Fd f;
    f.fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_DIRECT | O_CLOEXEC, 0600);
    if (f.fd < 0) return ErrnoError(fmt::format("cannot create {}", path));
    if (unlink(path.c_str()) != 0) return ErrnoError(fmt::format("cannot unlink {}", path));
    if (const int rc = posix_fallocate(f.fd, 0, static_cast<off_t>(size)); rc != 0) {
      errno = rc;
      return ErrnoError(fmt::format("cannot allocate {} MiB for {}", size >> 20, path));
    }
    VIGIL_ASSIGN_OR_RETURN(AlignedBuffer buf, AllocateAligned(block));

    std::vector<double> write_mbps, read_mbps, iops;
    // Pass 0 lays the file out (it turns fallocate's unwritten extents into written ones, as
    // fio's layout does) and is not timed: the timed passes measure overwrites.
    for (int r = -1; r < reps; ++r) {
      const auto t0 = Clock::now();
      for (uint64_t b = 0; b < blocks; ++b) {
        StampSectors(buf.get(), block, b * block);
        VIGIL_RETURN_IF_ERROR(TransferAll(true, f.fd, buf.get(), block, b * block, path));
      }
      const auto t1 = Clock::now();
      if (fdatasync(f.fd) != 0) return ErrnoError(fmt::format("fdatasync {}", path));
      if (r >= 0) write_mbps.push_back(static_cast<double>(size) / Seconds(t0, t1) / kMB);
    }
    for (int r = 0; r < reps; ++r) {
      const auto t0 = Clock::now();
      for (uint64_t b = 0; b < blocks; ++b) {
        VIGIL_RETURN_IF_ERROR(TransferAll(false, f.fd, buf.get(), block, b * block, path));
        VIGIL_RETURN_IF_ERROR(CheckSectors(buf.get(), block, b * block, path));
      }
      read_mbps.push_back(static_cast<double>(size) / Seconds(t0, Clock::now()) / kMB);
    }
    for (int r = 0; r < reps; ++r) {
      VIGIL_ASSIGN_OR_RETURN(double v, RandomReads(f.fd, path, size / rblock, rblock, jobs, rtime,
                                                   static_cast<uint64_t>(r)));
      iops.push_back(v);
    }
    std::vector<Metric> metrics;
    metrics.push_back(MedianMetric(MetricKey{"disk", "seq_write_mbps", std::nullopt}, "MB/s", true,
                                   std::move(write_mbps)));
    metrics.push_back(MedianMetric(MetricKey{"disk", "seq_read_mbps", std::nullopt}, "MB/s", true,
                                   std::move(read_mbps)));
    metrics.push_back(MedianMetric(MetricKey{"disk", "rand_read_iops", std::nullopt}, "IOPS", true,
                                   std::move(iops)));
    return metrics;
  }

 private:
  // `jobs` threads read random `rblock` blocks for `seconds`; returns completed reads per second.
  static Result<double> RandomReads(int fd, const std::string& path, uint64_t nblocks,
                                    size_t rblock, int jobs, double seconds, uint64_t seed) {
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> ops{0};
    std::vector<Status> errors(static_cast<size_t>(jobs));
    std::vector<std::thread> threads;
    const auto t0 = Clock::now();
    for (int j = 0; j < jobs; ++j) {
      threads.emplace_back([&, j] {
        Result<AlignedBuffer> buf = AllocateAligned(rblock);
        if (!buf.ok()) {
          errors[static_cast<size_t>(j)] = buf.status();
          return;
        }
        std::mt19937_64 rng(seed * 1000003 + static_cast<uint64_t>(j));
        std::uniform_int_distribution<uint64_t> pick(0, nblocks - 1);
        uint64_t done = 0;
        while (!stop.load(std::memory_order_relaxed)) {
          const uint64_t off = pick(rng) * rblock;
          Status s = TransferAll(false, fd, buf->get(), rblock, off, path);
          if (s.ok()) s = CheckSectors(buf->get(), rblock, off, path);
          if (!s.ok()) {
            errors[static_cast<size_t>(j)] = s;
            break;
          }
          ++done;
        }
        ops.fetch_add(done);
      });
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    stop.store(true);
    for (std::thread& t : threads) t.join();
    const double elapsed = Seconds(t0, Clock::now());
    for (const Status& s : errors) VIGIL_RETURN_IF_ERROR(s);
    return static_cast<double>(ops.load()) / elapsed;
  }
};

}  // namespace

std::unique_ptr<Benchmark> MakeDiskBenchmark() { return std::make_unique<Disk>(); }

}  // namespace vigil
