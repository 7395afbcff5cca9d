// What a node uploads to `vigil serve` (POST /api/v1/results): its results document
// (`vigil run --out`), or fleet summary lines (one node per line, SuperBench's
// results-summary.jsonl shape) for many nodes at once.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "vigil/core/status.h"
#include "vigil/results/summary.h"

namespace vigil::server {

struct ParsedUpload {
  FleetRow row;                         // the node's flat metrics, as the validator reads them
  std::vector<std::string> benchmarks;  // the benchmarks it ran: the criteria that apply
  std::string start_time;               // from a document; "" for a summary line
  std::string suite;                    // the document's suite ("quick", "health"); "" for a line
  std::string document;                 // the document's text as uploaded; "" for a summary line
};

// Node names must be 1 to 253 characters without control characters or '/': they appear in
// URLs, labels and file names.
Status CheckNodeName(std::string_view node);

// The benchmarks whose metrics a flat row holds (the text of each key before its last '/'), in
// order of first appearance: the criteria that apply to the node.
std::vector<std::string> BenchmarksOfRow(const FleetRow& row);

// A body that is one JSON object with a "schema" field is a results document; anything else is
// read as fleet summary lines. InvalidArgument naming `source`, the line and the field for
// anything malformed, an empty body, or a bad node name.
Result<std::vector<ParsedUpload>> ParseUpload(std::string_view body, std::string_view source);

}  // namespace vigil::server
