// vigil run: benchmark this node, print what every component achieved, write the results.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/common.h"
#include "vigil/cluster/node_check.h"

namespace vigil::cli {

struct RunOptions {
  std::string suite = "quick";          // health, quick or full
  std::vector<std::string> benchmarks;  // --bench a,b: only these (default: the suite's)
  std::string out;      // the node results document; "": vigil-results.json, none for health
  std::string summary;  // a fleet JSONL file to append this node's line to
  std::string gpus;     // --gpus 0,2-3: only these GPUs (default: every one)
  std::string node;     // the node's name; default: $SLURMD_NODENAME, else the host name
  std::string scratch;  // where the disk benchmark writes; default: $TMPDIR or /tmp
  std::vector<std::string> set;       // benchmark parameters, "<benchmark>.<name>=<value>"
  std::string criteria;               // learned criteria to judge this node by (`vigil learn`)
  std::string report;                 // a fleet service to upload the document to (`vigil serve`)
  std::string token_file;             // its bearer token
  telemetry::TlsClientOptions tls;    // an https:// --report
  std::string spool = "vigil-spool";  // where documents wait when the service is unreachable
  bool json = false;                  // print the document as JSON instead of the table
  std::string host_root;              // where the host's /sys, /proc and /dev are; "" for /
  bool slurm = false;                 // drain on a fault, resume after a passed validation
  std::string slurm_conf;             // SLURM_CONF for scontrol; "": the environment's
  double max_drained_share = cluster::kDefaultMaxDrainedShare;  // the circuit breaker
};

CLI::App* SetupRun(CLI::App& parent, RunOptions& options);
CommandResult RunRun(const RunOptions& options);

}  // namespace vigil::cli
