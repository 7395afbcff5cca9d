// cpu-latency: idle memory latency. One thread follows a chain of pointers through cache lines
// linked in a random cyclic order, so that every load depends on the one before and neither the
// prefetchers nor out-of-order execution can hide the trip to memory. The buffer is far larger
// than the last-level cache and asks for huge pages, so that the figure is DRAM latency rather
// than cache hits or page walks (as Intel MLC's idle latency does).

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <random>

#include "vigil/bench/cpu/cpu_benchmarks.h"
#include "vigil/bench/cpu/parallel.h"
#include "vigil/bench/cpu/topology.h"

namespace vigil {
namespace {

constexpr size_t kLine = 64;
constexpr size_t kMinBufferBytes = 256u << 20;
constexpr size_t kBufferLlcMultiple = 8;
constexpr uint64_t kSeed = 0x5eed'1a7e'0c4a'11ed;

struct alignas(kLine) Line {
  Line* next;
  char pad[kLine - sizeof(Line*)];
};
static_assert(sizeof(Line) == kLine);

// Follows `steps` links from `start` and returns where it ends.
__attribute__((noinline)) const Line* Chase(const Line* start, size_t steps) {
  const Line* p = start;
  size_t i = 0;
  for (; i + 8 <= steps; i += 8) {
    p = p->next;
    p = p->next;
    p = p->next;
    p = p->next;
    p = p->next;
    p = p->next;
    p = p->next;
    p = p->next;
  }
  for (; i < steps; ++i) p = p->next;
  return p;
}

class CpuLatency : public Benchmark {
 public:
  std::string_view name() const override { return "cpu-latency"; }
  std::string_view component() const override { return "memory"; }
  std::string_view description() const override {
    return "idle DRAM latency by a dependent pointer chase through random cache lines (ns)";
  }
  std::vector<ParamSpec> params() const override {
    return {
        {"buffer_size", ParamKind::kBytes, "0", "0",
         "bytes chased; 0 = 8x the last-level caches, at least 256M"},
        {"repetitions", ParamKind::kInt, "5", "15", "timed stretches of the chain"},
        // A stretch of a random cycle visits random lines of the whole buffer, so a few million
        // loads give the mean latency as a whole pass does. Whole passes took 70 s on a host
        // with a 260-MiB last-level cache (a 2-GiB chain, 5 passes of 33.5 M loads at 0.39 us),
        // longer than a quick validation may take.
        {"loads", ParamKind::kInt, "1048576", "1048576",
         "dependent loads timed per repetition (the whole chain where it is shorter)"},
    };
  }
  double time_limit_s(Suite suite) const override { return suite == Suite::kQuick ? 120 : 600; }
  Status Available(const BenchContext&) const override { return Status::Ok(); }

  Result<std::vector<Metric>> Run(const BenchContext& ctx) const override {
    VIGIL_ASSIGN_OR_RETURN(CpuTopology topo, ReadCpuTopology());
    size_t bytes = static_cast<size_t>(ctx.Param("buffer_size"));
    if (bytes == 0) bytes = std::max(kMinBufferBytes, kBufferLlcMultiple * topo.llc_bytes_total);
    const size_t lines = std::max<size_t>(bytes / kLine, 2);
    const int reps = std::max(1, static_cast<int>(ctx.Param("repetitions")));
    const auto timed = static_cast<size_t>(std::max(1.0, ctx.Param("loads")));
    // Pin to the first CPU; its first touch puts the buffer on its own NUMA node.
    (void)PinThisThread(topo.AllCpus().front());

    VIGIL_ASSIGN_OR_RETURN(PageBuffer buf, PageBuffer::Allocate(lines * kLine));
    Line* base = buf.As<Line>();
    std::vector<uint32_t> order(lines);
    std::iota(order.begin(), order.end(), 0u);
    std::mt19937_64 rng(kSeed);
    std::shuffle(order.begin() + 1, order.end(), rng);  // line 0 starts the cycle
    for (size_t i = 0; i < lines; ++i) base[order[i]].next = &base[order[(i + 1) % lines]];

    // Every stretch must end on the line the cycle's order puts that many steps on: a broken or
    // stray link sends the chase elsewhere. `at` is the position in `order` of where it stands.
    size_t at = 0;
    const Line* where = base;
    const auto chase = [&](size_t steps) {
      where = Chase(where, steps);
      at = (at + steps) % lines;
      return where == &base[order[at]];
    };
    const auto broken = [] {
      return Status::Internal("verification failed: the pointer chain is not one random cycle");
    };
    // Warm-up: a quarter of the chain, at most one timed stretch (TLB, page faults already taken
    // above by the links).
    if (!chase(std::min(lines / 4, timed))) return broken();
    const size_t steps = std::min(lines, timed);
    std::vector<double> ns;
    for (int r = 0; r < reps; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      const bool ok = chase(steps);
      const auto t1 = std::chrono::steady_clock::now();
      if (!ok) return broken();
      ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() /
                   static_cast<double>(steps));
    }
    return std::vector<Metric>{MedianMetric(
        MetricKey{"cpu-latency", "idle_latency_ns", std::nullopt}, "ns", false, std::move(ns))};
  }
};

}  // namespace

std::unique_ptr<Benchmark> MakeCpuLatencyBenchmark() { return std::make_unique<CpuLatency>(); }

}  // namespace vigil
