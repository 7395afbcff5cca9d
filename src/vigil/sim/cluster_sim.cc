#include "vigil/sim/cluster_sim.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <queue>

#include "vigil/core/clock.h"
#include "vigil/core/duration.h"
#include "vigil/core/random.h"
#include "vigil/reliability/hostlist.h"
#include "vigil/reliability/models.h"

namespace vigil::sim {
namespace {

// Job sizes in nodes and their shares of jobs: most jobs fit on one node, a few span hundreds.
struct SizeShare {
  int nodes;
  double share;
};
constexpr std::array<SizeShare, 11> kSizeMix = {{{1, 0.70},
                                                 {2, 0.10},
                                                 {4, 0.07},
                                                 {8, 0.05},
                                                 {16, 0.03},
                                                 {32, 0.02},
                                                 {64, 0.012},
                                                 {128, 0.006},
                                                 {256, 0.003},
                                                 {512, 0.0015},
                                                 {1024, 0.0005}}};
// GPUs of a single-node job.
constexpr std::array<int, 4> kSingleNodeGpus = {1, 2, 4, 8};

// Planned length: log-normal, median 30 min for one node growing with the square root of the
// size, so that most GPU time is in the large jobs.
constexpr double kMedianOneNodeS = 1800;
constexpr double kLengthSigma = 1.0;

// Outcomes of jobs that meet no infrastructure failure.
constexpr double kUserFailed = 0.08;
constexpr double kUserCancelled = 0.05;
constexpr double kOutOfMemory = 0.01;
// Of the infrastructure failures: how Slurm records them, and how often a node event is logged.
constexpr double kNodeFailShare = 0.35;
constexpr double kEventLogged = 0.85;
// Node events unrelated to any failure, per node and day.
constexpr double kNoiseEventsPerNodeDay = 0.01;

struct Event {
  int64_t time;
  uint32_t node;
  std::string_view kind;
  std::string_view detail;
};

constexpr std::array<std::pair<std::string_view, std::string_view>, 5> kFailureEvents = {
    {{"xid", "79"}, {"xid", "48"}, {"xid", "94"}, {"health_check", "gpu"}, {"nvlink", "down"}}};

}  // namespace

Status Validate(const ClusterSimOptions& o) {
  if (o.nodes < 1 || o.nodes > (int64_t{1} << 20)) {
    return Status::InvalidArgument("--nodes must be from 1 to 1048576");
  }
  if (!(o.days > 0 && o.days <= 3650))
    return Status::InvalidArgument("--days must be in (0, 3650]");
  if (!(static_cast<double>(o.nodes) * o.days <= kMaxClusterNodeDays)) {
    return Status::InvalidArgument(
        fmt::format("--nodes x --days is {:.3g} node-days, more than the {:.0e} one log may hold",
                    static_cast<double>(o.nodes) * o.days, kMaxClusterNodeDays));
  }
  if (o.lemons < 0 || o.lemons > o.nodes) {
    return Status::InvalidArgument("--lemons must be from 0 to --nodes");
  }
  if (o.gpus_per_node < 1) return Status::InvalidArgument("--gpus-per-node must be at least 1");
  if (!(o.failures_per_1000_node_days > 0) || !std::isfinite(o.failures_per_1000_node_days)) {
    return Status::InvalidArgument("--rate must be positive");
  }
  if (!(o.lemon_factor >= 1) || !std::isfinite(o.lemon_factor)) {
    return Status::InvalidArgument("--lemon-factor must be at least 1");
  }
  if (!(o.time_limit_s > 0) || !std::isfinite(o.time_limit_s)) {
    return Status::InvalidArgument("the time limit must be positive");
  }
  return Status::Ok();
}

Result<ClusterSimOutput> SimulateCluster(const ClusterSimOptions& o) {
  VIGIL_RETURN_IF_ERROR(Validate(o));
  Rng rng(o.seed, 0);
  ClusterSimOutput out;
  const auto n = static_cast<uint32_t>(o.nodes);
  const int width = std::max<int>(4, static_cast<int>(fmt::format("{}", n).size()));
  std::vector<std::string> names(n);
  for (uint32_t i = 0; i < n; ++i) names[i] = fmt::format("node{:0{}}", i + 1, width);

  // Lemons: a random sample of nodes.
  const double base_rate = reliability::PerNodeSecondRate(o.failures_per_1000_node_days);
  std::vector<double> rate(n, base_rate);
  std::vector<uint32_t> order(n);
  for (uint32_t i = 0; i < n; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng.engine());
  std::vector<uint32_t> lemon_ids(order.begin(), order.begin() + o.lemons);
  std::sort(lemon_ids.begin(), lemon_ids.end());
  out.truth = "node,kind,failure_factor\n";
  for (uint32_t id : lemon_ids) {
    rate[id] *= o.lemon_factor;
    out.lemons.push_back(names[id]);
    fmt::format_to(std::back_inserter(out.truth), "{},lemon,{}\n", names[id], o.lemon_factor);
  }

  // Sizes that fit the cluster, renormalised.
  std::vector<SizeShare> mix;
  double total_share = 0;
  for (const SizeShare& s : kSizeMix) {
    if (s.nodes <= std::max<int64_t>(1, o.nodes / 4)) {
      mix.push_back(s);
      total_share += s.share;
    }
  }

  using Free = std::pair<double, uint32_t>;  // (free from, node), seconds from the start
  std::priority_queue<Free, std::vector<Free>, std::greater<>> free_nodes;
  for (uint32_t i = 0; i < n; ++i) free_nodes.push({0.0, i});
  const double horizon = o.days * kSecondsPerDay;
  std::vector<Event> events;
  out.sacct = "JobID|State|NNodes|AllocTRES|Start|End|NodeList|ExitCode\n";
  std::vector<Free> taken;
  std::vector<std::string> job_names;
  int64_t job_id = 1000;
  while (free_nodes.top().first < horizon) {
    // Draw a job.
    double u = rng.Uniform() * total_share;
    int size = mix.back().nodes;
    for (const SizeShare& s : mix) {
      if ((u -= s.share) <= 0) {
        size = s.nodes;
        break;
      }
    }
    const int gpus = size == 1
                         ? kSingleNodeGpus[rng.Below(kSingleNodeGpus.size())] * o.gpus_per_node / 8
                         : size * o.gpus_per_node;
    const double planned =
        kMedianOneNodeS * std::sqrt(size) * std::exp(rng.Normal(0, kLengthSigma));
    // Place it on the earliest free nodes.
    taken.clear();
    double start = 0;
    for (int k = 0; k < size; ++k) {
      taken.push_back(free_nodes.top());
      free_nodes.pop();
      start = std::max(start, taken.back().first);
    }
    if (start >= horizon) {  // does not fit in the span: put the nodes back
      for (const Free& f : taken) free_nodes.push(f);
      continue;
    }
    // Its fate.
    double length = std::min(planned, o.time_limit_s);
    std::string_view state = planned > o.time_limit_s ? "TIMEOUT" : "COMPLETED";
    std::string_view exit_code = "0:0";
    std::optional<Event> failure_event;
    bool infra = false;
    double hazard = 0;
    for (const Free& f : taken) hazard += rate[f.second];
    const double fail_after = rng.Exponential(hazard);
    if (fail_after < length) {
      length = fail_after;
      infra = true;
      // The culprit, in proportion to the nodes' rates.
      double pick = rng.Uniform() * hazard;
      uint32_t culprit = taken.back().second;
      for (const Free& f : taken) {
        if ((pick -= rate[f.second]) <= 0) {
          culprit = f.second;
          break;
        }
      }
      const bool node_fail = rng.Bernoulli(kNodeFailShare);
      state = node_fail ? "NODE_FAIL" : "FAILED";
      exit_code = node_fail ? "0:0" : "1:0";
      const auto& [kind, detail] = kFailureEvents[rng.Below(kFailureEvents.size())];
      const double at = start + length - rng.Uniform() * 300;
      if (rng.Bernoulli(kEventLogged)) {
        failure_event = Event{static_cast<int64_t>(at), culprit, kind, detail};
      }
    } else if (state == "COMPLETED") {
      const double u2 = rng.Uniform();
      if (u2 < kUserFailed) {
        state = "FAILED";
        exit_code = "1:0";
        length *= rng.Uniform();
      } else if (u2 < kUserFailed + kUserCancelled) {
        state = "CANCELLED by 1000";
        exit_code = "0:15";
        length *= rng.Uniform();
      } else if (u2 < kUserFailed + kUserCancelled + kOutOfMemory) {
        state = "OUT_OF_MEMORY";
        exit_code = "0:125";
        length *= rng.Uniform();
      }
    }
    const double end = start + std::max(length, 1.0);
    for (Free& f : taken) free_nodes.push({end, f.second});
    std::sort(taken.begin(), taken.end(),
              [](const Free& a, const Free& b) { return a.second < b.second; });
    job_names.clear();
    for (const Free& f : taken) job_names.push_back(names[f.second]);
    const bool running = end > horizon;  // still running when the log is taken
    if (!running && infra) ++out.infra_failures;
    if (!running && failure_event) events.push_back(*failure_event);
    const auto start_unix = o.start_unix + static_cast<int64_t>(start);
    fmt::format_to(std::back_inserter(out.sacct),
                   "{}|{}|{}|billing={},cpu={},gres/gpu={},node={}|{}|{}|{}|{}\n", ++job_id,
                   running ? "RUNNING" : state, size, gpus, gpus * 12, gpus, size,
                   FormatIsoSeconds(start_unix),
                   running ? "Unknown" : FormatIsoSeconds(o.start_unix + static_cast<int64_t>(end)),
                   reliability::CompressHostlist(job_names), running ? "0:0" : exit_code);
    ++out.jobs;
  }

  // Noise: node events that precede no failure.
  const double noise = kNoiseEventsPerNodeDay * o.days * static_cast<double>(n);
  for (double t = rng.Exponential(1); t < noise; t += rng.Exponential(1)) {
    events.push_back({static_cast<int64_t>(rng.Uniform() * horizon),
                      static_cast<uint32_t>(rng.Below(n)), "health_check", "warning"});
  }
  std::sort(events.begin(), events.end(),
            [](const Event& a, const Event& b) { return a.time < b.time; });
  out.events = "timestamp,node,kind,detail\n";
  for (const Event& e : events) {
    fmt::format_to(std::back_inserter(out.events), "{},{},{},{}\n",
                   FormatIsoSeconds(o.start_unix + e.time), names[e.node], e.kind, e.detail);
  }
  return out;
}

}  // namespace vigil::sim
