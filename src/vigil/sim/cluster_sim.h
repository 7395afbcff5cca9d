// A generator of realistic Slurm accounting logs with planted lemon nodes: the ground truth for
// `vigil fleet stats` and its tests. Model and its sources: docs/reliability.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vigil/core/status.h"
#include "vigil/core/time_zone.h"

namespace vigil::sim {

struct ClusterSimOptions {
  int64_t nodes = 1024;  // nodes in the cluster
  double days = 30;      // simulated span
  int64_t lemons = 8;    // nodes that fail far more often than the rest
  uint64_t seed = 1;
  int gpus_per_node = 8;
  double failures_per_1000_node_days = 6.5;  // healthy nodes' infrastructure failure rate
  double lemon_factor = 100;                 // how many times more often a lemon fails
  double time_limit_s = 3 * 86400.0;         // jobs planned longer end in TIMEOUT
  int64_t start_unix = 1767225600;           // 2026-01-01T00:00:00Z
  TimeZone time_zone{};  // the log's and the events' times are written in it, as sacct would
};

// The log is built in memory, about 130 bytes for each of the ~0.9 jobs per node-day: nodes x
// days may be at most this much (some 1.2 GB of log).
inline constexpr double kMaxClusterNodeDays = 1e7;

// InvalidArgument naming the field as `vigil simulate cluster` names its flag ("--lemons must be
// from 0 to --nodes") for counts or times out of range (lemons must not exceed nodes; the lemon
// factor is at least 1; nodes x days at most kMaxClusterNodeDays). The time limit, which has no
// flag, is "the time limit".
Status Validate(const ClusterSimOptions& options);

struct ClusterSimOutput {
  std::string sacct;   // as `sacct -X --parsable2 --format=JobID,State,NNodes,AllocTRES,Start,
                       // End,NodeList,ExitCode`
  std::string events;  // node events CSV: the XIDs and health checks around failures, plus noise
  std::string truth;   // CSV node,kind,failure_factor: the planted lemons
  int64_t jobs = 0;
  int64_t infra_failures = 0;  // planted: jobs ended by a node, recorded or not
  std::vector<std::string> lemons;
};

// Generates the logs. Jobs are mostly small, while most GPU time is in large jobs (as in the
// published traces of Philly, Helios and Meta's RSC clusters); they are placed by a greedy
// scheduler on the earliest free nodes. Pure and deterministic for a given seed.
Result<ClusterSimOutput> SimulateCluster(const ClusterSimOptions& options);

}  // namespace vigil::sim
