// A fleet's history, what the Selector learns from: its nodes (hardware class, when each joined),
// their validations (which benchmarks ran and for how long, each component kind's margin, the
// findings), their incidents (component kind, cost) and the detector's alerts. The file format,
// JSON Lines with a versioned header, is specified in docs/select.md.
//
// Pure data and pure parsing: nothing here opens a file but ReadHistoryPath.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vigil/core/status.h"

namespace vigil::select {

// The format version this build reads and writes; a file of another version is refused.
inline constexpr int kHistoryVersion = 1;

struct HistoryNode {
  std::string name;        // the node's host name, unique in a history
  std::string node_class;  // its hardware class ("H100-SXM"): the criteria's class
  double joined_s = 0;     // when it joined the fleet, seconds since the Unix epoch
};

struct BenchmarkRun {
  std::string name;    // "gemm-flops"
  double seconds = 0;  // how long it ran on this node (its measured cost)
};

// One component a validation found defective, by the benchmark whose metric showed it.
struct ValidationFinding {
  std::string component;  // ComponentName: "GPU 3", "NIC 0", "HBM"
  std::string kind;       // its kind: "GPU", "HBM", "network", ...
  std::string benchmark;  // the benchmark that showed it; one of the validation's runs
};

struct HistoryValidation {
  int node = 0;  // index into History::nodes
  double time_s = 0;
  std::vector<BenchmarkRun> benchmarks;
  // Per component kind, how close its worst component came to its criteria: the smallest
  // (value - limit) / limit over its metrics, > 0 inside, <= 0 outside.
  std::vector<std::pair<std::string, double>> margins;
  std::vector<ValidationFinding> findings;
};

struct HistoryIncident {
  int node = 0;
  double time_s = 0;
  std::string kind;            // the component kind blamed ("GPU", "software", ...)
  double cost_node_hours = 0;  // the job time it cost: nodes x time lost
};

struct HistoryAlert {
  int node = 0;
  double time_s = 0;
  std::string kind;  // the component kind the detector's alert names
};

struct History {
  double start_s = 0;  // the window the history covers
  double end_s = 0;    // when it was taken: everything after is unknown (censored)
  std::vector<HistoryNode> nodes;
  std::vector<HistoryValidation> validations;  // in time order
  std::vector<HistoryIncident> incidents;      // in time order
  std::vector<HistoryAlert> alerts;            // in time order
};

// Parses a history file's text. `source` names it in errors. InvalidArgument
// "<source>:<line>: <field>: <reason>" for a malformed line, a missing or mistyped field, a header
// of another format or version, a record for a node not declared before it, a record before its
// node joined or outside [start, end], a finding by a benchmark that did not run, a duplicate node,
// and "<source>: no nodes" for a history without any.
Result<History> ParseHistory(std::string_view text, std::string_view source);

// Several files of one fleet (source name, text) read as one history: each begins with its header,
// the window is the union of theirs, and a node is declared once among them all.
Result<History> ParseHistoryFiles(const std::vector<std::pair<std::string, std::string>>& files);

// The history at `path`: a file, or a directory whose *.jsonl files (in name order) are one
// fleet's history. IoError when one cannot be read; InvalidArgument for a directory without any.
Result<History> ReadHistoryPath(const std::string& path);

// The text of `history` in the format ParseHistory reads; records in time order after the nodes.
std::string HistoryToJsonl(const History& history);

}  // namespace vigil::select
