// vigil model ettr: the expected effective training time ratio of a job, or of a sweep of job
// sizes (docs/reliability.md).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cli/common.h"

namespace vigil::cli {

struct ModelEttrOptions {
  JobSizeFlags size;
  double rate = 6.5;
  std::string restart = "10m";  // u0: detection, restart and initialisation
  std::string queue = "0s";     // q
  std::string interval = "1h";  // dt
  std::string write = "1m";     // w_cp
  std::string sweep;            // "gpus=A..B" or "nodes=A..B": sizes doubling from A to B
  std::string plot;             // --sweep: an SVG file of ETTR against GPUs; "": none
  bool json = false;
};

// Adds `ettr` to the `model` group.
CLI::App* SetupModelEttr(CLI::App& model, ModelEttrOptions& options);
CommandResult RunModelEttr(const ModelEttrOptions& options);

}  // namespace vigil::cli
