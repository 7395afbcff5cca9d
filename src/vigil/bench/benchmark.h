// The Benchmark interface: a self-describing measurement of one component of a node
// (nvbandwidth's testcase.h). Benchmarks are measurement only; printing and storing their results
// belongs to the sinks (the CLI table, the results document).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "vigil/core/status.h"
#include "vigil/results/document.h"

namespace vigil {

enum class Suite {
  kHealth,  // seconds: a scheduler's health check, prolog or epilog (the driver's readings, a
            // short checked product per GPU, host memory and disk space)
  kQuick,   // minutes at most; what `vigil run` does by default
  kFull,    // longer and more thorough: larger sizes, sweeps, more repetitions
};

std::string_view SuiteName(Suite suite);
Result<Suite> ParseSuite(std::string_view name);

enum class ParamKind {
  kInt,      // a non-negative integer, at most 1048576 (repetitions, threads, matrix sizes)
  kBytes,    // a size with an optional binary suffix: 4096, 4K, 256M, 2G; at most 16T
  kSeconds,  // a duration in seconds, fractional allowed; at most a day
  kFraction  // a share, greater than 0 and at most 1
};

// A tunable of one benchmark, set from the command line as --set <benchmark>.<name>=<value>.
struct ParamSpec {
  std::string name;
  ParamKind kind = ParamKind::kInt;
  std::string quick_default;  // the value in the quick suite
  std::string full_default;   // the value in the full suite
  std::string help;
  std::string health_default = "";  // the value in the health suite; "": the quick suite's

  const std::string& Default(Suite suite) const;  // the value in `suite`
};

// Parses a value of the given kind. InvalidArgument naming the value when it does not parse or
// lies outside the kind's range.
Result<double> ParseParamValue(ParamKind kind, std::string_view value);

// The usual figure of a benchmark: the median of its timed repetitions, which it keeps as samples.
Metric MedianMetric(MetricKey key, std::string_view unit, bool higher_is_better,
                    std::vector<double> samples);

// What a benchmark gets to run with. Built by the runner; benchmarks only read it.
struct BenchContext {
  Suite suite = Suite::kQuick;
  // In Available(): the scratch root the user chose. In Run(): a private directory inside it,
  // created for this benchmark and removed by the runner afterwards, whatever happens.
  std::string scratch_dir;
  // Every declared parameter, parsed: the suite's default unless the user set it.
  std::map<std::string, double> params;
  // The GPUs to measure, by NVML's index (CUDA is set to the same, PCI bus order); empty: all.
  std::vector<int> gpus;

  // The value of a declared parameter. REQUIRES: `name` is one of the benchmark's params().
  double Param(const std::string& name) const { return params.at(name); }
  // The GPUs to measure on a node with `count` of them.
  std::vector<int> Gpus(int count) const;
};

class Benchmark {
 public:
  virtual ~Benchmark() = default;

  // A stable name, used in metric keys and on the command line ("cpu-stream").
  virtual std::string_view name() const = 0;
  // The component covered: "cpu", "memory", "disk", "gpu", "network".
  virtual std::string_view component() const = 0;
  // One line for `vigil bench list`.
  virtual std::string_view description() const = 0;
  // Whether the quick suite includes it (the full suite includes every benchmark).
  virtual bool in_quick_suite() const { return true; }
  // Whether the health suite includes it: only what takes seconds and reads a fault directly.
  virtual bool in_health_suite() const { return false; }
  virtual std::vector<ParamSpec> params() const { return {}; }
  // How long a run may take before the runner kills it.
  virtual double time_limit_s(Suite suite) const = 0;

  // OK when the benchmark can run on this node; Unavailable with the reason otherwise (the
  // benchmark is then recorded as skipped, never failed). Cheap and free of side effects.
  virtual Status Available(const BenchContext& ctx) const = 0;

  // Measures and returns the metrics, each with its raw samples, after checking that what was
  // measured was computed correctly. An error fails the benchmark with that message.
  // Const: a benchmark keeps no state between runs. Runs in a child process of its own (see
  // runner.h): it may use all cores and any amount of memory, and a crash or hang affects only its
  // own record.
  virtual Result<std::vector<Metric>> Run(const BenchContext& ctx) const = 0;
};

}  // namespace vigil
