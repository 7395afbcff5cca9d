// vigil plan impact: how much a degraded node slows a synchronous training job, and after how
// long draining it pays (docs/plan.md, "Cost of a degraded node").
#pragma once

#include <CLI/CLI.hpp>

#include "cli/common.h"
#include "vigil/plan/impact_answer.h"

namespace vigil::cli {

struct PlanImpactOptions {
  plan::ImpactRequest request;
  bool no_spare = false;
  bool json = false;
};

// Adds `impact` to the `plan` group.
CLI::App* SetupPlanImpact(CLI::App& plan, PlanImpactOptions& options);
// 1 when draining the node pays (within --remaining, or at some horizon when it is not given),
// 0 when keeping it is cheaper, 2 for bad input.
CommandResult RunPlanImpact(const PlanImpactOptions& options);

}  // namespace vigil::cli
