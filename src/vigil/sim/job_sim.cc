#include "vigil/sim/job_sim.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <queue>
#include <random>

#include "vigil/core/stats.h"
#include "vigil/reliability/models.h"
#include "vigil/sim/random.h"

namespace vigil::sim {
namespace {

// When the next node of the job fails. Exponential: one Poisson stream for the whole job.
// Weibull: each node position renews with a fresh node when it fails; at the start each node is
// at a random point of its life (the stationary state of a fleet that has run for a while).
class FailureSource {
 public:
  FailureSource(const JobSimOptions& o, Rng& rng) : rng_(rng), distribution_(o.distribution) {
    const double node_rate = reliability::PerNodeSecondRate(o.failures_per_1000_node_days);
    job_rate_ = node_rate * static_cast<double>(o.nodes);
    if (distribution_ == FailureDistribution::kExponential) {
      next_ = rng_.Exponential(job_rate_);
      return;
    }
    shape_ = o.weibull_shape;
    scale_ = 1 / (node_rate * std::tgamma(1 + 1 / shape_));
    // Residual life in equilibrium: a length-biased life L = scale * G^(1/k), G ~ Gamma(1 + 1/k),
    // times a uniform fraction.
    std::gamma_distribution<double> gamma(1 + 1 / shape_, 1);
    std::vector<double> times(static_cast<size_t>(o.nodes));
    for (double& t : times) {
      t = rng_.Uniform() * scale_ * std::pow(gamma(rng_.engine()), 1 / shape_);
    }
    heap_ = Heap(std::greater<>(), std::move(times));
    next_ = heap_.top();
  }

  double next() const { return next_; }

  // The node that failed at next() is replaced by a new one starting at that time.
  void ReplaceFailed() {
    if (distribution_ == FailureDistribution::kExponential) {
      next_ += rng_.Exponential(job_rate_);
      return;
    }
    const double failed_at = heap_.top();
    heap_.pop();
    heap_.push(failed_at + scale_ * std::pow(rng_.Exponential(1), 1 / shape_));
    next_ = heap_.top();
  }

 private:
  using Heap = std::priority_queue<double, std::vector<double>, std::greater<>>;
  Rng& rng_;
  FailureDistribution distribution_;
  double job_rate_ = 0;
  double shape_ = 1;
  double scale_ = 1;
  Heap heap_;
  double next_ = 0;
};

// Hot spares: `ready` now, and the times at which nodes in repair become spares again.
class SparePool {
 public:
  SparePool(int64_t spares, double repair_s) : ready_(spares), repair_s_(repair_s) {}

  // A node failed at `t`: true if a ready spare replaces it (it then goes to repair and returns
  // to the pool); false if the job must wait for the scheduler.
  bool TakeSpare(double t) {
    while (!in_repair_.empty() && in_repair_.front() <= t) {
      in_repair_.pop_front();
      ++ready_;
    }
    if (ready_ == 0) return false;
    --ready_;
    in_repair_.push_back(t + repair_s_);
    return true;
  }

 private:
  int64_t ready_;
  double repair_s_;
  std::deque<double> in_repair_;
};

struct RunResult {
  TimeBreakdown seconds;
  int64_t failures = 0;
};

// Splits the compute segment [t, t + avail) that starts from a durable checkpoint into
// productive work, checkpoint stalls and (when it ends in a failure) lost work.
void AccountCompute(const JobSimOptions& o, double avail, bool ends_in_failure, TimeBreakdown& b) {
  const double dt = o.interval_s;
  const double w = o.write_s;
  if (o.async_checkpoint) {
    if (!ends_in_failure) {
      b.productive += avail;
      return;
    }
    // Checkpoint m, taken after m*dt of compute, is durable once written, at m*dt + w.
    const double durable = avail >= w ? std::floor((avail - w) / dt) * dt : 0;
    b.productive += durable;
    b.recompute += avail - durable;
    return;
  }
  const double cycle = dt + w;
  const double k = std::floor(avail / cycle);
  const double r = avail - k * cycle;
  b.productive += k * dt;
  b.checkpoint += k * w;
  if (!ends_in_failure) {
    b.productive += std::min(r, dt);
    b.checkpoint += std::max(0.0, r - dt);
  } else if (r <= dt) {
    b.recompute += r;
  } else {  // failed during a write: the compute before it is lost, the stall is a stall
    b.recompute += dt;
    b.checkpoint += r - dt;
  }
}

// Adds the part of the recovery [start, start + detect + restart + queue) that lies before
// `stop` to the breakdown.
void AccountRecovery(double start, double stop, double detect, double restart, double queue,
                     TimeBreakdown& b) {
  double t = start;
  for (auto [length, bucket] :
       {std::pair{detect, &b.detect}, std::pair{restart, &b.restart}, std::pair{queue, &b.queue}}) {
    const double spent = std::clamp(stop - t, 0.0, length);
    *bucket += spent;
    t += length;
  }
}

RunResult SimulateRun(const JobSimOptions& o, Rng& rng) {
  RunResult run;
  TimeBreakdown& b = run.seconds;
  FailureSource failures(o, rng);
  SparePool spares(o.spares, o.repair_s);
  const double horizon = o.duration_s;
  double t = 0;
  while (t < horizon) {
    const double tf = failures.next();
    const bool fails = tf < horizon;
    AccountCompute(o, std::min(tf, horizon) - t, fails, b);
    if (!fails) break;
    // Recover; a failure during recovery starts it again.
    t = tf;
    while (true) {
      ++run.failures;
      failures.ReplaceFailed();
      const double queue = spares.TakeSpare(t) ? 0 : o.queue_s;
      const double ready = t + o.detect_s + o.restart_s + queue;
      const double stop = std::min({failures.next(), ready, horizon});
      AccountRecovery(t, stop, o.detect_s, o.restart_s, queue, b);
      if (stop == ready || stop == horizon) {
        t = stop;
        break;
      }
      t = stop;  // another node failed before the job was back
    }
  }
  return run;
}

Status CheckCount(double v, std::string_view name) {
  if (!(v >= 1)) return Status::InvalidArgument(fmt::format("{} must be at least 1", name));
  return Status::Ok();
}

Status CheckTime(double v, std::string_view name, bool positive) {
  if (!std::isfinite(v) || v < 0 || (positive && v == 0)) {
    return Status::InvalidArgument(
        fmt::format("{} must be {}, got {}", name, positive ? "positive" : "zero or more", v));
  }
  return Status::Ok();
}

}  // namespace

Status Validate(const JobSimOptions& o) {
  VIGIL_RETURN_IF_ERROR(CheckCount(static_cast<double>(o.nodes), "nodes"));
  VIGIL_RETURN_IF_ERROR(CheckCount(o.runs, "runs"));
  VIGIL_RETURN_IF_ERROR(CheckTime(o.failures_per_1000_node_days, "the failure rate", true));
  VIGIL_RETURN_IF_ERROR(CheckTime(o.duration_s, "the duration", true));
  VIGIL_RETURN_IF_ERROR(CheckTime(o.detect_s, "the detection time", false));
  VIGIL_RETURN_IF_ERROR(CheckTime(o.restart_s, "the restart time", false));
  VIGIL_RETURN_IF_ERROR(CheckTime(o.queue_s, "the queue time", false));
  VIGIL_RETURN_IF_ERROR(CheckTime(o.interval_s, "the checkpoint interval", true));
  VIGIL_RETURN_IF_ERROR(CheckTime(o.write_s, "the checkpoint write time", false));
  VIGIL_RETURN_IF_ERROR(CheckTime(o.repair_s, "the repair time", false));
  if (o.spares < 0) return Status::InvalidArgument("spares must be zero or more");
  if (o.distribution == FailureDistribution::kWeibull) {
    VIGIL_RETURN_IF_ERROR(CheckTime(o.weibull_shape, "the Weibull shape", true));
    if (o.nodes > kMaxWeibullNodes) {
      return Status::InvalidArgument(
          fmt::format("the Weibull model tracks every node; at most {} nodes", kMaxWeibullNodes));
    }
  }
  return Status::Ok();
}

Result<JobSimResult> SimulateJob(const JobSimOptions& o) {
  VIGIL_RETURN_IF_ERROR(Validate(o));
  JobSimResult result;
  result.ettr.reserve(static_cast<size_t>(o.runs));
  TimeBreakdown sum;
  int64_t failures = 0;
  for (int r = 0; r < o.runs; ++r) {
    Rng rng(o.seed, static_cast<uint64_t>(r));
    const RunResult run = SimulateRun(o, rng);
    const TimeBreakdown& s = run.seconds;
    result.ettr.push_back(s.productive / o.duration_s);
    sum.productive += s.productive;
    sum.recompute += s.recompute;
    sum.detect += s.detect;
    sum.restart += s.restart;
    sum.queue += s.queue;
    sum.checkpoint += s.checkpoint;
    failures += run.failures;
  }
  const double total = o.duration_s * o.runs;
  result.mean_fraction = {sum.productive / total, sum.recompute / total, sum.detect / total,
                          sum.restart / total,    sum.queue / total,     sum.checkpoint / total};
  result.mean = stats::Mean(result.ettr);
  result.p5 = stats::Quantile(result.ettr, 0.05);
  result.p95 = stats::Quantile(result.ettr, 0.95);
  result.mean_failures = static_cast<double>(failures) / o.runs;
  return result;
}

}  // namespace vigil::sim
