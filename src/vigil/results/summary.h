// The fleet summary: one flat JSON object per node and line,
//   {"node": "gpu-017", "cpu-stream/triad_gbps": 201.5, "gpu-gemm/bf16_tflops:3": 702.1, ...}
// the shape of SuperBench's results-summary.jsonl, which Vigil reads and writes unchanged.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "vigil/core/status.h"
#include "vigil/results/document.h"

namespace vigil {

struct FleetRow {
  std::string node;
  // Metric keys and values in file order. NaN stands for a missing value (null in the file).
  std::vector<std::pair<std::string, double>> values;
};

// Parses a fleet summary. Each non-blank line must be a JSON object with a string "node" (or
// "index", SuperBench's alternative) and number-or-null values under keys that parse as
// MetricKey. InvalidArgument "<source>:<line>: <problem>" on the first bad line.
Result<std::vector<FleetRow>> ParseFleetSummary(std::string_view text, std::string_view source);

// Reads a fleet summary file (see ParseFleetSummary).
Result<std::vector<FleetRow>> ReadFleetSummary(const std::string& path);

// One line of JSON with "node" first and the values in order, ending in '\n'. NaN is written as
// null; integral values as integers; others in the shortest form that reads back exactly.
std::string FormatFleetRow(const FleetRow& row);

// Writes a whole summary atomically (complete or absent).
Status WriteFleetSummary(const std::string& path, const std::vector<FleetRow>& rows);

// The flat row of one node's results: every metric of every benchmark that ran, and
// "<benchmark>/return_code" for each of them. Skipped benchmarks contribute nothing.
FleetRow FleetRowOf(const NodeResults& doc);

}  // namespace vigil
