// vigil simulate job|cluster|fleet|telemetry: the simulators (docs/reliability.md,
// docs/validate.md, docs/detect.md). Each subcommand is a call into `sim` (or, for `fleet`, the
// fleet results generator of `validate`).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

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
  std::string plot;  // --plot FILE.svg; "": none
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
  std::string out_sacct;            // required
  std::string out_events;           // optional
  std::string truth;                // optional
  std::string time_zone = "local";  // the log's times are written in it
  bool json = false;
};

struct SimulateFleetOptions {
  int64_t nodes = 1000;
  double defect_rate = 0.05;
  double noisy_rate = 0.05;
  double missing_rate = 0.01;
  double second_class = 0.15;
  int sweep_points = 8;
  uint64_t seed = 1;
  std::string out;
  std::string truth;
};

struct SimulateTelemetryOptions {
  int machines = 16;
  int gpus = 8;
  std::string duration = "30m";
  int faults = 1;
  std::vector<std::string> kinds;  // default: every kind in turn
  std::string fault_from;          // default: a quarter of the duration
  std::string fault_to;            // default: three quarters
  bool no_events = false;
  uint64_t seed = 1;
  double start = 1.8e9;
  std::string out;
  std::string labels;
  std::string serve;      // HOST:PORT
  std::string port_file;  // --serve: where to write the port bound
  double speed = 1;       // --serve: simulated seconds per second
};

// Each adds its subcommand to the `simulate` group.
CLI::App* SetupSimulateJob(CLI::App& simulate, SimulateJobOptions& options);
CommandResult RunSimulateJob(const SimulateJobOptions& options);

CLI::App* SetupSimulateCluster(CLI::App& simulate, SimulateClusterOptions& options);
CommandResult RunSimulateCluster(const SimulateClusterOptions& options);

CLI::App* SetupSimulateFleet(CLI::App& simulate, SimulateFleetOptions& options);
CommandResult RunSimulateFleet(const SimulateFleetOptions& options);

CLI::App* SetupSimulateTelemetry(CLI::App& simulate, SimulateTelemetryOptions& options);
CommandResult RunSimulateTelemetry(const SimulateTelemetryOptions& options);

}  // namespace vigil::cli
