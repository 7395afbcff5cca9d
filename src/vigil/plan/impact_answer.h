// `vigil plan impact` between its flags and its printing: the job read as `plan train` reads it,
// the node's ratios to the fleet (from its results, or a what-if), Impact() run, and its JSON and
// text (docs/plan.md, "Cost of a degraded node").
#pragma once

#include <string>
#include <vector>

#include "vigil/core/json.h"
#include "vigil/core/status.h"
#include "vigil/plan/impact.h"
#include "vigil/plan/train_answer.h"

namespace vigil::plan {

struct ImpactRequest {
  TrainRequest job;               // the model, layout and fleet profile (`hardware`: the fleet's)
  std::vector<std::string> node;  // the node's results; empty: `slow` instead
  std::string node_name;          // which node of `node`'s files; empty: they hold one node
  std::string slow;               // a what-if, "gemm=0.88,nic=0.5" (ParseSlowdowns); or empty
  std::string restart = "10m";    // durations (core/duration.h), as `vigil model ettr` takes them
  std::string queue = "0s";
  std::string interval = "1h";
  std::string remaining;  // how long the job runs on; empty: unknown
  bool spare = true;      // a spare node replaces the drained one; false: the job shrinks
};

struct ImpactAnswer {
  TrainAnswer job;   // the job on the fleet's healthy profile
  std::string node;  // what the ratios come from: the node's name and file, or "--slow"
  Ratios ratios;     // the node's figures over the fleet's
  DrainPolicy policy;
  ImpactResult result;
};

// Reads, checks and answers. InvalidArgument for what AnswerTrain refuses, for both or neither of
// `node` and `slow`, a malformed `slow`, node files holding other than one node (or none named
// `node_name`), results with no figure the profile reads, or a malformed duration (named by its
// flag).
Result<ImpactAnswer> AnswerImpact(const ImpactRequest& request);

// {"slowdown", "healthy_step_time_s", "degraded_step_time_s", "gpus", "keep_gpu_hours_per_hour",
// "components": [...], "moved": [...], "drain": {"spare", "shrink"}, "decision", "break_even_h",
// "remaining_h", "node", "layout", "profile"} (docs/plan.md lists every field).
Json ImpactJson(const ImpactAnswer& answer);

// The answer as text: the slowdown by component, the costs of keeping and draining, the decision.
std::string ImpactText(const ImpactAnswer& answer);

}  // namespace vigil::plan
