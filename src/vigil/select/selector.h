// The Selector: from a fleet's history, which nodes to validate now, with which benchmarks, why,
// and the expected benefit. A node is validated when the penalty its chosen benchmarks are expected
// to avert over the horizon exceeds their cost; idle nodes first, then by net benefit; never more
// than a share of the fleet at once, and within a budget of validation node-hours.
#pragma once

#include <string>
#include <vector>

#include "vigil/core/json.h"
#include "vigil/select/history.h"
#include "vigil/select/risk.h"
#include "vigil/select/subset.h"

namespace vigil::select {

struct SelectOptions {
  double horizon_s = kSecondsPerDay;  // the interval the expected penalty is counted over
  double budget_node_hours = 0;       // validation node-hours this plan may spend; 0: no limit
  double max_benchmark_s = 0;         // one node's validation at most this long; 0: no limit
  double max_share =
      0.05;  // at most this share of the fleet (at least one node) validating at once
  // Alerts in this window make their component kind more likely to be what fails.
  double alert_window_s = 7 * kSecondsPerDay;
  // The price of one validation node-hour in incident node-hours: 1 values them at face; a
  // scheduler whose budget binds raises it (the budget's shadow price), which favours cheaper
  // subsets on more nodes.
  double cost_weight = 1;
  bool idle_only = false;  // plan only nodes known to be idle (a scheduler that validates now)
};

// InvalidArgument naming the flag (--horizon, --budget, --max-share, --max-time) unless each is
// finite, horizon > 0, budget and max time >= 0, and 0 < max_share <= 1.
Status Validate(const SelectOptions& options);

// What the planner knows of a node now.
enum class NodeState { kUnknown, kIdle, kBusy, kValidating, kDown };

struct PlannedValidation {
  int node = 0;
  Subset subset;
  double probability = 0;       // P(incident within the horizon)
  double expected_penalty = 0;  // probability x the mean incident cost, node-hours
  // The part of `probability` a validation that found nothing would remove (what subset.averted
  // is priced on): the whole of it with the baseline rate, which no validation changes.
  double removable = 0;
  double days_since_validation = 0;  // or since the node joined, when never validated
  bool idle = false;
  std::string why;  // the covariates that raise the risk most, in words
};

struct Plan {
  double at_s = 0;
  std::vector<PlannedValidation> validations;  // in the order to run them
  int candidates = 0;  // nodes whose validation would pay, before the share and budget limits
  std::string model;   // "cox" or "baseline: <why>"
};

// The Selector's learned state: the risk model and the suite, fitted on a history.
struct SelectorModel {
  RiskModel risk;
  SuiteStats suite;
};

// Fits both on the whole history. LearnSuite's and FitRiskModel's errors.
Result<SelectorModel> FitSelector(const History& history, const RiskModelOptions& options = {});

// Plans at time `tracker`'s history end (or `at_s`). `states` has one entry per node, or is empty
// (every node's state unknown: none is preferred as idle). Nodes kBusy are planned after idle and
// unknown ones; kValidating count against max_share; kDown are skipped.
// REQUIRES: tracker advanced to at_s; Validate(options) ok.
Plan MakePlan(const SelectorModel& model, const CovariateTracker& tracker, const History& history,
              double at_s, const std::vector<NodeState>& states, const SelectOptions& options);

// A plan with the model it came from.
struct Selection {
  SelectorModel model;
  Plan plan;
};

// Fits on `history` and plans at its end: `vigil select`'s and the fleet service's library entry
// point. `states` as MakePlan's: one per node of the history, or empty (every node's unknown).
// Validate's, LearnSuite's and FitRiskModel's errors; InvalidArgument when `states` has another
// size.
Result<Selection> SelectFromHistory(const History& history, const SelectOptions& options,
                                    const std::vector<NodeState>& states = {});

// The names of the benchmarks `v` runs, in the suite's order.
std::vector<std::string> PlannedBenchmarks(const Selection& selection, const PlannedValidation& v);

// The selection as JSON (docs/select.md): the model (kind, covariates and coefficients, events),
// the suite (each benchmark's seconds and coverage per kind), and each planned validation.
Json SelectionToJson(const Selection& selection, const History& history);

}  // namespace vigil::select
