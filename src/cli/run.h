// vigil run: benchmark this node, print what every component achieved, write the results.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/common.h"

namespace vigil::cli {

struct RunOptions {
  std::string suite = "quick";             // quick or full
  std::vector<std::string> benchmarks;     // --bench a,b: only these (default: the suite's)
  std::string out = "vigil-results.json";  // the node results document
  std::string summary;                     // a fleet JSONL file to append this node's line to
  std::string gpus;                        // --gpus 0,2-3: only these GPUs (default: every one)
  std::string node;                        // the node's name; default: the host name
  std::string scratch;                // where the disk benchmark writes; default: $TMPDIR or /tmp
  std::vector<std::string> set;       // benchmark parameters, "<benchmark>.<name>=<value>"
  std::string criteria;               // learned criteria to judge this node by (`vigil learn`)
  std::string report;                 // a fleet service to upload the document to (`vigil serve`)
  std::string token_file;             // its bearer token
  telemetry::TlsClientOptions tls;    // an https:// --report
  std::string spool = "vigil-spool";  // where documents wait when the service is unreachable
  bool json = false;                  // print the document as JSON instead of the table
  std::string host_root;              // where the host's /sys, /proc and /dev are; "" for /
};

CLI::App* SetupRun(CLI::App& parent, RunOptions& options);
CommandResult RunRun(const RunOptions& options);

}  // namespace vigil::cli
