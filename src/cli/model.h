// vigil model mttf|ettr|checkpoint: the analytic reliability models (docs/reliability.md). The
// three share the job-size and failure-rate flags, so they live in one file.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/common.h"

namespace vigil::cli {

struct ModelMttfOptions {
  std::vector<int64_t> gpus;  // job sizes in GPUs; default: 8 to 131,072
  int gpus_per_node = 8;
  double rate = 6.5;  // failures per 1000 node-days
  bool json = false;
};

struct ModelEttrOptions {
  JobSizeFlags size;
  double rate = 6.5;
  std::string restart = "10m";  // u0: detection, restart and initialisation
  std::string queue = "0s";     // q
  std::string interval = "1h";  // dt
  std::string write = "1m";     // w_cp
  std::string sweep;            // "gpus=A..B" or "nodes=A..B": sizes doubling from A to B
  bool json = false;
};

struct ModelCheckpointOptions {
  std::string write;  // checkpoint write (dump) time
  std::string mtbf;   // mean time between failures, or from the job size and rate
  JobSizeFlags size;
  double rate = 6.5;
  bool json = false;
};

// Adds the `model` group and its three subcommands to `parent`; returns them in order.
struct ModelCommands {
  CLI::App* mttf;
  CLI::App* ettr;
  CLI::App* checkpoint;
};
ModelCommands SetupModel(CLI::App& parent, ModelMttfOptions& mttf, ModelEttrOptions& ettr,
                         ModelCheckpointOptions& checkpoint);

CommandResult RunModelMttf(const ModelMttfOptions& options);
CommandResult RunModelEttr(const ModelEttrOptions& options);
CommandResult RunModelCheckpoint(const ModelCheckpointOptions& options);

}  // namespace vigil::cli
