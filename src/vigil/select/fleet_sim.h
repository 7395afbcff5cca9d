// The fleet simulator that judges validation policies (issue 25, part 5), specified in
// docs/select.md before the Selector was tuned: gray failures that appear and worsen per component
// kind, jobs landing on nodes, incidents when a job runs on a degraded node, validations that find
// degraded components with each benchmark's sensitivity, and detector alerts. It emits the
// fleet's history (history.h) as it goes; the policies see that history and the nodes' states
// (idle, busy, ...), never the simulator's hidden state.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vigil/core/status.h"
#include "vigil/select/history.h"
#include "vigil/select/selector.h"

namespace vigil::select {

struct SimKind {
  std::string name;
  double share = 0;        // of all failures
  double gray_days = 0;    // mean gray period; 0: abrupt (no precursor, no benchmark finds it)
  double alert_per_h = 0;  // alert probability per hour at severity 1
};

struct SimBenchmark {
  std::string name;
  double minutes = 0;
  std::vector<std::pair<std::string, double>> sensitivity;  // kind -> P(find) at full visibility
};

// The simulator's parameters; the defaults are docs/select.md's, frozen.
struct FleetSimParams {
  int nodes = 1000;
  double days = 365;
  double warmup_days = 90;  // run under the weekly full suite before the judged year
  uint64_t seed = 1;
  double failures_per_1000_node_days = 6.5;
  double old_class_share = 0.3;   // class A100; the rest H100
  double old_class_factor = 1.5;  // its failure rate multiplier
  double lemon_share = 0.02;
  double lemon_factor = 8;
  std::vector<SimKind> kinds = DefaultKinds();
  double busy_mean_h = 16;
  double idle_mean_h = 4;
  double max_job_nodes = 512;
  double hazard_per_h = 1.0 / 6;   // incident hazard at severity 1 (times severity squared)
  double visible_severity = 0.25;  // a benchmark's full sensitivity from this severity up
  double incident_repair_h = 24;
  double finding_repair_h = 4;
  double false_alert_per_h = 0.0005;
  double margin_healthy = 0.15, margin_slope = 0.4, margin_noise = 0.04;
  double benchmark_time_noise = 0.05;
  std::vector<SimBenchmark> suite = DefaultSuite();

  static std::vector<SimKind> DefaultKinds();
  static std::vector<SimBenchmark> DefaultSuite();
};

// InvalidArgument naming the parameter unless the fleet, durations and rates are in range.
Status Validate(const FleetSimParams& params);

enum class PolicyKind { kNone, kWeekly, kBeforeJob, kRandomSubset, kSelector };
std::string_view PolicyName(PolicyKind kind);

struct PolicyOptions {
  PolicyKind kind = PolicyKind::kSelector;
  double period_h = 168;      // weekly and random subset: how often each node is validated
  double random_share = 0.5;  // random subset: each benchmark's chance of being in it
  // The Selector: its options, its budget of validation node-hours per week (0: the weekly full
  // suite's), how often it plans and refits, and the window it fits on.
  SelectOptions select;
  double budget_node_hours_per_week = 0;
  double decide_every_h = 1;
  double refit_every_h = 28 * 24;
  double fit_window_days = 180;
};

struct SimOutcome {
  double hours = 0;  // judged: the year after the warm-up
  int incidents = 0;
  double incident_node_hours = 0;  // the jobs' time lost
  int validations = 0;
  double validation_node_hours = 0;
  int findings = 0;   // degraded components found (each once)
  double mtbi_h = 0;  // hours / incidents (fleet-wide); infinite without one
  History history;    // everything emitted, warm-up included
};

// Runs one policy over the fleet. Validate's error; the Selector's fitting errors.
Result<SimOutcome> SimulateFleet(const FleetSimParams& params, const PolicyOptions& policy);

// The history of `nodes` nodes over `days` under the weekly full suite, the other parameters the
// defaults: a fleet's past to plan from, for tests and examples. SimulateFleet's errors.
Result<History> WeeklyHistory(int nodes, int days, uint64_t seed);

}  // namespace vigil::select
