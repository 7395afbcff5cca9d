// vigil fleet run: a suite and the network tests on many nodes through the cluster's launcher;
// vigil fleet rank: what each node runs under it, and vigil fleet nccl, its part of a collective
// across nodes (docs/multinode.md).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cli/common.h"
#include "vigil/agent/fleet_run.h"

namespace vigil::cli {

struct FleetRunCliOptions {
  agent::FleetCommandOptions run;
  std::string transfer = "1s";
  std::string start_timeout = "60s";
  std::string suite_timeout = "15m";
  std::string pair_timeout = "60s";
  std::string collective_timeout = "5m";
  std::string rdma_duration = "2s";
  bool json = false;
};

CLI::App* SetupFleetRun(CLI::App& fleet, FleetRunCliOptions& options);
CommandResult RunFleetRun(const FleetRunCliOptions& options);

CLI::App* SetupFleetRank(CLI::App& fleet, agent::FleetRankCommandOptions& options);
CommandResult RunFleetRank(const agent::FleetRankCommandOptions& options);

CLI::App* SetupFleetNccl(CLI::App& fleet, agent::FleetNcclOptions& options);
CommandResult RunFleetNccl(const agent::FleetNcclOptions& options);

}  // namespace vigil::cli
