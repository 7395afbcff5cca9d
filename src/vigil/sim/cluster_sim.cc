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
// GPUs of a single-node job, on a node of kSingleNodeGpusOf GPUs (scaled to the cluster's).
constexpr std::array<int, 4> kSingleNodeGpus = {1, 2, 4, 8};
constexpr int kSingleNodeGpusOf = 8;
// The largest job takes at most this share of the cluster's nodes (1 / kLargestJobDivisor).
constexpr int64_t kLargestJobDivisor = 4;

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
// A failure's node event is logged up to this long before the job ends.
constexpr double kEventLeadMaxS = 300;
// A job lasts at least this long (Slurm's times have whole seconds).
constexpr double kMinJobS = 1;
// CPUs Slurm allocates per GPU (AllocTRES cpu=).
constexpr int kCpusPerGpu = 12;
// The job before the first one the log shows.
constexpr int64_t kFirstJobId = 1000;

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

namespace {

// "node0001" ...: as wide as the largest number, at least 4 digits.
std::vector<std::string> NodeNames(uint32_t n) {
  const int width = std::max<int>(4, static_cast<int>(fmt::format("{}", n).size()));
  std::vector<std::string> names(n);
  for (uint32_t i = 0; i < n; ++i) names[i] = fmt::format("node{:0{}}", i + 1, width);
  return names;
}

// Each node's failure rate per second: the healthy rate, lemon_factor times it on a random
// sample of `lemons` nodes, which go to out.lemons and out.truth.
std::vector<double> PlantLemons(const ClusterSimOptions& o, const std::vector<std::string>& names,
                                Rng& rng, ClusterSimOutput& out) {
  const auto n = static_cast<uint32_t>(names.size());
  std::vector<double> rate(n, reliability::PerNodeSecondRate(o.failures_per_1000_node_days));
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
  return rate;
}

// The job sizes that fit the cluster, with the sum of their shares.
struct SizeMix {
  std::vector<SizeShare> sizes;
  double total_share = 0;
};

SizeMix FittingSizes(int64_t nodes) {
  SizeMix mix;
  for (const SizeShare& s : kSizeMix) {
    if (s.nodes <= std::max<int64_t>(1, nodes / kLargestJobDivisor)) {
      mix.sizes.push_back(s);
      mix.total_share += s.share;
    }
  }
  return mix;
}

// A job as drawn: its size, GPUs and planned length.
struct JobDraw {
  int size = 1;
  int gpus = 0;
  double planned_s = 0;
};

JobDraw DrawJob(const SizeMix& mix, int gpus_per_node, Rng& rng) {
  JobDraw job;
  double u = rng.Uniform() * mix.total_share;
  job.size = mix.sizes.back().nodes;
  for (const SizeShare& s : mix.sizes) {
    if ((u -= s.share) <= 0) {
      job.size = s.nodes;
      break;
    }
  }
  job.gpus = job.size == 1 ? kSingleNodeGpus[rng.Below(kSingleNodeGpus.size())] * gpus_per_node /
                                 kSingleNodeGpusOf
                           : job.size * gpus_per_node;
  job.planned_s = kMedianOneNodeS * std::sqrt(job.size) * std::exp(rng.Normal(0, kLengthSigma));
  return job;
}

using Free = std::pair<double, uint32_t>;  // (free from, node), seconds from the start

// How a job ends: its length, Slurm state and exit code, whether the infrastructure ended it,
// and the node event that failure logged, if any.
struct JobFate {
  double length = 0;
  std::string_view state;
  std::string_view exit_code = "0:0";
  bool infra = false;
  std::optional<Event> failure_event;
};

// The fate of a job planned `planned_s` long from `start` on the nodes `taken`: the first
// failure of its nodes (at their summed rate, the culprit in proportion to its rate), else a
// time-out, else the user's failure, cancellation or out-of-memory, else completion.
JobFate DecideFate(const std::vector<Free>& taken, const std::vector<double>& rate, double start,
                   double planned_s, double time_limit_s, Rng& rng) {
  JobFate fate;
  fate.length = std::min(planned_s, time_limit_s);
  fate.state = planned_s > time_limit_s ? "TIMEOUT" : "COMPLETED";
  double hazard = 0;
  for (const Free& f : taken) hazard += rate[f.second];
  const double fail_after = rng.Exponential(hazard);
  if (fail_after < fate.length) {
    fate.length = fail_after;
    fate.infra = true;
    double pick = rng.Uniform() * hazard;
    uint32_t culprit = taken.back().second;
    for (const Free& f : taken) {
      if ((pick -= rate[f.second]) <= 0) {
        culprit = f.second;
        break;
      }
    }
    const bool node_fail = rng.Bernoulli(kNodeFailShare);
    fate.state = node_fail ? "NODE_FAIL" : "FAILED";
    fate.exit_code = node_fail ? "0:0" : "1:0";
    const auto& [kind, detail] = kFailureEvents[rng.Below(kFailureEvents.size())];
    const double at = start + fate.length - rng.Uniform() * kEventLeadMaxS;
    if (rng.Bernoulli(kEventLogged)) {
      fate.failure_event = Event{static_cast<int64_t>(at), culprit, kind, detail};
    }
  } else if (fate.state == "COMPLETED") {
    const double u = rng.Uniform();
    if (u < kUserFailed) {
      fate.state = "FAILED";
      fate.exit_code = "1:0";
      fate.length *= rng.Uniform();
    } else if (u < kUserFailed + kUserCancelled) {
      fate.state = "CANCELLED by 1000";
      fate.exit_code = "0:15";
      fate.length *= rng.Uniform();
    } else if (u < kUserFailed + kUserCancelled + kOutOfMemory) {
      fate.state = "OUT_OF_MEMORY";
      fate.exit_code = "0:125";
      fate.length *= rng.Uniform();
    }
  }
  return fate;
}

// Node events that precede no failure, at random times on random nodes.
void AddNoiseEvents(const ClusterSimOptions& o, uint32_t nodes, double horizon, Rng& rng,
                    std::vector<Event>& events) {
  const double noise = kNoiseEventsPerNodeDay * o.days * static_cast<double>(nodes);
  for (double t = rng.Exponential(1); t < noise; t += rng.Exponential(1)) {
    events.push_back({static_cast<int64_t>(rng.Uniform() * horizon),
                      static_cast<uint32_t>(rng.Below(nodes)), "health_check", "warning"});
  }
}

// The node events CSV, in time order.
std::string EventsCsv(std::vector<Event>& events, const std::vector<std::string>& names,
                      int64_t start_unix, const TimeZone& zone) {
  std::sort(events.begin(), events.end(),
            [](const Event& a, const Event& b) { return a.time < b.time; });
  std::string csv = "timestamp,node,kind,detail\n";
  for (const Event& e : events) {
    fmt::format_to(std::back_inserter(csv), "{},{},{},{}\n",
                   FormatZonedIsoSeconds(start_unix + e.time, zone), names[e.node], e.kind,
                   e.detail);
  }
  return csv;
}

}  // namespace

Result<ClusterSimOutput> SimulateCluster(const ClusterSimOptions& o) {
  VIGIL_RETURN_IF_ERROR(Validate(o));
  Rng rng(o.seed, 0);
  ClusterSimOutput out;
  const auto n = static_cast<uint32_t>(o.nodes);
  const std::vector<std::string> names = NodeNames(n);
  const std::vector<double> rate = PlantLemons(o, names, rng, out);
  const SizeMix mix = FittingSizes(o.nodes);

  // Jobs placed greedily on the earliest free nodes until the span is full.
  std::priority_queue<Free, std::vector<Free>, std::greater<>> free_nodes;
  for (uint32_t i = 0; i < n; ++i) free_nodes.push({0.0, i});
  const double horizon = o.days * kSecondsPerDay;
  std::vector<Event> events;
  out.sacct = "JobID|State|NNodes|AllocTRES|Start|End|NodeList|ExitCode\n";
  std::vector<Free> taken;
  std::vector<std::string> job_names;
  int64_t job_id = kFirstJobId;
  while (free_nodes.top().first < horizon) {
    const JobDraw job = DrawJob(mix, o.gpus_per_node, rng);
    taken.clear();
    double start = 0;
    for (int k = 0; k < job.size; ++k) {
      taken.push_back(free_nodes.top());
      free_nodes.pop();
      start = std::max(start, taken.back().first);
    }
    if (start >= horizon) {  // does not fit in the span: put the nodes back
      for (const Free& f : taken) free_nodes.push(f);
      continue;
    }
    const JobFate fate = DecideFate(taken, rate, start, job.planned_s, o.time_limit_s, rng);
    const double end = start + std::max(fate.length, kMinJobS);
    for (Free& f : taken) free_nodes.push({end, f.second});
    std::sort(taken.begin(), taken.end(),
              [](const Free& a, const Free& b) { return a.second < b.second; });
    job_names.clear();
    for (const Free& f : taken) job_names.push_back(names[f.second]);
    const bool running = end > horizon;  // still running when the log is taken
    if (!running && fate.infra) ++out.infra_failures;
    if (!running && fate.failure_event) events.push_back(*fate.failure_event);
    const auto start_unix = o.start_unix + static_cast<int64_t>(start);
    fmt::format_to(
        std::back_inserter(out.sacct),
        "{}|{}|{}|billing={},cpu={},gres/gpu={},node={}|{}|{}|{}|{}\n", ++job_id,
        running ? "RUNNING" : fate.state, job.size, job.gpus, job.gpus * kCpusPerGpu, job.gpus,
        job.size, FormatZonedIsoSeconds(start_unix, o.time_zone),
        running ? "Unknown"
                : FormatZonedIsoSeconds(o.start_unix + static_cast<int64_t>(end), o.time_zone),
        reliability::CompressHostlist(job_names), running ? "0:0" : fate.exit_code);
    ++out.jobs;
  }
  AddNoiseEvents(o, n, horizon, rng, events);
  out.events = EventsCsv(events, names, o.start_unix, o.time_zone);
  return out;
}

}  // namespace vigil::sim
