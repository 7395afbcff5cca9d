// The fleet summary: one flat JSON object per node and line,
//   {"node": "gpu-017", "cpu-stream/triad_gbps": 201.5, "gpu-gemm/bf16_tflops:3": 702.1, ...}
// the shape of SuperBench's results-summary.jsonl, which Vigil reads and writes unchanged.
// Vigil adds one optional string field, "hardware" (the node's hardware class, such as
// "8x NVIDIA H100 80GB HBM3"), which SuperBench ignores like any key without a '/'.
#pragma once

#include <cmath>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "vigil/core/status.h"
#include "vigil/core/text.h"
#include "vigil/results/document.h"

namespace vigil {

// The most distinct metric keys a fleet table holds: a file with more is refused
// (InvalidArgument naming the file and the line of the first key beyond it) before its table is
// built. Real suites have about 1,000; a file with a key per node and value is malformed.
inline constexpr size_t kMaxFleetMetrics = 100'000;
// The most values (nodes x distinct keys) a fleet table holds: 2 GiB of doubles. 10,000 nodes x
// 1,000 metrics is 10 million.
inline constexpr size_t kMaxFleetValues = size_t{1} << 28;

// One node's line, as written.
struct FleetRow {
  std::string node;
  // Metric keys and values in file order. NaN stands for a missing value (null in the file).
  std::vector<std::pair<std::string, double>> values;
  std::string hardware;  // empty: not known
};

// A whole fleet summary in columns: what the validator works on. Memory is one double per node
// and metric (80 MB for 10,000 nodes x 1,000 metrics).
class FleetTable {
 public:
  size_t node_count() const { return nodes_.size(); }
  size_t metric_count() const { return metrics_.size(); }
  const std::string& node(size_t i) const { return nodes_[i]; }
  const std::string& hardware(size_t i) const { return hardware_[i]; }
  int line(size_t i) const { return lines_[i]; }  // line of node i in its file
  const std::string& source(size_t i) const { return sources_[source_of_[i]]; }  // its file
  const std::vector<std::string>& metrics() const { return metrics_; }  // first appearance order
  // NaN when node i has no value for metric j (absent, null or NaN in the file).
  double at(size_t i, size_t j) const { return values_[i * metrics_.size() + j]; }
  const double* row(size_t i) const { return values_.data() + i * metrics_.size(); }
  // The column of a metric key, or -1.
  long column(std::string_view key) const;

  // The row of node i: its present values in column order.
  FleetRow Row(size_t i) const;

  // Appends the nodes of another table (another file), adding its new metrics as columns, and
  // its warnings. InvalidArgument naming the other table's file when the result would hold more
  // than kMaxFleetMetrics keys or kMaxFleetValues values; the table is unchanged then.
  Status Append(FleetTable&& other);

  // Keeps only the last line of each node listed more than once in the same file (a node tested
  // again and appended by `vigil run --summary`), and adds a warning for each line dropped
  // naming the file, the node and both lines (the first kMaxRepeatWarnings of them, then one
  // that counts the rest). Nodes in different files are left alone.
  void KeepLastOfEachNode();

  // What reading the table noticed but accepted, one sentence each, in file order.
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  friend class FleetTableBuilder;
  std::vector<std::string> nodes_, hardware_, metrics_, sources_, warnings_;
  std::vector<int> lines_, source_of_;
  std::vector<double> values_;
  std::unordered_map<std::string, size_t, StringHash, std::equal_to<>> column_of_;
};

inline constexpr size_t kMaxRepeatWarnings = 20;

// Parses a fleet summary. Each non-blank line must be a JSON object with a string "node" (or
// "index", SuperBench's alternative), an optional string "hardware", and number-or-null values
// (NaN and Infinity too, as Python writes them: missing) under keys that parse as MetricKey,
// each key once. Every line is a row, a node listed twice too (a node's history is such a text).
// InvalidArgument "<source>:<line>: <problem>" on the first bad line, and for more than
// kMaxFleetMetrics distinct keys or kMaxFleetValues values. Uses up to `threads` threads (0: the
// hardware's count); the result does not depend on it.
Result<FleetTable> ParseFleetTable(std::string_view text, std::string_view source, int threads = 0);

// Reads and parses a fleet summary file (see ParseFleetTable), then keeps the last line of each
// node listed twice, with a warning (KeepLastOfEachNode).
Result<FleetTable> ReadFleetTable(const std::string& path, int threads = 0);

// A table of rows already in memory (keys valid, each once per row), line i+1 for row i: to judge
// rows that did not come from a file, such as one node's own results.
FleetTable TableOfRows(const std::vector<FleetRow>& rows, std::string_view source);

// One line of JSON with "node" first and the values in order, ending in '\n'. NaN is written as
// null; integral values as integers; others in the shortest form that reads back exactly.
std::string FormatFleetRow(const FleetRow& row);

// Writes a whole summary atomically (complete or absent).
Status WriteFleetSummary(const std::string& path, const std::vector<FleetRow>& rows);

// The flat row of one node's results: every metric of every benchmark that ran, and
// "<benchmark>/return_code" for each of them. Skipped benchmarks contribute nothing. The
// hardware class is "<count>x <GPU model>" when the node has GPUs.
FleetRow FleetRowOf(const NodeResults& doc);

}  // namespace vigil
