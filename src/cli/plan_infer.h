// vigil plan infer: prefill and per-token decode time of a model on a tensor-parallel group of
// GPUs, the memory it needs, and the idealized runtime fitted to measured latencies
// (docs/plan.md, "Inference").
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/common.h"

namespace vigil::cli {

struct PlanInferOptions {
  std::string model;                  // the model description file (YAML or JSON)
  int64_t gpus = 1;                   // tensor-parallel group
  std::string gpu = "h100";           // datasheet profile
  std::vector<std::string> hardware;  // measured results over the datasheet row
  int64_t batch = 1;
  int64_t prompt = 128;
  int64_t output = 128;
  std::string precision = "bf16";
  std::string latencies;  // CSV of measured requests, or empty
  bool json = false;
};

// Adds `infer` to the `plan` group.
CLI::App* SetupPlanInfer(CLI::App& plan, PlanInferOptions& options);
CommandResult RunPlanInfer(const PlanInferOptions& options);

}  // namespace vigil::cli
