// A generator of realistic fleet results with planted defects of known component and size: the
// ground truth for evaluating validators (`vigil simulate fleet`, docs/validate.md). Metric means
// are Azure's published NDv4 (8x A100) quick-scan baseline; spreads, sweeps and the second
// hardware class are modelled (documented assumptions, not measurements).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vigil/core/status.h"
#include "vigil/results/document.h"
#include "vigil/results/summary.h"

namespace vigil::eval {

struct FleetGenOptions {
  int64_t nodes = 1000;
  double defect_rate = 0.05;   // share of nodes with a planted defect
  double noisy_rate = 0.05;    // healthy nodes with twice the jitter and a node-wide offset
  double missing_rate = 0.01;  // nodes where one benchmark did not run at all
  double second_class = 0.15;  // share of nodes of the second hardware class (8x H100)
  int sweep_points = 8;        // message sizes of the IB and NCCL sweeps
  uint64_t seed = 1;
};

// What a planted fault does.
enum class DefectKind {
  kGpu,       // a GPU computes slower
  kPcie,      // a GPU's host link is slower
  kNic,       // a NIC is slower at every message size
  kNicLarge,  // a NIC is slower at large messages (a link trained at a lower rate)
  kNvlink,    // the node's NVLink collective is slower at bandwidth-bound sizes
  kFail,      // a benchmark fails
  kMissing,   // a benchmark did not run at all
};
// "gpu", "pcie", "nic", "nic-large", "nvlink", "fail", "missing": the truth CSV's kind field.
std::string_view DefectKindName(DefectKind kind);
// The inverse of DefectKindName; InvalidArgument naming the text for anything else.
Result<DefectKind> ParseDefectKind(std::string_view text);

// One planted fault: which node, which component (as Anatomize names it), what and how large.
struct PlantedDefect {
  std::string node;
  std::string component;
  DefectKind kind = DefectKind::kGpu;
  double size = 0;  // relative loss (0.05: 5% slower); 1 for fail and missing
};

struct GeneratedFleet {
  std::vector<FleetRow> rows;
  std::vector<PlantedDefect> truth;
};

// The fleet is built in memory, about 150 bytes per value; each node has 9 x sweep_points + 114
// metrics. At most this many values in one fleet (some 3 GB, a 1.1 GB summary file;
// perf/validate.sh generates 10,000 nodes x 1,005 metrics).
inline constexpr double kMaxFleetValues = 2e7;

// InvalidArgument for nodes outside [1, 10,000,000], rates outside [0, 1], sweep points outside
// [1, 1000], or more than kMaxFleetValues values in all.
Result<GeneratedFleet> GenerateFleet(const FleetGenOptions& options);

// A node results document that carries one generated row, as `vigil run --out` would write it
// on that node: one record per benchmark (its metrics with `samples` repetitions within 0.5% of
// the value, its return code), and an inventory with the row's GPUs. FleetRowOf gives the row
// back. For tests and load generators of the fleet service.
NodeResults NodeDocumentOf(const FleetRow& row, int samples, uint64_t seed);

// The truth CSV: "node,component,kind,size" with a header.
std::string FormatTruth(const std::vector<PlantedDefect>& truth);
// InvalidArgument "<source>:<line>: ..." for a malformed line.
Result<std::vector<PlantedDefect>> ParseTruth(std::string_view text, std::string_view source);

}  // namespace vigil::eval
