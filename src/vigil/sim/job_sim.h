// Monte Carlo simulation of one training job's timeline under node failures: where the time of a
// job goes (productive work, recomputation, detection, restart, queueing, checkpoint stalls) and
// the distribution of its effective training time ratio (ETTR). The reference for the analytic
// ETTR formula outside its domain. Model: docs/reliability.md.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "vigil/core/status.h"
#include "vigil/reliability/models.h"

namespace vigil::sim {

enum class FailureDistribution {
  kExponential,  // constant hazard: failures of the job form a Poisson process
  kWeibull,      // per-node renewal with the given shape (< 1: infant mortality, > 1: wear-out)
};

// The Weibull model keeps the next failure of every node that fails within a run; beyond this
// many nodes use the exponential.
inline constexpr int64_t kMaxWeibullNodes = int64_t{1} << 22;

struct JobSimOptions {
  int64_t nodes = 1024;                      // nodes in the job
  double failures_per_1000_node_days = 6.5;  // mean per-node rate (Meta's RSC-1 by default)
  FailureDistribution distribution = FailureDistribution::kExponential;
  double weibull_shape = 0.7;        // Weibull shape k; the mean stays 1/rate
  double duration_s = 30 * 86400.0;  // wall-clock length of one simulated run
  double detect_s = 300;             // from a failure until it is noticed
  double restart_s = 600;            // restart and initialisation after detection
  double queue_s = 0;                // waiting for a replacement node (without a spare)
  double interval_s = 3600;          // compute time between checkpoints
  double write_s = 60;               // checkpoint write time
  bool async_checkpoint = false;     // writes overlap compute (durable write_s later)
  int64_t spares = 0;                // hot spares: a failure with one ready skips queue
  double repair_s = 3 * 86400.0;     // until a failed spare-pool node is a spare again
  int runs = 1000;                   // independent runs
  uint64_t seed = 1;                 // runs are reproducible for a given seed
};

// The work of one SimulateJob call is proportional to the failures it draws (about 5e7 a
// second): runs x nodes x rate x duration may expect at most this many (some 20 s).
inline constexpr double kMaxExpectedFailures = 1e9;

// InvalidArgument naming the field as `vigil simulate job` names its flag ("--interval must be
// positive, got 0"): counts and rate must be positive, times finite and >= 0, the interval and
// the duration (--days) > 0, the Weibull shape > 0, and the failures expected over all runs at
// most kMaxExpectedFailures.
Status Validate(const JobSimOptions& options);

// Seconds per run, or fractions of the run's wall-clock time; the parts sum to the whole.
struct TimeBreakdown {
  double productive = 0;  // compute that survived (made durable or still running at the end)
  double recompute = 0;   // compute lost to a failure since the last durable checkpoint
  double detect = 0;
  double restart = 0;
  double queue = 0;
  double checkpoint = 0;  // stalls of blocking checkpoint writes
};

struct JobSimResult {
  std::vector<double> ettr;  // per run: productive / wall-clock time
  double mean = 0;
  double p5 = 0;
  double p95 = 0;
  TimeBreakdown mean_fraction;  // each part as a fraction of the run, averaged over runs
  double mean_failures = 0;     // failures per run
};

// Runs options.runs simulations. Pure (no clock, no I/O); single-threaded; deterministic for a
// given seed on a given standard library. InvalidArgument if Validate fails.
Result<JobSimResult> SimulateJob(const JobSimOptions& options);

// A simulation beside the analytic ETTR formula, where the formula describes the same job.
struct JobSimComparison {
  JobSimResult simulated;
  // reliability::ExpectedEttr of the job, its u0 the detection plus the restart time; unset where
  // it describes another job: Weibull failures, asynchronous checkpoints or spares.
  std::optional<reliability::EttrEstimate> formula;
};

// `vigil simulate job`: SimulateJob, and the formula where it applies. Errors as SimulateJob.
Result<JobSimComparison> SimulateJobAndFormula(const JobSimOptions& options);

}  // namespace vigil::sim
