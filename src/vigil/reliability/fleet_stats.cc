#include "vigil/reliability/fleet_stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <boost/math/special_functions/gamma.hpp>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

#include "vigil/core/duration.h"
#include "vigil/core/lines.h"
#include "vigil/core/text.h"
#include "vigil/reliability/models.h"

namespace vigil::reliability {
namespace {

constexpr int kDefaultGpusPerNode = 8;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool IsFailedState(JobState s) {
  return s == JobState::kFailed || s == JobState::kNodeFail || s == JobState::kBootFail;
}

// States in which a job may have ended because of the infrastructure (a hang ends in a timeout
// or a cancellation); a node event in the window decides.
bool MayBeInfrastructure(JobState s) {
  return IsFailedState(s) || s == JobState::kTimeout || s == JobState::kCancelled;
}

// Exact Poisson interval for `count` events (Garwood 1936), in units of the exposure.
std::pair<double, double> PoissonInterval(int64_t count, double confidence) {
  const double alpha = 1 - confidence;
  const double lower =
      count == 0 ? 0 : boost::math::gamma_p_inv(static_cast<double>(count), alpha / 2);
  const double upper = boost::math::gamma_p_inv(static_cast<double>(count + 1), 1 - alpha / 2);
  return {lower, upper};
}

// P(X >= k) for X ~ Poisson(mean).
double PoissonUpperTail(int64_t k, double mean) {
  if (k <= 0) return 1;
  if (mean <= 0) return 0;
  return boost::math::gamma_p(static_cast<double>(k), mean);
}

// Benjamini-Hochberg adjusted p-values, in the order of `p`.
std::vector<double> BenjaminiHochberg(const std::vector<double>& p) {
  const size_t m = p.size();
  std::vector<size_t> order(m);
  for (size_t i = 0; i < m; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p[a] < p[b]; });
  std::vector<double> q(m);
  double running = 1;
  for (size_t r = m; r-- > 0;) {
    running = std::min(running, p[order[r]] * static_cast<double>(m) / static_cast<double>(r + 1));
    q[order[r]] = running;
  }
  return q;
}

int InferGpusPerNode(const SacctLog& log) {
  std::map<int, int64_t> counts;
  for (const SacctJob& job : log.jobs) {
    if (job.nnodes >= 2 && job.gpus > 0 && job.gpus % job.nnodes == 0) {
      ++counts[job.gpus / job.nnodes];
    }
  }
  int best = kDefaultGpusPerNode;
  int64_t best_count = 0;
  for (const auto& [gpn, n] : counts) {
    if (n > best_count) best = gpn, best_count = n;
  }
  return best;
}

// The size class of a job, by powers of two of nodes (class c holds 2^c to 2^(c+1) - 1 nodes): the
// rows of the observed-MTTF table, and the groups of jobs that share a failure rate per hour of
// running in the lemon test (a larger job fails more often for the same time).
int SizeClassOf(const SacctJob& job) {
  return std::bit_width(static_cast<uint32_t>(std::max(job.nnodes, 1))) - 1;
}

}  // namespace

Status Validate(const FleetStatsOptions& o) {
  if (!std::isfinite(o.attribution_window_s) || o.attribution_window_s < 0) {
    return Status::InvalidArgument("--window must be zero or more");
  }
  if (!(o.fdr > 0 && o.fdr < 1)) return Status::InvalidArgument("--fdr must be in (0, 1)");
  if (!(o.confidence > 0 && o.confidence < 1)) {
    return Status::InvalidArgument("--confidence must be in (0, 1)");
  }
  if (o.gpus_per_node < 0) return Status::InvalidArgument("--gpus-per-node must be zero or more");
  for (int64_t g : o.projection_gpus) {
    if (g <= 0) return Status::InvalidArgument("projection sizes must be positive GPU counts");
  }
  return Status::Ok();
}

namespace {

// Each node's events in time order, and counted by kind, for the attribution window.
struct NodeEventIndex {
  std::vector<std::vector<int64_t>> times;            // per node, sorted
  std::vector<std::map<std::string, int64_t>> kinds;  // per node: kind -> events
  int64_t window = 0;  // seconds before a job's end in which an event is blamed for it

  // Whether `node` logged an event from `window` before the job's end to kEventGraceAfterEnd
  // after it.
  bool HasEventNear(uint32_t node, const SacctJob& job) const {
    const auto grace = static_cast<int64_t>(kEventGraceAfterEnd);
    const auto& t = times[node];
    const auto it = std::lower_bound(t.begin(), t.end(), job.end - window);
    return it != t.end() && *it <= job.end + grace;
  }
};

// Events of nodes the log does not know are counted in `*unmatched` and left out.
NodeEventIndex IndexEvents(const SacctLog& log, std::span<const NodeEvent> events, double window_s,
                           int64_t* unmatched) {
  NodeEventIndex index;
  index.times.resize(log.node_names.size());
  index.kinds.resize(log.node_names.size());
  index.window = static_cast<int64_t>(window_s);
  for (const NodeEvent& e : events) {
    const auto it = log.node_ids.find(e.node);
    if (it == log.node_ids.end()) {
      ++*unmatched;
      continue;
    }
    index.times[it->second].push_back(e.time);
    ++index.kinds[it->second][e.kind];
  }
  for (auto& t : index.times) std::sort(t.begin(), t.end());
  return index;
}

// What one pass over the finished jobs learns: which failed and why, and the lemon evidence, in
// two channels. A failed job with node events in the window blames the nodes that logged them; a
// failed single-node job without any blames its node; a failed multi-node job without events
// blames nobody (any of its nodes could be the culprit).
struct JobTally {
  std::array<StateSummary, kJobStateCount> states{};
  std::vector<char> failed, infra;                         // per job
  std::vector<int64_t> event_failed_on, single_failed_on;  // per node
  // Size class -> (event blames, node-seconds of its jobs).
  std::unordered_map<int, std::pair<int64_t, double>> event_blames;
  int64_t single_failures = 0;  // failed single-node jobs that no event explains
  int64_t single_jobs = 0;
  double node_seconds = 0;
};

// Tallies the log's jobs; counts finished, unfinished and infrastructure jobs into `out`.
JobTally TallyJobs(const SacctLog& log, const NodeEventIndex& index, FleetStats& out) {
  const size_t node_count = log.node_names.size();
  JobTally tally;
  tally.failed.assign(log.jobs.size(), 0);
  tally.infra.assign(log.jobs.size(), 0);
  tally.event_failed_on.assign(node_count, 0);
  tally.single_failed_on.assign(node_count, 0);
  for (size_t j = 0; j < log.jobs.size(); ++j) {
    const SacctJob& job = log.jobs[j];
    if (!job.Finished()) {
      ++out.jobs_unfinished;
      continue;
    }
    ++out.jobs_finished;
    const double hours = job.ElapsedSeconds() / kSecondsPerHour;
    StateSummary& s = tally.states[static_cast<int>(job.state)];
    ++s.jobs;
    s.gpu_hours += job.gpus * hours;
    s.node_hours += job.nnodes * hours;
    tally.node_seconds += job.nnodes * job.ElapsedSeconds();
    // The nodes that logged an event in the window of a job that may have ended by the
    // infrastructure are blamed for it, and the job is then a failure.
    int64_t blamed = 0;
    if (MayBeInfrastructure(job.state)) {
      for (uint32_t n : log.NodesOf(job)) {
        if (index.HasEventNear(n, job)) {
          ++tally.event_failed_on[n];
          ++blamed;
        }
      }
    }
    if (job.state == JobState::kNodeFail || job.state == JobState::kBootFail) {
      tally.infra[j] = 1;
      ++out.infra_by_state;
    } else if (blamed > 0) {
      tally.infra[j] = 1;
      ++out.infra_by_event;
    }
    tally.failed[j] = IsFailedState(job.state) || tally.infra[j];
    auto& [blames, class_seconds] = tally.event_blames[SizeClassOf(job)];
    class_seconds += job.nnodes * job.ElapsedSeconds();
    blames += blamed;
    tally.single_jobs += job.nnodes == 1;
    if (tally.failed[j] && blamed == 0 && job.nnodes == 1 && job.nodes_end > job.nodes_begin) {
      ++tally.single_failed_on[log.NodesOf(job)[0]];
      ++tally.single_failures;
    }
  }
  return tally;
}

// The states that occurred, most jobs first, and the GPU hours of all.
void SummarizeStates(const JobTally& tally, FleetStats& out) {
  for (int i = 0; i < kJobStateCount; ++i) {
    StateSummary state = tally.states[i];
    state.state = static_cast<JobState>(i);
    out.gpu_hours += state.gpu_hours;
    if (state.jobs > 0) out.states.push_back(state);
  }
  std::stable_sort(out.states.begin(), out.states.end(),
                   [](const StateSummary& a, const StateSummary& b) { return a.jobs > b.jobs; });
  out.infra_failures = out.infra_by_state + out.infra_by_event;
}

// `failures` over `node_days` per 1000 node-days, with its exact Poisson interval; NaN without
// exposure.
RateEstimate RateOf(int64_t failures, double node_days, double confidence) {
  RateEstimate r{.failures = failures, .node_days = node_days, .per_1000_node_days = kNaN};
  if (node_days <= 0) return r;
  const double scale = 1000 / node_days;
  const auto [lo, hi] = PoissonInterval(failures, confidence);
  r.per_1000_node_days = static_cast<double>(failures) * scale;
  r.lower = lo * scale;
  r.upper = hi * scale;
  return r;
}

// Mean time to failure of `nodes` nodes at `rate` failures per 1,000 node-days.
double ProjectedMttf(double nodes, double rate) {
  return rate > 0 ? 1 / (nodes * PerNodeSecondRate(rate)) : std::numeric_limits<double>::infinity();
}

// The observed MTTF of each size class of jobs, and what the fleet's rate projects for it.
std::vector<SizeClassRow> SizeClasses(const SacctLog& log, const JobTally& tally,
                                      double per_1000_node_days, double confidence) {
  std::map<int, SizeClassRow> classes;
  std::map<int, double> class_node_seconds;
  for (size_t j = 0; j < log.jobs.size(); ++j) {
    const SacctJob& job = log.jobs[j];
    if (!job.Finished() || job.nnodes <= 0) continue;
    const int c = SizeClassOf(job);
    SizeClassRow& row = classes[c];
    row.min_nodes = 1 << c;
    row.max_nodes = static_cast<int32_t>((int64_t{1} << (c + 1)) - 1);
    ++row.jobs;
    row.infra_failures += tally.infra[j];
    row.job_hours += job.ElapsedSeconds() / kSecondsPerHour;
    class_node_seconds[c] += job.nnodes * job.ElapsedSeconds();
  }
  std::vector<SizeClassRow> out;
  for (auto& [c, row] : classes) {
    const double seconds = row.job_hours * kSecondsPerHour;
    row.observed_mttf_s =
        row.infra_failures > 0 ? seconds / static_cast<double>(row.infra_failures) : kNaN;
    const double mean_nodes = seconds > 0 ? class_node_seconds[c] / seconds : row.min_nodes;
    row.projected_mttf_s = ProjectedMttf(mean_nodes, per_1000_node_days);
    row.rate = RateOf(row.infra_failures, class_node_seconds[c] / kSecondsPerDay, confidence);
    out.push_back(row);
  }
  return out;
}

// The fleet's infrastructure failure rate with its interval, the MTTF it projects for jobs of
// the options' sizes, and the size classes (none without any node-days).
void FailureRate(const SacctLog& log, const JobTally& tally, const FleetStatsOptions& options,
                 FleetStats& out) {
  out.rate = RateOf(out.infra_failures, tally.node_seconds / kSecondsPerDay, options.confidence);
  if (out.rate.node_days <= 0) return;
  for (int64_t gpus : options.projection_gpus) {
    const double nodes = static_cast<double>(gpus) / out.gpus_per_node;
    out.projections.push_back({gpus, nodes, ProjectedMttf(nodes, out.rate.per_1000_node_days),
                               ProjectedMttf(nodes, out.rate.upper),
                               ProjectedMttf(nodes, out.rate.lower)});
  }
  out.size_classes = SizeClasses(log, tally, out.rate.per_1000_node_days, options.confidence);
}

// Lemon nodes: each channel's count on a node against what the fleet predicts for the same
// jobs: for events, the rate per node-hour of running in the job's size class (a job a lemon
// kills is short, so its exposure stays low while its failures pile up); for single-node
// failures, the fleet's fraction of failed single-node jobs. A Poisson tail for each, the
// smaller doubled (Bonferroni), then Benjamini-Hochberg across nodes. Sets out.nodes (the nodes
// tested) and out.lemons, most significant first.
void FindLemons(const SacctLog& log, const NodeEventIndex& index, JobTally& tally,
                const FleetStatsOptions& options, FleetStats& out) {
  const size_t node_count = log.node_names.size();
  std::vector<int64_t> jobs_on(node_count, 0), failed_on(node_count, 0);
  std::vector<double> expected_events_on(node_count, 0), expected_single_on(node_count, 0);
  // Most failures of small jobs are the user's and come per job, not per hour.
  const double single_fraction =
      tally.single_jobs > 0
          ? static_cast<double>(tally.single_failures) / static_cast<double>(tally.single_jobs)
          : 0;
  for (size_t j = 0; j < log.jobs.size(); ++j) {
    const SacctJob& job = log.jobs[j];
    if (!job.Finished()) continue;
    const auto& [blames, class_seconds] = tally.event_blames[SizeClassOf(job)];
    const double event_rate = class_seconds > 0 ? static_cast<double>(blames) / class_seconds : 0;
    for (uint32_t node : log.NodesOf(job)) {
      ++jobs_on[node];
      failed_on[node] += tally.failed[j];
      expected_events_on[node] += event_rate * job.ElapsedSeconds();
      if (job.nnodes == 1) expected_single_on[node] += single_fraction;
    }
  }
  std::vector<uint32_t> tested;
  std::vector<double> p_values;
  for (uint32_t node = 0; node < node_count; ++node) {
    if (jobs_on[node] == 0) continue;
    tested.push_back(node);
    const double p =
        std::min(PoissonUpperTail(tally.event_failed_on[node], expected_events_on[node]),
                 PoissonUpperTail(tally.single_failed_on[node], expected_single_on[node]));
    p_values.push_back(std::min(1.0, 2 * p));
  }
  out.nodes = static_cast<int64_t>(tested.size());
  const std::vector<double> q_values = BenjaminiHochberg(p_values);
  for (size_t i = 0; i < tested.size(); ++i) {
    if (q_values[i] > options.fdr) continue;
    const uint32_t node = tested[i];
    LemonNode lemon;
    lemon.node = log.node_names[node];
    lemon.jobs = jobs_on[node];
    lemon.failed_jobs = failed_on[node];
    lemon.event_failures = tally.event_failed_on[node];
    lemon.expected_event_failures = expected_events_on[node];
    lemon.single_failures = tally.single_failed_on[node];
    lemon.expected_single_failures = expected_single_on[node];
    lemon.p_value = p_values[i];
    lemon.q_value = q_values[i];
    lemon.events_by_kind.assign(index.kinds[node].begin(), index.kinds[node].end());
    out.lemons.push_back(std::move(lemon));
  }
  std::sort(out.lemons.begin(), out.lemons.end(), [](const LemonNode& a, const LemonNode& b) {
    return a.p_value != b.p_value ? a.p_value < b.p_value : a.node < b.node;
  });
}

}  // namespace

Result<FleetStats> ComputeFleetStats(const SacctLog& log, std::span<const NodeEvent> events,
                                     const FleetStatsOptions& options) {
  VIGIL_RETURN_IF_ERROR(Validate(options));
  FleetStats out;
  out.gpus_per_node = options.gpus_per_node > 0 ? options.gpus_per_node : InferGpusPerNode(log);
  const NodeEventIndex index =
      IndexEvents(log, events, options.attribution_window_s, &out.events_unmatched);
  JobTally tally = TallyJobs(log, index, out);
  SummarizeStates(tally, out);
  FailureRate(log, tally, options, out);
  FindLemons(log, index, tally, options, out);
  return out;
}

Result<std::vector<std::string>> ParseLemonTruth(std::string_view text, std::string_view source) {
  std::vector<std::string> lemons;
  LineReader lines(text);
  std::string_view raw;
  bool have_header = false;
  while (lines.Next(raw)) {
    const std::string_view line = Trim(raw);
    const int64_t line_no = lines.line_no();
    if (line.empty()) continue;
    if (!have_header) {
      if (!line.starts_with("node,kind")) {
        return Status::InvalidArgument(fmt::format(
            "{}:{}: expected the header node,kind[,...], got {}", source, line_no, Quote(line)));
      }
      have_header = true;
      continue;
    }
    const size_t c1 = line.find(',');
    if (c1 == std::string_view::npos || c1 == 0) {
      return Status::InvalidArgument(
          fmt::format("{}:{}: expected node,kind, got {}", source, line_no, Quote(line)));
    }
    const std::string_view kind = Trim(line.substr(c1 + 1, line.find(',', c1 + 1) - c1 - 1));
    if (kind == "lemon") lemons.emplace_back(Trim(line.substr(0, c1)));
  }
  if (!have_header) {
    return Status::InvalidArgument(fmt::format("{}: empty: expected node,kind[,...]", source));
  }
  return lemons;
}

LemonScore ScoreLemons(std::span<const LemonNode> found, std::span<const std::string> truth) {
  const std::set<std::string, std::less<>> planted(truth.begin(), truth.end());
  LemonScore s;
  for (const LemonNode& lemon : found) {
    if (planted.count(lemon.node) > 0) {
      ++s.true_positives;
    } else {
      ++s.false_positives;
    }
  }
  s.false_negatives = static_cast<int64_t>(planted.size()) - s.true_positives;
  if (!found.empty()) s.precision = static_cast<double>(s.true_positives) / found.size();
  if (!planted.empty()) s.recall = static_cast<double>(s.true_positives) / planted.size();
  return s;
}

}  // namespace vigil::reliability
