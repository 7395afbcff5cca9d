// vigil plan search: every valid parallel layout of a model on a number of GPUs, ranked by
// predicted throughput; two GPU types (or degraded nodes) with stages placed by speed
// (docs/plan.md).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/common.h"
#include "vigil/plan/search_answer.h"

namespace vigil::cli {

struct PlanSearchOptions {
  plan::SearchFlags flags;
  bool json = false;
};

// The flags `plan train` and `plan search` share: --model, --gpu, --hardware.
// --attention flash|unfused, for plan train, search and impact.
void AddAttentionFlag(CLI::App& cmd, std::string& attention);
// --sequence-parallel / --no-sequence-parallel, `plan train`'s, `plan impact`'s and `plan
// search`'s.
void AddSequenceParallelFlag(CLI::App& cmd, bool& sequence_parallel);

void AddPlanModelFlags(CLI::App& cmd, std::string& model, std::string& gpu,
                       std::vector<std::string>& hardware);

// Adds `search` to the `plan` group.
CLI::App* SetupPlanSearch(CLI::App& plan, PlanSearchOptions& options);
CommandResult RunPlanSearch(const PlanSearchOptions& options);

}  // namespace vigil::cli
