// vigil simulate job|cluster: the simulators of the `sim` module (docs/reliability.md).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cli/common.h"

namespace vigil::cli {

struct SimulateJobOptions {
  JobSizeFlags size;
  double rate = 6.5;                         // failures per 1000 node-days
  std::string distribution = "exponential";  // or weibull
  double shape = 0.7;                        // Weibull shape
  std::string days = "30d";                  // wall-clock length of a run
  std::string detect = "5m";
  std::string restart = "10m";
  std::string queue = "0s";
  std::string interval = "1h";
  std::string write = "1m";
  bool async = false;
  int64_t spares = 0;
  std::string repair = "3d";
  int runs = 1000;
  uint64_t seed = 1;
  bool json = false;
};

struct SimulateClusterOptions {
  int64_t nodes = 1024;
  double days = 30;
  int64_t lemons = 8;
  uint64_t seed = 1;
  int gpus_per_node = 8;
  double rate = 6.5;
  double lemon_factor = 100;
  std::string out_sacct;   // required
  std::string out_events;  // optional
  std::string truth;       // optional
  bool json = false;
};

struct SimulateCommands {
  CLI::App* group;  // the `simulate` parent, for later simulators to add to
  CLI::App* job;
  CLI::App* cluster;
};
SimulateCommands SetupSimulate(CLI::App& parent, SimulateJobOptions& job,
                               SimulateClusterOptions& cluster);

CommandResult RunSimulateJob(const SimulateJobOptions& options);
CommandResult RunSimulateCluster(const SimulateClusterOptions& options);

}  // namespace vigil::cli
