#include "vigil/sim/job_sim.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/math/special_functions/gamma.hpp>
#include <cmath>
#include <deque>
#include <functional>
#include <limits>
#include <queue>
#include <random>

#include "vigil/core/random.h"
#include "vigil/core/stats.h"
#include "vigil/reliability/models.h"

namespace vigil::sim {
namespace {

// The Weibull model's stationary residual lives, tabulated once per simulation. Only the nodes
// whose first failure falls inside a run matter to it, so a run draws how many there are and then
// only their times, from this table of the distribution's inverse.
struct WeibullTable {
  double shape = 1;
  double scale = 1;
  double p_within = 0;            // P(residual life < the run's duration)
  std::vector<double> quantiles;  // the residual life at u = p_within * i / (size - 1)
};

constexpr int kResidualTableSize = 4096;

WeibullTable MakeWeibullTable(const JobSimOptions& o) {
  WeibullTable t;
  const double node_rate = reliability::PerNodeSecondRate(o.failures_per_1000_node_days);
  t.shape = o.weibull_shape;
  t.scale = 1 / (node_rate * std::tgamma(1 + 1 / t.shape));
  // In a fleet that has run for a while, a node's remaining life has the density S(x) / mean,
  // whose distribution function is P(1/k, (x/scale)^k), the regularized incomplete gamma.
  const double a = 1 / t.shape;
  t.p_within = boost::math::gamma_p(a, std::pow(o.duration_s / t.scale, t.shape));
  t.quantiles.resize(kResidualTableSize);
  for (int i = 0; i < kResidualTableSize; ++i) {
    const double u = t.p_within * i / (kResidualTableSize - 1);
    t.quantiles[i] = u > 0 ? t.scale * std::pow(boost::math::gamma_p_inv(a, u), a) : 0;
  }
  return t;
}

// When the next node of the job fails. Exponential: one Poisson stream for the whole job.
// Weibull: each node position renews with a fresh node when it fails, starting from the
// stationary state of the fleet (each node at a random point of its life).
class FailureSource {
 public:
  FailureSource(const JobSimOptions& o, const WeibullTable& table, Rng& rng)
      : rng_(rng), distribution_(o.distribution), table_(table) {
    const double node_rate = reliability::PerNodeSecondRate(o.failures_per_1000_node_days);
    job_rate_ = node_rate * static_cast<double>(o.nodes);
    if (distribution_ == FailureDistribution::kExponential) {
      next_ = rng_.Exponential(job_rate_);
      return;
    }
    const auto within =
        std::binomial_distribution<int64_t>(o.nodes, table_.p_within)(rng_.engine());
    std::vector<double> times(static_cast<size_t>(within));
    for (double& t : times) {
      const double pos = (rng_.Uniform() - 0x1.0p-53) * (kResidualTableSize - 1);
      const auto i = std::min(static_cast<size_t>(pos), table_.quantiles.size() - 2);
      const double f = pos - static_cast<double>(i);
      t = table_.quantiles[i] + f * (table_.quantiles[i + 1] - table_.quantiles[i]);
    }
    heap_ = Heap(std::greater<>(), std::move(times));
    next_ = heap_.empty() ? std::numeric_limits<double>::infinity() : heap_.top();
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
    heap_.push(failed_at + table_.scale * std::pow(rng_.Exponential(1), 1 / table_.shape));
    next_ = heap_.top();
  }

 private:
  using Heap = std::priority_queue<double, std::vector<double>, std::greater<>>;
  Rng& rng_;
  FailureDistribution distribution_;
  const WeibullTable& table_;
  double job_rate_ = 0;
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

RunResult SimulateRun(const JobSimOptions& o, const WeibullTable& weibull, Rng& rng) {
  RunResult run;
  TimeBreakdown& b = run.seconds;
  FailureSource failures(o, weibull, rng);
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
  VIGIL_RETURN_IF_ERROR(CheckCount(static_cast<double>(o.nodes), "--nodes"));
  VIGIL_RETURN_IF_ERROR(CheckCount(o.runs, "--runs"));
  VIGIL_RETURN_IF_ERROR(CheckTime(o.failures_per_1000_node_days, "--rate", true));
  VIGIL_RETURN_IF_ERROR(CheckTime(o.duration_s, "--days", true));
  VIGIL_RETURN_IF_ERROR(CheckTime(o.detect_s, "--detect", false));
  VIGIL_RETURN_IF_ERROR(CheckTime(o.restart_s, "--restart", false));
  VIGIL_RETURN_IF_ERROR(CheckTime(o.queue_s, "--queue", false));
  VIGIL_RETURN_IF_ERROR(CheckTime(o.interval_s, "--interval", true));
  VIGIL_RETURN_IF_ERROR(CheckTime(o.write_s, "--write", false));
  VIGIL_RETURN_IF_ERROR(CheckTime(o.repair_s, "--repair", false));
  if (o.spares < 0) return Status::InvalidArgument("--spares must be zero or more");
  constexpr double kSecondsPerDay = 86400;
  const double expected = static_cast<double>(o.runs) * static_cast<double>(o.nodes) *
                          o.failures_per_1000_node_days / 1000 * (o.duration_s / kSecondsPerDay);
  if (!(expected <= kMaxExpectedFailures)) {
    return Status::InvalidArgument(fmt::format(
        "--runs x --nodes x --rate x --days expect {:.3g} failures, more than the {:.0e} one "
        "simulation may draw: fewer runs, nodes or days",
        expected, kMaxExpectedFailures));
  }
  if (o.distribution == FailureDistribution::kWeibull) {
    VIGIL_RETURN_IF_ERROR(CheckTime(o.weibull_shape, "--shape", true));
    if (o.nodes > kMaxWeibullNodes) {
      return Status::InvalidArgument(fmt::format(
          "--distribution weibull tracks every node: at most {} --nodes", kMaxWeibullNodes));
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
  const WeibullTable weibull =
      o.distribution == FailureDistribution::kWeibull ? MakeWeibullTable(o) : WeibullTable();
  for (int r = 0; r < o.runs; ++r) {
    Rng rng(o.seed, static_cast<uint64_t>(r));
    const RunResult run = SimulateRun(o, weibull, rng);
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

Result<JobSimComparison> SimulateJobAndFormula(const JobSimOptions& o) {
  JobSimComparison out;
  VIGIL_ASSIGN_OR_RETURN(out.simulated, SimulateJob(o));
  if (o.distribution != FailureDistribution::kExponential || o.async_checkpoint || o.spares != 0) {
    return out;
  }
  reliability::EttrParams p;
  p.nodes = static_cast<double>(o.nodes);
  p.failures_per_1000_node_days = o.failures_per_1000_node_days;
  p.restart_s = o.detect_s + o.restart_s;
  p.queue_s = o.queue_s;
  p.interval_s = o.interval_s;
  p.write_s = o.write_s;
  VIGIL_ASSIGN_OR_RETURN(out.formula, reliability::ExpectedEttr(p));
  return out;
}

}  // namespace vigil::sim
