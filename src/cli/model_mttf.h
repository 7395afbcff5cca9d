// vigil model mttf: the mean time to failure of a job by size (docs/reliability.md).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/common.h"

namespace vigil::cli {

struct ModelMttfOptions {
  std::vector<int64_t> gpus;  // job sizes in GPUs; default: 8 to 131,072
  int gpus_per_node = 8;
  double rate = 6.5;  // failures per 1000 node-days
  std::string plot;   // --plot FILE.svg; "": none
  bool json = false;
};

// Adds `mttf` to the `model` group.
CLI::App* SetupModelMttf(CLI::App& model, ModelMttfOptions& options);
CommandResult RunModelMttf(const ModelMttfOptions& options);

}  // namespace vigil::cli
