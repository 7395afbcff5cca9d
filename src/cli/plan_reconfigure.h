// vigil plan reconfigure: after failures, the GPUs each concurrent job should get to maximise
// weighted achieved FLOP/s over the expected time to the next failure, net of transition costs,
// beside restarting every job at its old size (docs/plan.md, "Reconfiguration").
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "cli/common.h"

namespace vigil::cli {

struct PlanReconfigureOptions {
  std::string jobs;  // the jobs file (YAML or JSON)
  int64_t gpus = 0;  // healthy GPUs after the failures
  std::string mttf;  // expected time to the next failure; empty: from the MTTF model
  int gpus_per_node = 8;
  double rate = 6.5;  // failures per 1000 node-days, for the MTTF model
  bool json = false;
};

// Adds `reconfigure` to the `plan` group.
CLI::App* SetupPlanReconfigure(CLI::App& plan, PlanReconfigureOptions& options);
CommandResult RunPlanReconfigure(const PlanReconfigureOptions& options);

}  // namespace vigil::cli
