// Fleet failure analytics from scheduler logs: job outcomes, the infrastructure failure rate with
// a confidence interval, MTTF by job size, and lemon nodes. Methods: docs/reliability.md.
//
// Pure: takes parsed logs, returns figures; thread-compatible.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "vigil/core/status.h"
#include "vigil/reliability/node_events.h"
#include "vigil/reliability/sacct.h"

namespace vigil::reliability {

struct FleetStatsOptions {
  // A node event on one of a failed job's nodes from this long before the job's end (up to
  // kEventGraceAfterEnd after it) blames the failure on the infrastructure.
  double attribution_window_s = 600;
  double fdr = 0.05;         // false discovery rate of lemon nodes (Benjamini-Hochberg)
  double confidence = 0.95;  // of the failure-rate interval (exact Poisson, Garwood)
  int gpus_per_node = 0;     // 0: the most common GPUs per node of multi-node jobs, else 8
  // Job sizes of the MTTF projection table, in GPUs.
  std::vector<int64_t> projection_gpus = {8, 64, 512, 2048, 8192, 16384, 32768, 131072};
};

// Events this long after a job's end still count: the scheduler may record the end first.
inline constexpr double kEventGraceAfterEnd = 60;

// InvalidArgument naming the option as `vigil fleet stats` names its flag ("--fdr must be in (0,
// 1)": --window, --fdr, --confidence, --gpus-per-node), or "projection sizes must be positive GPU
// counts".
Status Validate(const FleetStatsOptions& options);

struct StateSummary {
  JobState state = JobState::kCompleted;
  int64_t jobs = 0;
  double gpu_hours = 0;   // gpus x elapsed
  double node_hours = 0;  // nodes x elapsed
};

// Failures per 1000 node-days, with its confidence interval.
struct RateEstimate {
  int64_t failures = 0;
  double node_days = 0;
  double per_1000_node_days = 0;  // NaN without exposure
  double lower = 0;
  double upper = 0;
};

struct MttfProjection {
  int64_t gpus = 0;
  double nodes = 0;
  double mttf_s = 0;   // 1 / (nodes x rate)
  double lower_s = 0;  // from the upper end of the rate's interval
  double upper_s = 0;  // from the lower end (infinite with no failures)
};

// Observed against projected MTTF for jobs of a size class (powers of two of nodes).
struct SizeClassRow {
  int32_t min_nodes = 0;
  int32_t max_nodes = 0;
  int64_t jobs = 0;
  int64_t infra_failures = 0;
  double job_hours = 0;         // wall-clock running time of these jobs
  double observed_mttf_s = 0;   // job running time per infrastructure failure; NaN without one
  double projected_mttf_s = 0;  // from the fleet rate at these jobs' time-weighted node count
  RateEstimate rate =
      {};  // these jobs' infrastructure failures per 1000 node-days, with its interval
};

// A node whose jobs fail improbably often against the fleet, with its evidence. Two channels:
// failed jobs during which the node logged an event, and failed single-node jobs on it that no
// event explains (the culprit of a multi-node failure without events is unknown).
struct LemonNode {
  std::string node;
  int64_t jobs = 0;                    // finished jobs that ran on it
  int64_t failed_jobs = 0;             // of which failed (FAILED, NODE_FAIL, BOOT_FAIL, or
                                       // blamed on the infrastructure)
  int64_t event_failures = 0;          // failed jobs with an event of this node in the window
  double expected_event_failures = 0;  // what the fleet's rate predicts for its hours
  int64_t single_failures = 0;         // failed single-node jobs without any event
  double expected_single_failures = 0;
  double p_value = 0;  // twice the smaller channel's P(Poisson(expected) >= count), at most 1
  double q_value = 0;  // Benjamini-Hochberg adjusted across all nodes tested
  std::vector<std::pair<std::string, int64_t>> events_by_kind;  // its node events
};

struct FleetStats {
  int64_t jobs_finished = 0;
  int64_t jobs_unfinished = 0;       // running, pending, or never started
  int64_t nodes = 0;                 // nodes that ran a finished job
  int gpus_per_node = 0;             // given or inferred
  std::vector<StateSummary> states;  // states seen, most jobs first
  double gpu_hours = 0;
  int64_t infra_failures = 0;
  int64_t infra_by_state = 0;    // NODE_FAIL or BOOT_FAIL
  int64_t infra_by_event = 0;    // another failed end with a node event in the window
  int64_t events_unmatched = 0;  // events on nodes that ran no job of the log
  RateEstimate rate;
  std::vector<MttfProjection> projections;
  std::vector<SizeClassRow> size_classes;
  std::vector<LemonNode> lemons;  // q_value <= fdr, most significant first
};

// The lemons of a truth CSV `node,kind[,...]` with a header (rows whose kind is "lemon"), as
// `vigil simulate cluster --truth` writes it. InvalidArgument "<source>:<line>: ..." if malformed.
Result<std::vector<std::string>> ParseLemonTruth(std::string_view text, std::string_view source);

struct LemonScore {
  int64_t true_positives = 0;
  int64_t false_positives = 0;
  int64_t false_negatives = 0;
  double precision = 1;  // 1 when nothing was found
  double recall = 1;     // 1 when there was nothing to find
};

LemonScore ScoreLemons(std::span<const LemonNode> found, std::span<const std::string> truth);

// REQUIRES: Validate(options).ok() (checked; InvalidArgument otherwise).
Result<FleetStats> ComputeFleetStats(const SacctLog& log, std::span<const NodeEvent> events,
                                     const FleetStatsOptions& options);

}  // namespace vigil::reliability
