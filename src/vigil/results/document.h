// The node results document: what `vigil run --out` writes for one node (docs/formats.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "vigil/core/json.h"
#include "vigil/core/status.h"
#include "vigil/results/metric_key.h"

namespace vigil {

// Identifies the document format; readers reject any other value.
inline constexpr std::string_view kResultsSchema = "vigil.results/1";

// One figure a benchmark produced.
struct Metric {
  MetricKey key;
  double value = 0.0;  // the reported figure (usually the median of `samples`); NaN if missing
  std::string unit;    // "GB/s", "ns", "GFLOP/s", "MB/s", "IOPS", "" for counts and codes
  bool higher_is_better = true;
  std::vector<double> samples;  // the raw repetitions behind `value`, in measurement order
};

enum class BenchStatus {
  kOk,       // ran and its results verified
  kFailed,   // ran and failed: error, wrong result, crash or time-out (see return_code)
  kSkipped,  // cannot run on this node (no GPU, unsupported filesystem...); `error` says why
};

std::string_view BenchStatusName(BenchStatus status);

// Return codes of a benchmark record (docs/formats.md).
namespace return_code {
inline constexpr int kOk = 0;
inline constexpr int kFailed = 1;        // the benchmark reported an error
inline constexpr int kTimeout = 124;     // killed at its time limit (as timeout(1) reports it)
inline constexpr int kSignalBase = 128;  // + signal number when it crashed
}  // namespace return_code

struct BenchmarkRecord {
  std::string name;       // registry name, e.g. "cpu-stream"
  std::string component;  // what it covers: "cpu", "memory", "disk", "gpu", "network"...
  BenchStatus status = BenchStatus::kOk;
  int return_code = return_code::kOk;
  std::string error;  // why it failed or was skipped; empty when ok
  double duration_s = 0.0;
  std::vector<Metric> metrics;
};

struct GpuInfo {
  int index = 0;
  std::string name;
  std::string bus_id;
};

// An NVIDIA GPU as PCI shows it, whatever its driver does (sysfs).
struct PciGpuInfo {
  std::string bus_id;  // "0000:19:00.0"
  std::string driver;  // the kernel driver bound to it ("nvidia", "vfio-pci"); "" when none
  std::optional<double> link_width, link_width_max;          // lanes, current and maximum
  std::optional<double> link_speed_gts, link_speed_max_gts;  // GT/s, current and maximum
};

struct Inventory {
  std::string hostname;
  std::string cpu_model;
  int sockets = 0;
  int cores = 0;    // physical cores, all sockets
  int threads = 0;  // logical CPUs online
  int numa_nodes = 0;
  std::vector<std::string>
      cpu_vector_extensions;  // vector extensions the CPU has (avx2, avx512f...)
  double memory_bytes = 0;
  std::string kernel;
  std::string os;
  std::string gpu_driver;            // empty when no NVIDIA driver is loaded
  std::vector<GpuInfo> gpus;         // as the NVIDIA driver lists them
  std::vector<PciGpuInfo> pci_gpus;  // as PCI lists them, in bus id order
};

struct NodeResults {
  std::string node;
  std::string vigil_version;
  std::string suite;
  std::string start_time;  // ISO 8601 UTC
  std::string end_time;
  Inventory inventory;
  std::vector<BenchmarkRecord> benchmarks;
};

// The benchmarks the document's node ran (failed or not; the skipped left out), in its order:
// the criteria that apply to the node.
std::vector<std::string> BenchmarksRun(const NodeResults& doc);

Json ToJson(const NodeResults& doc);
Json ToJson(const BenchmarkRecord& record);

// Reads a results document from JSON text. InvalidArgument "<source>:<line>:<column>: <reason>"
// for text that is not JSON, "<source>: <field path>: <problem>" for a document that is not valid.
Result<NodeResults> ParseNodeResults(std::string_view text, std::string_view source);

// Reads `text` as ParseNodeResults does when it is one JSON object with a "schema" field (a
// results document, valid or not: an invalid one is its error); nullopt for any other text, which
// the caller may read another way (a summary's lines). One parse either way.
Result<std::optional<NodeResults>> ParseIfResultsDocument(std::string_view text,
                                                          std::string_view source);

// Reads one benchmark record (what a benchmark prints); errors name fields from "record".
Result<BenchmarkRecord> ParseBenchmarkRecord(std::string_view text, std::string_view source);

// Reads and validates a document file.
Result<NodeResults> ReadNodeResults(const std::string& path);

// Writes the document atomically (complete or absent), pretty-printed.
Status WriteNodeResults(const std::string& path, const NodeResults& doc);

}  // namespace vigil
