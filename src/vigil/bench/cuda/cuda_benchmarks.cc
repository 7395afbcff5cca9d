// gpu-gemm, gpu-stress, gpu-membw, gpu-launch, gpu-copy and nccl: the host side of the GPU
// benchmarks whose CUDA is in device.cu. Sizes, byte counts and metric keys are decided here, in
// plain C++, so that they are tested on machines without a GPU.

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <map>
#include <optional>

#include "vigil/bench/cpu/topology.h"
#include "vigil/bench/cuda/gpu_benchmarks.h"
#include "vigil/bench/cuda/memtest.h"
#include "vigil/bench/cuda/periodic_thread.h"
#include "vigil/core/file.h"
#include "vigil/core/parallel.h"
#include "vigil/core/stats.h"

namespace vigil {
namespace {

constexpr size_t kAccess = 16;  // bytes per access (float4)

// cuBLASLt's fp8 products need m, n and k in multiples of this; every type gets the same sizes.
constexpr int kGemmMultiple = 16;

// How often gpu-stress reads NVML: a few times a second shows a temperature's peak and every
// throttle episode longer than a blink.
constexpr std::chrono::milliseconds kStressSamplePeriod{250};

// gpu-stress keeps this many of its products' figures as samples at most: a full run times
// tens of thousands per GPU.
constexpr size_t kStressSamplesKept = 100;

// The number of GPUs NVML sees; Unavailable without CUDA in this build or without a GPU.
Result<int> CudaGpus() {
  if (!gpu::BuiltWithCuda()) return gpu::DeviceCount().status();
  return nvml::VisibleGpus();
}

// Durations of moving (or computing) `amount` each into rates, in units of `unit` per second.
std::vector<double> Rates(std::vector<double> seconds, double amount, double unit) {
  for (double& s : seconds) s = amount / s / unit;
  return seconds;
}

class GpuMembw : public Benchmark {
 public:
  std::string_view name() const override { return "gpu-membw"; }
  std::string_view component() const override { return "gpu"; }
  std::string_view description() const override {
    return "HBM bandwidth per GPU: copy and triad, 16-byte accesses, arrays far beyond L2 (GB/s)";
  }
  std::vector<ParamSpec> params() const override {
    return {{"array_size", ParamKind::kBytes, "1G", "4G", "bytes of each array"},
            {"repetitions", ParamKind::kInt, "10", "30", "timed runs of each kernel"}};
  }
  double time_limit_s(Suite) const override { return 300; }
  Status Available(const BenchContext&) const override { return CudaGpus().status(); }

  Result<std::vector<Metric>> Run(const BenchContext& ctx) const override {
    VIGIL_ASSIGN_OR_RETURN(const int gpus, gpu::DeviceCount());
    const auto requested = static_cast<size_t>(ctx.Param("array_size"));
    const int reps = std::max(1, static_cast<int>(ctx.Param("repetitions")));
    // Each GPU reads and writes its own HBM with its own SMs: all of them at once.
    return MetricsOfEveryGpu(ctx.Gpus(gpus), [&](int g) -> Result<std::vector<Metric>> {
      VIGIL_ASSIGN_OR_RETURN(const gpu::DeviceProps props, gpu::Props(g));
      std::vector<Metric> out;
      for (const auto& [kernel, metric, arrays] :
           {std::tuple{gpu::MembwKernel::kCopy, "copy_gbps", 2},
            std::tuple{gpu::MembwKernel::kTriad, "triad_gbps", 3}}) {
        VIGIL_ASSIGN_OR_RETURN(const size_t bytes, MembwArrayBytes(requested, props, arrays));
        VIGIL_ASSIGN_OR_RETURN(std::vector<double> seconds, gpu::TimeMembw(g, kernel, bytes, reps));
        out.push_back(PerGpu(name(), metric, g, "GB/s", true,
                             Rates(std::move(seconds), MembwBytesMoved(kernel, bytes), 1e9)));
      }
      return out;
    });
  }
};

class GpuLaunch : public Benchmark {
 public:
  std::string_view name() const override { return "gpu-launch"; }
  std::string_view component() const override { return "gpu"; }
  std::string_view description() const override {
    return "kernel launch overhead per GPU: device side and host round trip (us)";
  }
  std::vector<ParamSpec> params() const override {
    return {{"repetitions", ParamKind::kInt, "20", "100", "measurements of each figure"}};
  }
  double time_limit_s(Suite) const override { return 120; }
  Status Available(const BenchContext&) const override { return CudaGpus().status(); }

  Result<std::vector<Metric>> Run(const BenchContext& ctx) const override {
    constexpr int kBatch = 1000;  // empty kernels between two events
    VIGIL_ASSIGN_OR_RETURN(const int gpus, gpu::DeviceCount());
    const int reps = std::max(1, static_cast<int>(ctx.Param("repetitions")));
    std::vector<Metric> out;
    // One GPU at a time: launches are the host CPU's work, which the GPUs would share.
    for (const int g : ctx.Gpus(gpus)) {
      VIGIL_ASSIGN_OR_RETURN(gpu::LaunchTimes t, gpu::TimeLaunch(g, reps, kBatch));
      out.push_back(PerGpu(name(), "device_us", g, "us", false, std::move(t.device_us)));
      out.push_back(PerGpu(name(), "round_trip_us", g, "us", false, std::move(t.round_trip_us)));
    }
    return out;
  }
};

class GpuGemm : public Benchmark {
 public:
  std::string_view name() const override { return "gpu-gemm"; }
  std::string_view component() const override { return "gpu"; }
  std::string_view description() const override {
    return "cuBLASLt matrix multiply per GPU: fp64, tf32, fp16, bf16, fp8, checked (TFLOP/s)";
  }
  std::vector<ParamSpec> params() const override {
    // The health suite's product is a check that the GPU computes right, timed briefly.
    return {{"size", ParamKind::kInt, "8192", "8192", "m = n = k of the timed products", "2048"},
            {"check_size", ParamKind::kInt, "1024", "2048", "m = n = k of the checked product"},
            {"repetitions", ParamKind::kInt, "10", "30", "timed products of each type", "3"},
            // A GPU at its power limit lowers its clocks within a second or two of heavy load; a
            // figure timed before that is a burst no training step sees, and it varies from run to
            // run by up to 10% (docs/benchmarks.md, "GPU benchmarks"). The health suite checks.
            {"warmup", ParamKind::kSeconds, "2", "2",
             "seconds of products of each type before timing, for the clocks to settle", "0.2"}};
  }
  bool in_health_suite() const override { return true; }
  double time_limit_s(Suite suite) const override { return suite == Suite::kHealth ? 30 : 600; }
  Status Available(const BenchContext&) const override { return CudaGpus().status(); }

  Result<std::vector<Metric>> Run(const BenchContext& ctx) const override {
    VIGIL_ASSIGN_OR_RETURN(const int gpus, gpu::DeviceCount());
    const int size = GemmSize(static_cast<int>(ctx.Param("size")));
    const int check = GemmSize(std::min(static_cast<int>(ctx.Param("check_size")), 8192));
    const int reps = std::max(1, static_cast<int>(ctx.Param("repetitions")));
    const double warmup_s = ctx.Param("warmup");
    // Each GPU multiplies on its own SMs from its own HBM: all of them at once.
    return MetricsOfEveryGpu(ctx.Gpus(gpus), [&](int g) -> Result<std::vector<Metric>> {
      VIGIL_ASSIGN_OR_RETURN(const gpu::DeviceProps props, gpu::Props(g));
      std::vector<Metric> out;
      for (const gpu::GemmType type :
           {gpu::GemmType::kFp64, gpu::GemmType::kTf32, gpu::GemmType::kFp16, gpu::GemmType::kBf16,
            gpu::GemmType::kFp8}) {
        if (!GemmTypeSupported(type, props.cc_major, props.cc_minor)) continue;
        const std::string_view type_name = GemmTypeName(type);
        VIGIL_ASSIGN_OR_RETURN(const double error, gpu::GemmError(g, type, check));
        if (!(error <= GemmTolerance(type))) {
          return Status::Internal(fmt::format(
              "{} product computed wrong: largest relative error {:.3g} (tolerance {:.3g})",
              type_name, error, GemmTolerance(type)));
        }
        VIGIL_ASSIGN_OR_RETURN(std::vector<double> seconds,
                               gpu::TimeGemm(g, type, size, reps, warmup_s));
        const double flops = 2.0 * size * size * static_cast<double>(size);
        out.push_back(PerGpu(name(), fmt::format("{}_tflops", type_name), g, "TFLOP/s", true,
                             Rates(std::move(seconds), flops, 1e12)));
      }
      return out;
    });
  }
};

class GpuStress : public Benchmark {
 public:
  std::string_view name() const override { return "gpu-stress"; }
  std::string_view component() const override { return "gpu"; }
  std::string_view description() const override {
    return "sustained bf16 matrix multiplies on every GPU at once, every result compared with the "
           "first; lowest and median TFLOP/s, peak temperature, throttling";
  }
  std::vector<ParamSpec> params() const override {
    return {{"duration", ParamKind::kSeconds, "10", "120", "seconds of load"},
            {"size", ParamKind::kInt, "8192", "8192", "m = n = k of the products"}};
  }
  double time_limit_s(Suite suite) const override { return suite == Suite::kQuick ? 300 : 1800; }
  Status Available(const BenchContext&) const override { return CudaGpus().status(); }

  Result<std::vector<Metric>> Run(const BenchContext& ctx) const override {
    VIGIL_ASSIGN_OR_RETURN(const int gpus, gpu::DeviceCount());
    const int size = GemmSize(static_cast<int>(ctx.Param("size")));
    const double duration = ctx.Param("duration");
    const std::vector<int> selected = ctx.Gpus(gpus);
    // NVML numbers GPUs as CUDA does here (PCI bus order); without it, no temperatures.
    Result<std::unique_ptr<nvml::Library>> lib = nvml::Library::Load();
    std::vector<Result<gpu::StressRun>> runs(selected.size(), Status::Internal("not run"));
    std::vector<StressSamples> samples(selected.size());  // written by the sampler thread only
    {
      // One thread reads every GPU's NVML counters a few times a second (a reading is a dozen
      // calls), so that the threads that load the GPUs do nothing but enqueue products.
      std::optional<PeriodicThread> sampler;
      if (lib.ok()) {
        sampler.emplace(kStressSamplePeriod, [&] {
          for (size_t w = 0; w < selected.size(); ++w) {
            Result<nvml::HealthReading> r = (*lib)->Read(selected[w]);
            if (r.ok()) samples[w].Add(*r);
          }
        });
      }
      // Every GPU under load at once, one thread each, as in a training job: a node whose power
      // or cooling holds up for one GPU at a time may not hold up for all of them.
      RunWorkers(selected.size(), [&](size_t w) {
        runs[w] = gpu::Stress(selected[w], gpu::GemmType::kBf16, size, duration);
      });
    }  // the sampler stops with the load
    std::vector<Metric> out;
    for (size_t w = 0; w < selected.size(); ++w) {
      VIGIL_ASSIGN_OR_RETURN(gpu::StressRun run, std::move(runs[w]));
      VIGIL_ASSIGN_OR_RETURN(std::vector<Metric> m,
                             StressMetrics(selected[w], size, std::move(run), samples[w]));
      for (Metric& x : m) out.push_back(std::move(x));
    }
    return out;
  }
};

class NcclBench : public Benchmark {
 public:
  std::string_view name() const override { return "nccl"; }
  std::string_view component() const override { return "gpu"; }
  std::string_view description() const override {
    return "NCCL all-reduce, all-gather, reduce-scatter, all-to-all bus bandwidth across the "
           "node's GPUs (GB/s)";
  }
  std::vector<ParamSpec> params() const override {
    return {{"size", ParamKind::kBytes, "1G", "4G", "bytes per GPU (nccl-tests' size)"},
            {"repetitions", ParamKind::kInt, "10", "20", "timed runs of each collective"}};
  }
  double time_limit_s(Suite) const override { return 600; }

  Status Available(const BenchContext& ctx) const override {
    VIGIL_ASSIGN_OR_RETURN(const int count, CudaGpus());
    const size_t gpus = ctx.Gpus(count).size();
    if (gpus < 2) {
      return Status::Unavailable(fmt::format("needs two GPUs or more; {} to measure", gpus));
    }
    return Status::Ok();
  }

  Result<std::vector<Metric>> Run(const BenchContext& ctx) const override {
    VIGIL_ASSIGN_OR_RETURN(const int count, gpu::DeviceCount());
    const std::vector<int> gpus = ctx.Gpus(count);
    const int ranks = static_cast<int>(gpus.size());
    const int reps = std::max(1, static_cast<int>(ctx.Param("repetitions")));
    const auto whole = [&](double bytes) { return WholeFloatsPerRank(bytes, ranks); };
    // The communicators are set up once for every collective and size: that takes seconds.
    VIGIL_ASSIGN_OR_RETURN(const std::unique_ptr<gpu::Collectives> nccl,
                           gpu::Collectives::Open(gpus));
    VIGIL_RETURN_IF_ERROR(nccl->CheckAllReduce(whole(64 << 20)));
    const size_t size = whole(ctx.Param("size"));
    std::vector<Metric> out;
    const auto measure = [&](gpu::Collective op, size_t bytes, std::string metric) -> Status {
      VIGIL_ASSIGN_OR_RETURN(std::vector<double> seconds, nccl->Time(op, bytes, reps));
      std::vector<double> busbw = Rates(
          std::move(seconds), static_cast<double>(bytes) * BusBandwidthFactor(op, ranks), 1e9);
      out.push_back(MedianMetric(MetricKey{std::string(name()), std::move(metric), std::nullopt},
                                 "GB/s", true, std::move(busbw)));
      return Status::Ok();
    };
    for (const gpu::Collective op : {gpu::Collective::kAllReduce, gpu::Collective::kAllGather,
                                     gpu::Collective::kReduceScatter, gpu::Collective::kAllToAll}) {
      VIGIL_RETURN_IF_ERROR(measure(op, size, fmt::format("{}_busbw", CollectiveName(op))));
    }
    if (ctx.suite == Suite::kFull) {
      for (const size_t bytes : {size_t{1} << 20, size_t{32} << 20, size_t{256} << 20}) {
        const size_t b = whole(static_cast<double>(bytes));
        VIGIL_RETURN_IF_ERROR(
            measure(gpu::Collective::kAllReduce, b, fmt::format("allreduce_{}_busbw", b)));
      }
    }
    return out;
  }
};

class GpuCopy : public Benchmark {
 public:
  std::string_view name() const override { return "gpu-copy"; }
  std::string_view component() const override { return "gpu"; }
  std::string_view description() const override {
    return "host-GPU copies with pinned memory on the GPU's NUMA node, and GPU-GPU peer "
           "copies (GB/s)";
  }
  std::vector<ParamSpec> params() const override {
    return {{"size", ParamKind::kBytes, "256M", "1G", "bytes of each copy"},
            {"repetitions", ParamKind::kInt, "10", "30", "timed copies of each kind"}};
  }
  double time_limit_s(Suite) const override { return 600; }
  Status Available(const BenchContext&) const override { return CudaGpus().status(); }

  Result<std::vector<Metric>> Run(const BenchContext& ctx) const override {
    VIGIL_ASSIGN_OR_RETURN(const int gpus, gpu::DeviceCount());
    const size_t bytes = static_cast<size_t>(ctx.Param("size")) / 4 * 4;
    const int reps = std::max(1, static_cast<int>(ctx.Param("repetitions")));
    VIGIL_ASSIGN_OR_RETURN(const CpuTopology topology, ReadCpuTopology());
    const std::vector<int> selected = ctx.Gpus(gpus);
    std::vector<Metric> out;
    // Every path copies `bytes` at once: a bidirectional run moves twice as much.
    const auto time = [&](const std::vector<gpu::CopyPath>& paths, std::string_view metric,
                          ComponentIndex index) -> Status {
      VIGIL_ASSIGN_OR_RETURN(std::vector<double> seconds, gpu::TimeCopies(paths, bytes, reps));
      const double moved = static_cast<double>(bytes) * static_cast<double>(paths.size());
      out.push_back(MedianMetric(MetricKey{std::string(name()), std::string(metric), index}, "GB/s",
                                 true, Rates(std::move(seconds), moved, 1e9)));
      return Status::Ok();
    };
    // One copy at a time: host copies share host memory and PCIe switches, peer copies share
    // NVLink switches, so that copies at once would measure each other.
    for (const int g : selected) {
      VIGIL_ASSIGN_OR_RETURN(const gpu::DeviceProps props, gpu::Props(g));
      // Host memory and the thread that touches it first on the GPU's own NUMA node: a copy
      // across the socket link would measure that link.
      const int node = PciNumaNode("/sys", props.pci_bus_id);
      for (const NumaNode& n : topology.nodes) {
        if (n.id == node && !n.cpus.empty()) (void)PinThisThread(n.cpus.front());
      }
      for (const auto& [paths, metric] : HostCopies(g, ctx.suite)) {
        VIGIL_RETURN_IF_ERROR(time(paths, metric, ComponentIndex{g, {}}));
      }
    }
    for (const auto& [paths, metric] : PeerCopies(selected, ctx.suite)) {
      bool reachable = true;
      for (const gpu::CopyPath& p : paths) {
        VIGIL_ASSIGN_OR_RETURN(const bool peer, gpu::CanAccessPeer(p.src, p.dst));
        reachable = reachable && peer;
      }
      if (!reachable) continue;
      const ComponentIndex index{paths.front().src, paths.front().dst};
      VIGIL_RETURN_IF_ERROR(time(paths, metric, index));
    }
    return out;
  }
};

class GpuMemtest : public Benchmark {
 public:
  std::string_view name() const override { return "gpu-memtest"; }
  std::string_view component() const override { return "gpu"; }
  std::string_view description() const override {
    return "GPU memory test: 0x00, 0xFF, 0xAA, 0x55, address and random words written and read "
           "back over most of each GPU's free memory (words wrong)";
  }
  std::vector<ParamSpec> params() const override {
    return {{"fraction", ParamKind::kFraction, "0.1", "0.9", "share of each GPU's free memory"},
            {"max_size", ParamKind::kBytes, "4G", "1T", "bytes tested per GPU at most"},
            {"duration", ParamKind::kSeconds, "2", "30",
             "seconds of passes over every pattern (one pass at least)"}};
  }
  double time_limit_s(Suite suite) const override { return suite == Suite::kQuick ? 300 : 900; }
  Status Available(const BenchContext&) const override { return CudaGpus().status(); }

  Result<std::vector<Metric>> Run(const BenchContext& ctx) const override {
    VIGIL_ASSIGN_OR_RETURN(const int gpus, gpu::DeviceCount());
    const double fraction = ctx.Param("fraction");  // in (0, 1]: ParamKind::kFraction
    const auto most = static_cast<size_t>(ctx.Param("max_size"));
    const double duration = ctx.Param("duration");
    const std::vector<int> selected = ctx.Gpus(gpus);
    // Each GPU's warnings, logged once every GPU is done: Vigil's logger is single-threaded. Every
    // GPU's entry exists before the threads start, so that each thread writes only its own.
    std::map<int, std::vector<std::string>> warnings;
    for (const int g : selected) warnings.try_emplace(g);
    // Each GPU tests its own memory with its own SMs: all of them at once.
    Result<std::vector<Metric>> out =
        MetricsOfEveryGpu(selected, [&](int g) -> Result<std::vector<Metric>> {
          VIGIL_ASSIGN_OR_RETURN(const gpu::DeviceProps props, gpu::Props(g));
          const size_t bytes = gpu::MemtestBytes(props.free_bytes, fraction, most);
          if (bytes == 0) {
            return Status::InvalidArgument(
                fmt::format("nothing to test: {} of {} MiB free is less than a page", fraction,
                            props.free_bytes >> 20));
          }
          VIGIL_ASSIGN_OR_RETURN(const gpu::MemtestRun run, gpu::Memtest(g, bytes, duration));
          warnings.at(g) = MemtestReport(g, run);
          return MemtestMetrics(g, run);
        });
    for (const auto& [g, lines] : warnings) {
      for (const std::string& line : lines) spdlog::warn("{}", line);
    }
    return out;
  }
};

}  // namespace

Result<std::vector<Metric>> MetricsOfEveryGpu(
    const std::vector<int>& gpus, const std::function<Result<std::vector<Metric>>(int)>& measure) {
  std::vector<Result<std::vector<Metric>>> each(gpus.size(), Status::Internal("not run"));
  RunWorkers(gpus.size(), [&](size_t w) { each[w] = measure(gpus[w]); });
  std::vector<Metric> out;
  for (size_t w = 0; w < gpus.size(); ++w) {
    if (!each[w].ok()) return each[w].status().WithContext(fmt::format("GPU {}", gpus[w]));
    for (Metric& m : *each[w]) out.push_back(std::move(m));
  }
  return out;
}

int GemmSize(int requested) {
  return std::max(kGemmMultiple, requested / kGemmMultiple * kGemmMultiple);
}

std::vector<double> EvenlyPicked(std::vector<double> samples, size_t most) {
  const size_t n = samples.size();
  if (n <= most) return samples;
  std::vector<double> out;
  out.reserve(most);
  for (size_t i = 0; i < most; ++i) out.push_back(samples[i * (n - 1) / (most - 1)]);
  return out;
}

std::vector<std::pair<std::vector<gpu::CopyPath>, std::string_view>> PeerCopies(
    const std::vector<int>& gpus, Suite suite) {
  std::vector<std::pair<std::vector<gpu::CopyPath>, std::string_view>> out;
  const size_t n = gpus.size();
  if (n < 2) return out;
  if (suite == Suite::kQuick) {
    for (size_t i = 0; i < n; ++i) out.push_back({{{gpus[i], gpus[(i + 1) % n]}}, "p2p_gbps"});
    return out;
  }
  for (const int src : gpus) {
    for (const int dst : gpus) {
      if (src == dst) continue;
      out.push_back({{{src, dst}}, "p2p_gbps"});
      if (src < dst) out.push_back({{{src, dst}, {dst, src}}, "p2p_bidir_gbps"});
    }
  }
  return out;
}

std::vector<Metric> MemtestMetrics(int gpu, const gpu::MemtestRun& run) {
  return {PerGpu("gpu-memtest", "errors", gpu, "", false, {static_cast<double>(run.errors)}),
          PerGpu("gpu-memtest", "tested_gib", gpu, "GiB", true,
                 {static_cast<double>(run.tested_bytes) / (1ull << 30)})};
}

std::vector<std::string> MemtestReport(int gpu, const gpu::MemtestRun& run) {
  std::vector<std::string> out;
  if (run.errors == 0) return out;
  out.push_back(fmt::format(
      "GPU {}: gpu-memtest read {} words back wrong in {} passes over {:.1f} GiB; the first {}:",
      gpu, run.errors, run.passes, static_cast<double>(run.tested_bytes) / (1ull << 30),
      run.first.size()));
  for (const gpu::MemtestMismatch& m : run.first) {
    out.push_back(fmt::format(
        "GPU {}: byte offset {:#x}: expected {:#018x}, read {:#018x} (bits {:#018x} differ)", gpu,
        m.offset, m.expected, m.actual, m.expected ^ m.actual));
  }
  return out;
}

std::vector<std::pair<std::vector<gpu::CopyPath>, std::string_view>> HostCopies(int gpu,
                                                                                Suite suite) {
  std::vector<std::pair<std::vector<gpu::CopyPath>, std::string_view>> out = {
      {{{gpu::kHost, gpu}}, "h2d_gbps"}, {{{gpu, gpu::kHost}}, "d2h_gbps"}};
  if (suite == Suite::kFull) out.push_back({{{gpu::kHost, gpu}, {gpu, gpu::kHost}}, "bidir_gbps"});
  return out;
}

void StressSamples::Add(const nvml::HealthReading& r) {
  if (r.temperature_c) peak_c = std::max(peak_c.value_or(0), *r.temperature_c);
  if (r.throttle_reasons) {
    reasons |= *r.throttle_reasons;
    throttle_read = true;
  }
  if (r.pcie_gen) pcie_gen = std::max(pcie_gen.value_or(0), *r.pcie_gen);
}

Result<std::vector<Metric>> StressMetrics(int gpu, int size, gpu::StressRun run,
                                          const StressSamples& samples) {
  if (run.seconds.empty()) {
    return Status::Internal(fmt::format("GPU {}: gpu-stress timed no product", gpu));
  }
  const double flops = 2.0 * size * size * static_cast<double>(size);
  std::vector<double> tflops = Rates(std::move(run.seconds), flops, 1e12);
  const double lowest = *std::min_element(tflops.begin(), tflops.end());
  // Both figures are of every product; what is kept of them as samples is bounded.
  std::vector<double> kept = EvenlyPicked(tflops, kStressSamplesKept);
  std::vector<Metric> out;
  Metric median = PerGpu("gpu-stress", "median_tflops", gpu, "TFLOP/s", true, std::move(tflops));
  median.samples = kept;
  out.push_back(std::move(median));
  Metric low = PerGpu("gpu-stress", "min_tflops", gpu, "TFLOP/s", true, std::move(kept));
  low.value = lowest;
  out.push_back(std::move(low));
  out.push_back(
      PerGpu("gpu-stress", "miscompares", gpu, "", false, {static_cast<double>(run.miscompares)}));
  if (samples.peak_c) {
    out.push_back(PerGpu("gpu-stress", "peak_temperature_c", gpu, "C", false, {*samples.peak_c}));
  }
  if (samples.throttle_read) {
    const double throttled = (samples.reasons & nvml::throttle::kTrouble) != 0 ? 1 : 0;
    out.push_back(PerGpu("gpu-stress", "throttled", gpu, "", false, {throttled}));
  }
  if (samples.pcie_gen) {
    out.push_back(PerGpu("gpu-stress", "pcie_gen", gpu, "", true, {*samples.pcie_gen}));
  }
  return out;
}

Metric PerGpu(std::string_view bench, std::string_view metric, int index, std::string_view unit,
              bool higher_is_better, std::vector<double> samples) {
  return MedianMetric(MetricKey{std::string(bench), std::string(metric), ComponentIndex{index, {}}},
                      unit, higher_is_better, std::move(samples));
}

std::string_view GemmTypeName(gpu::GemmType type) {
  switch (type) {
    case gpu::GemmType::kFp64:
      return "fp64";
    case gpu::GemmType::kTf32:
      return "tf32";
    case gpu::GemmType::kFp16:
      return "fp16";
    case gpu::GemmType::kBf16:
      return "bf16";
    case gpu::GemmType::kFp8:
      return "fp8";
  }
  return "unknown";
}

bool GemmTypeSupported(gpu::GemmType type, int cc_major, int cc_minor) {
  const int cc = cc_major * 10 + cc_minor;
  return type == gpu::GemmType::kFp8 ? cc >= 89 : cc >= 80;
}

double GemmTolerance(gpu::GemmType type) {
  switch (type) {
    case gpu::GemmType::kFp64:
      return 1e-10;
    case gpu::GemmType::kTf32:  // inputs rounded to 10 fraction bits
      return 4e-3;
    case gpu::GemmType::kFp16:  // the output rounded to 10 fraction bits
      return 2e-3;
    case gpu::GemmType::kBf16:  // the output rounded to 7 fraction bits
    case gpu::GemmType::kFp8:   // fp8 inputs are exact in fp64; the output is bf16
      return 1e-2;
  }
  return 0;
}

std::string_view CollectiveName(gpu::Collective op) {
  switch (op) {
    case gpu::Collective::kAllReduce:
      return "allreduce";
    case gpu::Collective::kAllGather:
      return "allgather";
    case gpu::Collective::kReduceScatter:
      return "reducescatter";
    case gpu::Collective::kAllToAll:
      return "alltoall";
  }
  return "unknown";
}

Result<gpu::Collective> ParseCollective(std::string_view name) {
  std::string word(name);
  word.erase(std::remove(word.begin(), word.end(), '-'), word.end());
  for (const gpu::Collective op : {gpu::Collective::kAllReduce, gpu::Collective::kAllGather,
                                   gpu::Collective::kReduceScatter, gpu::Collective::kAllToAll}) {
    if (word == CollectiveName(op)) return op;
  }
  return Status::InvalidArgument(fmt::format(
      "\"{}\" is not a collective: all-reduce, all-gather, reduce-scatter, all-to-all", name));
}

size_t WholeFloatsPerRank(double bytes, int ranks) {
  const size_t unit = sizeof(float) * static_cast<size_t>(std::max(ranks, 1));
  if (!(bytes > 0)) return unit;
  return std::max(unit, static_cast<size_t>(bytes) / unit * unit);
}

Result<std::vector<double>> RunNodeCollective(const NodeCollectiveSpec& spec) {
  VIGIL_ASSIGN_OR_RETURN(const int count, gpu::DeviceCount());
  if (count != spec.ranks) {
    return Status::InvalidArgument(fmt::format(
        "this node has {} GPUs now and {} when its group was prepared", count, spec.ranks));
  }
  std::vector<int> gpus(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) gpus[static_cast<size_t>(i)] = i;
  VIGIL_ASSIGN_OR_RETURN(const std::unique_ptr<gpu::Collectives> nccl,
                         gpu::Collectives::Join(gpus, spec.first_rank, spec.world));
  const size_t bytes = WholeFloatsPerRank(static_cast<double>(spec.bytes), spec.world);
  // A wrong sum on this node is kept until the end: every member issues every collective.
  const Status checked = nccl->CheckAllReduce(WholeFloatsPerRank(64 << 20, spec.world));
  std::vector<double> busbw;
  for (const gpu::Collective op : spec.ops) {
    Result<std::vector<double>> timed =
        nccl->TimeFixed(op, bytes, spec.warmup, spec.iterations, std::max(spec.samples, 1));
    if (!timed.ok()) return checked.ok() ? timed.status() : checked;
    std::vector<double> seconds = std::move(*timed);
    std::vector<double> rates = Rates(
        std::move(seconds), static_cast<double>(bytes) * BusBandwidthFactor(op, spec.world), 1e9);
    busbw.push_back(stats::Median(rates));
  }
  VIGIL_RETURN_IF_ERROR(checked);
  return busbw;
}

double BusBandwidthFactor(gpu::Collective op, int ranks) {
  const double n = ranks;
  return op == gpu::Collective::kAllReduce ? 2 * (n - 1) / n : (n - 1) / n;
}

int PciNumaNode(const std::string& sysfs_root, std::string_view pci_bus_id) {
  std::string id(pci_bus_id);
  for (char& c : id) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  Result<std::string> text =
      ReadFile(fmt::format("{}/bus/pci/devices/{}/numa_node", sysfs_root, id));
  if (!text.ok()) return -1;
  char* end = nullptr;
  const long node = std::strtol(text->c_str(), &end, 10);
  return end == text->c_str() || node < 0 ? -1 : static_cast<int>(node);
}

double MembwBytesMoved(gpu::MembwKernel kernel, size_t bytes_per_array) {
  const int arrays = kernel == gpu::MembwKernel::kCopy ? 2 : 3;
  return static_cast<double>(arrays) * static_cast<double>(bytes_per_array);
}

Result<size_t> MembwArrayBytes(size_t requested, const gpu::DeviceProps& props, int arrays) {
  const size_t limit = props.free_bytes / 4 / static_cast<size_t>(arrays);
  const size_t bytes = std::min(requested, limit) / kAccess * kAccess;
  if (bytes < 8 * props.l2_bytes || bytes == 0) {
    return Status::InvalidArgument(fmt::format(
        "arrays of {} MiB ({} requested, {} MiB of GPU memory free) would not be 8x the {} MiB "
        "L2 cache",
        bytes >> 20, requested, props.free_bytes >> 20, props.l2_bytes >> 20));
  }
  return bytes;
}

std::unique_ptr<Benchmark> MakeGpuMembwBenchmark() { return std::make_unique<GpuMembw>(); }
std::unique_ptr<Benchmark> MakeGpuLaunchBenchmark() { return std::make_unique<GpuLaunch>(); }
std::unique_ptr<Benchmark> MakeGpuCopyBenchmark() { return std::make_unique<GpuCopy>(); }
std::unique_ptr<Benchmark> MakeNcclBenchmark() { return std::make_unique<NcclBench>(); }
std::unique_ptr<Benchmark> MakeGpuGemmBenchmark() { return std::make_unique<GpuGemm>(); }
std::unique_ptr<Benchmark> MakeGpuStressBenchmark() { return std::make_unique<GpuStress>(); }
std::unique_ptr<Benchmark> MakeGpuMemtestBenchmark() { return std::make_unique<GpuMemtest>(); }

}  // namespace vigil
