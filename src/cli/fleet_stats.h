// vigil fleet stats: failure analytics from Slurm's accounting log (docs/reliability.md).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cli/common.h"

namespace vigil::cli {

struct FleetStatsCliOptions {
  std::string sacct;                // sacct --parsable2 output (required)
  std::string events;               // node events CSV
  std::string window = "10m";       // events this long before a failed job's end blame the nodes
  double fdr = 0.05;                // false discovery rate of lemon nodes
  double confidence = 0.95;         // of the failure-rate interval
  int gpus_per_node = 0;            // 0: inferred from the log
  bool lenient = false;             // skip and count broken lines
  std::string time_zone = "local";  // of the log's times
  std::string truth;  // planted lemons to score against (from `vigil simulate cluster`)
  std::string plot;   // --plot FILE.svg; "": none
  bool json = false;
};

// Adds the `stats` subcommand to the `fleet` group.
CLI::App* SetupFleetStats(CLI::App& fleet, FleetStatsCliOptions& options);
CommandResult RunFleetStats(const FleetStatsCliOptions& options);

}  // namespace vigil::cli
