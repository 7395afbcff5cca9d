// Analytic reliability models of a training job: MTTF at scale, expected effective training time
// ratio (ETTR) and checkpoint intervals. Sources and domains of validity: docs/reliability.md.
//
// Pure functions of their arguments; thread-safe. Times are in seconds; failure rates are in
// failures per 1000 node-days, the unit of Meta's RSC study (Kokolis et al., 2024).
#pragma once

#include <cstdint>
#include <vector>

#include "vigil/core/status.h"

namespace vigil::reliability {

// A node's failure rate in failures per second, from failures per 1000 node-days.
double PerNodeSecondRate(double failures_per_1000_node_days);

// MTTF(N) = 1 / (N_nodes * r_f), in seconds, of a job that fails when any of its nodes fails.
// InvalidArgument unless nodes > 0 and the rate > 0 (both finite).
Result<double> JobMttfSeconds(double nodes, double failures_per_1000_node_days);

// The parameters of the expected-ETTR approximation. Every time is in seconds.
struct EttrParams {
  double nodes = 1024;                       // N_nodes in the job
  double failures_per_1000_node_days = 6.5;  // r_f; Meta's RSC-1 figure by default
  double restart_s = 600;                    // u0: detection, restart and initialisation
  double queue_s = 0;                        // q: waiting for nodes after each interruption
  double interval_s = 3600;                  // dt: compute time between checkpoints
  double write_s = 60;                       // w_cp: blocking checkpoint write time
};

// InvalidArgument naming the field as `vigil model ettr` names its flag ("--interval must be a
// positive number, got 0") unless nodes, rate and interval are > 0 and the other times are >= 0
// (all finite).
Status Validate(const EttrParams& params);

// The fraction of wall time that failures cost, N * r_f * (u0 + q + dt/2), above which the
// first-order ETTR formula is no longer trusted (its error grows with the square of this
// fraction; docs/reliability.md shows the simulator's comparison). Above it, use the simulator.
inline constexpr double kEttrDomainLimit = 0.1;

struct EttrEstimate {
  double ettr = 0;                 // (1 - failure_loss) / (1 + checkpoint_overhead)
  double failure_loss = 0;         // N * r_f * (u0 + q + dt/2): fraction of time lost to failures
  double checkpoint_overhead = 0;  // w_cp / dt
  bool in_domain = false;          // failure_loss <= kEttrDomainLimit
  double optimal_interval_s = 0;   // dt* = sqrt(2 * w_cp / (N * r_f)); 0 when w_cp is 0
  double ettr_at_optimal = 0;      // the formula at dt* (NaN when w_cp is 0)
};

// E[ETTR] ~= (1 - N r_f (u0 + q + dt/2)) / (1 + w_cp/dt), from Kokolis et al. (2024). Computed
// whether or not in_domain holds; callers decide what to do outside the domain.
// InvalidArgument if Validate fails.
Result<EttrEstimate> ExpectedEttr(const EttrParams& params);

// `vigil model mttf`: one job size's MTTF.
struct MttfRow {
  int64_t gpus = 0;
  double nodes = 0;   // gpus / GPUs per node
  double mttf_s = 0;  // JobMttfSeconds
};

// The MTTF of a job of each size in `gpus`, in order. InvalidArgument "--gpus-per-node must be a
// positive number, got 0", "--gpus must be a positive number, got -8" or "--rate must be a
// positive number, got 0".
Result<std::vector<MttfRow>> MttfBySize(const std::vector<int64_t>& gpus, int gpus_per_node,
                                        double failures_per_1000_node_days);

// `vigil model ettr --sweep`: the estimate for a job of `params` but params.nodes.
struct EttrRow {
  EttrParams params;  // with this row's nodes
  double mttf_s = 0;  // the job's MTTF (JobMttfSeconds)
  EttrEstimate estimate;
};

// ExpectedEttr for a job of `params` with each node count in `nodes`, in order; Validate's error
// for the first row that fails it.
Result<std::vector<EttrRow>> ExpectedEttrBySize(const EttrParams& params,
                                                const std::vector<double>& nodes);

// `vigil model checkpoint`: the optimal checkpoint interval both ways.
struct CheckpointIntervals {
  double young_s = 0;  // YoungInterval
  double daly_s = 0;   // DalyInterval
};

// Young's and Daly's intervals for a checkpoint write time and an MTBF. InvalidArgument "--write
// must be a positive number, got 0" or "--mtbf must be a positive number, got 0".
Result<CheckpointIntervals> OptimalCheckpointIntervals(double write_s, double mtbf_s);

// Young's (1974) first-order optimal checkpoint interval sqrt(2 * delta * M), for a checkpoint
// write time delta and a mean time between failures M. REQUIRES: delta >= 0, M > 0.
double YoungInterval(double write_s, double mtbf_s);

// Daly's (2006) higher-order estimate: sqrt(2 delta M) [1 + sqrt(delta/(2M))/3 + delta/(18M)] -
// delta for delta < 2M, else M. REQUIRES: delta >= 0, M > 0.
double DalyInterval(double write_s, double mtbf_s);

}  // namespace vigil::reliability
