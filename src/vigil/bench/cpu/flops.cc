// cpu-flops: peak fused multiply-add throughput. Every core runs independent chains of
// x = x * m + a in as many vector registers as keep the FMA pipes full, with the widest vector
// unit the CPU has (AVX-512, else AVX2 with FMA, else SSE2 multiply and add), chosen at run time
// so that one binary runs on any x86-64. Each lane's result must equal, bit for bit, the same
// chain computed with scalar std::fma: a core that computes wrong answers fails the benchmark.

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "vigil/bench/cpu/cpu_benchmarks.h"
#include "vigil/bench/cpu/parallel.h"
#include "vigil/bench/cpu/topology.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace vigil {
namespace {

constexpr int kMaxAcc = 16;       // accumulators (vector registers) per thread, at most
constexpr size_t kMaxLanes = 16;  // fp32 lanes of a 512-bit register
constexpr uint64_t kMinIters = 1 << 12;
// Chain length of the verification pass: short enough for a cheap scalar reference, long enough
// that the chains are still far from their fixed point, where every bit of every step matters.
constexpr uint64_t kVerifyIters = 1 << 14;

// The chain's constants keep values near 1 (its fixed point is a / (1 - m) = 1), never denormal.
template <typename T>
constexpr T kMul = T(1) - T(1) / T(1 << 20);
template <typename T>
constexpr T kAddend = T(1) / T(1 << 20);

template <typename T>
T InitialValue(int acc) {
  return T(1) + T(acc) / T(32);
}

// out[j * lanes + l] receives lane l of accumulator j after `iters` steps.
template <typename T>
using KernelFn = void (*)(uint64_t iters, T* out);

struct Isa {
  const char* name;
  int vector_bits;
  bool fused;  // false: multiply then add (two roundings)
  int accumulators;
  KernelFn<float> f32;
  KernelFn<double> f64;
};

#if defined(__x86_64__)
// One kernel per ISA and precision. The inner loop over accumulators is unrolled so that they stay
// in registers; the loop-carried dependency per accumulator is the FMA latency.
#define VIGIL_FMA_KERNEL(NAME, TARGET, T, VEC, SET1, STORE, STEP, LANES, ACC) \
  __attribute__((target(TARGET))) void NAME(uint64_t iters, T* out) {         \
    VEC acc[ACC];                                                             \
    for (int j = 0; j < ACC; ++j) acc[j] = SET1(InitialValue<T>(j));          \
    const VEC m = SET1(kMul<T>);                                              \
    const VEC a = SET1(kAddend<T>);                                           \
    for (uint64_t i = 0; i < iters; ++i) {                                    \
      _Pragma("GCC unroll 16") for (int j = 0; j < ACC; ++j) acc[j] = STEP;   \
    }                                                                         \
    for (int j = 0; j < ACC; ++j) STORE(out + j * (LANES), acc[j]);           \
  }

VIGIL_FMA_KERNEL(Avx512F32, "avx512f", float, __m512, _mm512_set1_ps, _mm512_storeu_ps,
                 _mm512_fmadd_ps(acc[j], m, a), 16, 16)
VIGIL_FMA_KERNEL(Avx512F64, "avx512f", double, __m512d, _mm512_set1_pd, _mm512_storeu_pd,
                 _mm512_fmadd_pd(acc[j], m, a), 8, 16)
VIGIL_FMA_KERNEL(Avx2F32, "avx2,fma", float, __m256, _mm256_set1_ps, _mm256_storeu_ps,
                 _mm256_fmadd_ps(acc[j], m, a), 8, 12)
VIGIL_FMA_KERNEL(Avx2F64, "avx2,fma", double, __m256d, _mm256_set1_pd, _mm256_storeu_pd,
                 _mm256_fmadd_pd(acc[j], m, a), 4, 12)
VIGIL_FMA_KERNEL(Sse2F32, "sse2", float, __m128, _mm_set1_ps, _mm_storeu_ps,
                 _mm_add_ps(_mm_mul_ps(acc[j], m), a), 4, 12)
VIGIL_FMA_KERNEL(Sse2F64, "sse2", double, __m128d, _mm_set1_pd, _mm_storeu_pd,
                 _mm_add_pd(_mm_mul_pd(acc[j], m), a), 2, 12)
#undef VIGIL_FMA_KERNEL

Isa DetectIsa() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) {
    return {"avx512f", 512, true, 16, Avx512F32, Avx512F64};
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    return {"avx2+fma", 256, true, 12, Avx2F32, Avx2F64};
  }
  return {"sse2", 128, false, 12, Sse2F32, Sse2F64};
}
#else
template <typename T>
void ScalarKernel(uint64_t iters, T* out) {
  T acc[12];
  for (int j = 0; j < 12; ++j) acc[j] = InitialValue<T>(j);
  for (uint64_t i = 0; i < iters; ++i) {
    for (int j = 0; j < 12; ++j) acc[j] = std::fma(acc[j], kMul<T>, kAddend<T>);
  }
  std::copy(acc, acc + 12, out);
}
Isa DetectIsa() {
  return {"scalar",
          static_cast<int>(8 * sizeof(double)),
          true,
          12,
          ScalarKernel<float>,
          ScalarKernel<double>};
}
#endif

// Checks the lanes of one thread's verification pass against scalar arithmetic.
template <typename T>
Status Verify(const Isa& isa, const T* out, size_t thread) {
  const size_t lanes = static_cast<size_t>(isa.vector_bits) / (8 * sizeof(T));
  for (int j = 0; j < isa.accumulators; ++j) {
    T want = InitialValue<T>(j);
    for (uint64_t i = 0; i < kVerifyIters; ++i) {
      want = isa.fused ? std::fma(want, kMul<T>, kAddend<T>) : want * kMul<T> + kAddend<T>;
    }
    for (size_t l = 0; l < lanes; ++l) {
      const T got = out[static_cast<size_t>(j) * lanes + l];
      if (std::memcmp(&got, &want, sizeof(T)) != 0) {
        return Status::Internal(fmt::format(
            "verification failed: thread {}: fp{} {} lane {} of accumulator {} is {} (expected {})",
            thread, 8 * sizeof(T), isa.name, l, j, got, want));
      }
    }
  }
  return Status::Ok();
}

// Measures one precision: checks every thread's arithmetic on a short chain, calibrates the chain
// length to `round_s`, times `reps` rounds, and checks that all threads agree on the result.
template <typename T>
Result<std::vector<double>> Measure(const Isa& isa, KernelFn<T> kernel, PinnedTeam& team,
                                    double round_s, int reps) {
  constexpr size_t kStride = kMaxAcc * kMaxLanes;
  std::vector<T> out(team.size() * kStride);
  team.Run([&](size_t t) { kernel(kVerifyIters, out.data() + t * kStride); });
  for (size_t t = 0; t < team.size(); ++t) {
    VIGIL_RETURN_IF_ERROR(Verify<T>(isa, out.data() + t * kStride, t));
  }
  uint64_t iters = kMinIters;
  const auto round = [&] {
    return team.Run([&](size_t t) { kernel(iters, out.data() + t * kStride); });
  };
  while (round() < round_s / 4 && iters < (uint64_t{1} << 40)) iters *= 2;
  const double lanes = static_cast<double>(isa.vector_bits) / (8.0 * sizeof(T));
  const double flops = 2.0 * lanes * isa.accumulators * static_cast<double>(iters) *
                       static_cast<double>(team.size());
  std::vector<double> gflops;
  for (int r = 0; r < reps; ++r) gflops.push_back(flops / round() / 1e9);
  for (size_t t = 1; t < team.size(); ++t) {
    if (std::memcmp(out.data(), out.data() + t * kStride, kStride * sizeof(T)) != 0) {
      return Status::Internal(fmt::format(
          "verification failed: thread {} computed a different fp{} result than thread 0", t,
          8 * sizeof(T)));
    }
  }
  return gflops;
}

class CpuFlops : public Benchmark {
 public:
  std::string_view name() const override { return "cpu-flops"; }
  std::string_view component() const override { return "cpu"; }
  std::string_view description() const override {
    return "fp32/fp64 fused multiply-add throughput on all cores, widest vector unit (GFLOP/s)";
  }
  std::vector<ParamSpec> params() const override {
    return {
        {"round_time", ParamKind::kSeconds, "0.2", "1", "seconds per timed round"},
        {"repetitions", ParamKind::kInt, "5", "20", "timed rounds per precision"},
        {"threads", ParamKind::kInt, "0", "0", "threads; 0 = one per CPU"},
    };
  }
  double time_limit_s(Suite suite) const override { return suite == Suite::kQuick ? 60 : 600; }
  Status Available(const BenchContext&) const override { return Status::Ok(); }

  Result<std::vector<Metric>> Run(const BenchContext& ctx) const override {
    VIGIL_ASSIGN_OR_RETURN(CpuTopology topo, ReadCpuTopology());
    const std::vector<int> cpus = topo.FirstCpus(static_cast<size_t>(ctx.Param("threads")));
    const int reps = std::max(1, static_cast<int>(ctx.Param("repetitions")));
    const double round_s = ctx.Param("round_time");
    const Isa isa = DetectIsa();
    PinnedTeam team(cpus);
    VIGIL_ASSIGN_OR_RETURN(std::vector<double> f32,
                           Measure<float>(isa, isa.f32, team, round_s, reps));
    VIGIL_ASSIGN_OR_RETURN(std::vector<double> f64,
                           Measure<double>(isa, isa.f64, team, round_s, reps));
    std::vector<Metric> metrics;
    metrics.push_back(MedianMetric(MetricKey{"cpu-flops", "fp32_gflops", std::nullopt}, "GFLOP/s",
                                   true, std::move(f32)));
    metrics.push_back(MedianMetric(MetricKey{"cpu-flops", "fp64_gflops", std::nullopt}, "GFLOP/s",
                                   true, std::move(f64)));
    metrics.push_back({MetricKey{"cpu-flops", "vector_bits", std::nullopt},
                       static_cast<double>(isa.vector_bits),
                       "bits",
                       true,
                       {}});
    return metrics;
  }
};

}  // namespace

std::unique_ptr<Benchmark> MakeCpuFlopsBenchmark() { return std::make_unique<CpuFlops>(); }

}  // namespace vigil
