// vigil model checkpoint: the optimal checkpoint interval, Young's and Daly's
// (docs/reliability.md).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cli/common.h"

namespace vigil::cli {

struct ModelCheckpointOptions {
  std::string write;  // checkpoint write (dump) time
  std::string mtbf;   // mean time between failures, or from the job size and rate
  JobSizeFlags size;
  double rate = 6.5;
  bool json = false;
};

// Adds `checkpoint` to the `model` group.
CLI::App* SetupModelCheckpoint(CLI::App& model, ModelCheckpointOptions& options);
CommandResult RunModelCheckpoint(const ModelCheckpointOptions& options);

}  // namespace vigil::cli
