// vigil plan train: a training step's time, throughput and memory per GPU for a model and a
// parallel layout (docs/plan.md).
#pragma once

#include <CLI/CLI.hpp>

#include "cli/common.h"
#include "vigil/plan/train_answer.h"

namespace vigil::cli {

struct PlanTrainOptions {
  plan::TrainRequest request;
  bool json = false;
};

// The flags of a training job, `plan train`'s and `plan impact`'s: the model, the GPU and its
// measured results, and the parallel layout.
void AddPlanJobFlags(CLI::App& cmd, plan::TrainRequest& request);

// Adds `train` to the `plan` group.
CLI::App* SetupPlanTrain(CLI::App& plan, PlanTrainOptions& options);
// 0 when the layout fits in memory, 1 when it does not, 2 for an impossible layout or bad input.
CommandResult RunPlanTrain(const PlanTrainOptions& options);

}  // namespace vigil::cli
