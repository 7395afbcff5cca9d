// cpu-stream: the four STREAM kernels (McCalpin), counted as STREAM counts them: copy and scale
// move 2 x 8 bytes per element, add and triad 3 x 8 (write-allocate traffic is not counted).
// Stores bypass the caches (non-temporal), as the best STREAM builds and glibc's large memcpy do,
// so the figures are what the memory system delivers rather than what write-allocate leaves.

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "vigil/bench/cpu/cpu_benchmarks.h"
#include "vigil/bench/cpu/parallel.h"
#include "vigil/bench/cpu/topology.h"

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace vigil {
namespace {

constexpr double kScalar = 3.0;
constexpr size_t kMinArrayBytes = 128u << 20;  // floor when sysfs does not give the LLC size
constexpr size_t kArrayLlcMultiple = 4;        // STREAM's rule: each array >= 4x all LLCs
constexpr size_t kChunk = 8;                   // elements: thread ranges stay 64-byte aligned
constexpr double kTolerance = 1e-12;           // relative, per element

enum Kernel { kCopy, kScale, kAdd, kTriad, kKernels };
constexpr std::array<const char*, kKernels> kKernelNames = {"copy", "scale", "add", "triad"};
constexpr std::array<double, kKernels> kBytesPerElement = {16, 16, 24, 24};

struct Arrays {
  double* a;
  double* b;
  double* c;
};

#if defined(__x86_64__)
// dst[i] = s * x[i] + y[i] with y optional, streaming stores. Ranges are 16-byte aligned.
void StreamKernel(double* dst, const double* x, double s, const double* y, size_t n) {
  const __m128d vs = _mm_set1_pd(s);
  for (size_t i = 0; i < n; i += 2) {
    __m128d v = _mm_load_pd(x + i);
    if (s != 1.0) v = _mm_mul_pd(v, vs);
    if (y != nullptr) v = _mm_add_pd(_mm_load_pd(y + i), v);
    _mm_stream_pd(dst + i, v);
  }
  _mm_sfence();
}
#else
void StreamKernel(double* dst, const double* x, double s, const double* y, size_t n) {
  for (size_t i = 0; i < n; ++i) dst[i] = (y != nullptr ? y[i] : 0.0) + s * x[i];
}
#endif

void RunKernel(Kernel k, const Arrays& v, size_t b, size_t e) {
  switch (k) {
    case kCopy:
      std::memcpy(v.c + b, v.a + b, (e - b) * sizeof(double));
      break;
    case kScale:
      StreamKernel(v.b + b, v.c + b, kScalar, nullptr, e - b);
      break;
    case kAdd:
      StreamKernel(v.c + b, v.b + b, 1.0, v.a + b, e - b);
      break;
    case kTriad:
      StreamKernel(v.a + b, v.c + b, kScalar, v.b + b, e - b);
      break;
    default:
      break;
  }
}

// Checks every element against the values STREAM's recurrence gives after `iterations` rounds.
Status Verify(const Arrays& v, size_t n, int iterations) {
  double a = 1.0, b = 2.0, c = 0.0;
  for (int i = 0; i < iterations; ++i) {
    c = a;
    b = kScalar * c;
    c = a + b;
    a = b + kScalar * c;
  }
  const std::array<std::pair<const double*, double>, 3> expect = {
      std::pair{v.a, a}, std::pair{v.b, b}, std::pair{v.c, c}};
  for (size_t j = 0; j < expect.size(); ++j) {
    const auto [arr, want] = expect[j];
    for (size_t i = 0; i < n; ++i) {
      if (std::fabs(arr[i] - want) > kTolerance * std::fabs(want)) {
        return Status::Internal(
            fmt::format("verification failed: array {} element {} is {} (expected {})", "abc"[j], i,
                        arr[i], want));
      }
    }
  }
  return Status::Ok();
}

// Measures the four kernels on `cpus` with arrays of n doubles. Returns GB/s samples per kernel.
Result<std::array<std::vector<double>, kKernels>> Measure(const std::vector<int>& cpus, size_t n,
                                                          int repetitions) {
  VIGIL_ASSIGN_OR_RETURN(PageBuffer buf, PageBuffer::Allocate(3 * n * sizeof(double)));
  const Arrays v{buf.As<double>(), buf.As<double>() + n, buf.As<double>() + 2 * n};
  PinnedTeam team(cpus);
  const size_t chunks = n / kChunk;
  const auto range = [&](size_t t) {
    const Range r = SplitRange(chunks, team.size(), t);
    return Range{r.begin * kChunk, r.end * kChunk};
  };
  // First touch by the thread that will use each page places it on that thread's node.
  team.Run([&](size_t t) {
    const Range r = range(t);
    std::fill(v.a + r.begin, v.a + r.end, 1.0);
    std::fill(v.b + r.begin, v.b + r.end, 2.0);
    std::fill(v.c + r.begin, v.c + r.end, 0.0);
  });
  std::array<std::vector<double>, kKernels> gbps;
  // Round 0 warms up (page faults, frequency ramp) and is not recorded, as in STREAM.
  for (int rep = 0; rep <= repetitions; ++rep) {
    for (int k = 0; k < kKernels; ++k) {
      const double s = team.Run([&](size_t t) {
        const Range r = range(t);
        RunKernel(static_cast<Kernel>(k), v, r.begin, r.end);
      });
      if (rep > 0) gbps[k].push_back(kBytesPerElement[k] * static_cast<double>(n) / s / 1e9);
    }
  }
  VIGIL_RETURN_IF_ERROR(Verify(v, n, repetitions + 1));
  return gbps;
}

class CpuStream : public Benchmark {
 public:
  std::string_view name() const override { return "cpu-stream"; }
  std::string_view component() const override { return "memory"; }
  std::string_view description() const override {
    return "STREAM copy/scale/add/triad memory bandwidth on all cores, per NUMA node (GB/s)";
  }
  std::vector<ParamSpec> params() const override {
    return {
        {"array_size", ParamKind::kBytes, "0", "0",
         "bytes per array; 0 = 4x the last-level caches, at least 128M"},
        {"repetitions", ParamKind::kInt, "10", "30", "timed rounds of the four kernels"},
        {"threads", ParamKind::kInt, "0", "0",
         "threads for the whole-node figure; 0 = one per CPU"},
    };
  }
  double time_limit_s(Suite suite) const override { return suite == Suite::kQuick ? 120 : 600; }
  Status Available(const BenchContext&) const override { return Status::Ok(); }

  Result<std::vector<Metric>> Run(const BenchContext& ctx) const override {
    VIGIL_ASSIGN_OR_RETURN(CpuTopology topo, ReadCpuTopology());
    size_t bytes = static_cast<size_t>(ctx.Param("array_size"));
    if (bytes == 0) bytes = std::max(kMinArrayBytes, kArrayLlcMultiple * topo.llc_bytes_total);
    const size_t n = std::max<size_t>(bytes / sizeof(double) / kChunk, 1) * kChunk;
    const int reps = std::max(1, static_cast<int>(ctx.Param("repetitions")));

    const std::vector<int> cpus = topo.FirstCpus(static_cast<size_t>(ctx.Param("threads")));

    std::vector<Metric> metrics;
    const auto add = [&](const std::array<std::vector<double>, kKernels>& gbps,
                         std::optional<int> node) {
      for (int k = 0; k < kKernels; ++k) {
        metrics.push_back(
            MedianMetric(MetricKey{"cpu-stream", fmt::format("{}_gbps", kKernelNames[k]),
                                   node ? std::optional(ComponentIndex{*node, {}}) : std::nullopt},
                         "GB/s", true, gbps[k]));
      }
    };
    VIGIL_ASSIGN_OR_RETURN(auto whole, Measure(cpus, n, reps));
    add(whole, std::nullopt);
    if (topo.nodes.size() > 1) {
      for (const NumaNode& node : topo.nodes) {
        VIGIL_ASSIGN_OR_RETURN(auto local, Measure(node.cpus, n, reps));
        add(local, node.id);
      }
    }
    return metrics;
  }
};

}  // namespace

std::unique_ptr<Benchmark> MakeCpuStreamBenchmark() { return std::make_unique<CpuStream>(); }

}  // namespace vigil
