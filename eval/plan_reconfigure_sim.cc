// The reconfiguration plan of `vigil plan reconfigure` against restarting every job at its old
// size, in a simulation of node failures and repairs over weeks (docs/benchmarks.md).
//
// A cluster of nodes (8 GPUs each) runs concurrent jobs. Nodes fail as a Poisson process (the
// rate of Meta's RSC study, or a multiple) and come back after a repair time. A failure lands on
// a uniformly chosen healthy node: the job holding it (if any) stops. At every failure and repair
// each policy decides the sizes: the plan by PlanReconfiguration (horizon: the MTTF of the
// healthy nodes), the naive one by RestartAtOldSize. A job that (re)starts produces nothing for
// its transition time. Both policies see the same failures (same seed); the score is the
// weighted TFLOP each completes over the period. Work lost since the last checkpoint is the same
// for both and left out.
//
// One scenario's jobs come from a jobs file whose curves the training step model gives
// (eval/data/plan/reconfigure_models.yaml: `vigil plan reconfigure`'s own reading of it).
//
//   plan_reconfigure_sim [--seeds N] [--jobs FILE]   (run from the repository root)
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <queue>
#include <string>
#include <vector>

#include "vigil/core/clock.h"
#include "vigil/core/random.h"
#include "vigil/plan/reconfigure.h"
#include "vigil/reliability/models.h"

namespace {

using vigil::plan::JobCurve;
using vigil::plan::ReconfigurePlan;

constexpr int kGpusPerNode = 8;
constexpr double kDay = 86400;

// A job as submitted: its requested size, the unit its layout scales by (TP x PP GPUs), and its
// per-GPU throughput at the request.
struct JobSpec {
  int64_t request = 0;
  int64_t unit = 8;
  double tflops_per_gpu = 400;
  double weight = 1;
  double transition_s = 900;
};

struct Scenario {
  std::string name;
  int64_t nodes = 0;
  std::vector<JobCurve> jobs;
  double rate = 6.5;       // failures per 1000 node-days
  double repair_s = kDay;  // a failed node's time out
  double days = 30;
};

// Allowed sizes: every multiple of the unit up to 1.5x the request. Per-GPU throughput falls as a
// job grows (data-parallel communication and a smaller batch per GPU): t(g) = t0 (1 + b) /
// (1 + b g / request), b = 0.15, so 1.5x the GPUs give about 1.42x the throughput.
JobCurve CurveOf(const JobSpec& s, size_t index) {
  constexpr double kScalingLoss = 0.15;
  JobCurve c;
  c.name = fmt::format("job{}", index);
  c.weight = s.weight;
  c.current_gpus = s.request;
  c.transition_s = s.transition_s;
  for (int64_t g = s.unit; g * 2 <= s.request * 3; g += s.unit) {
    const double ratio = static_cast<double>(g) / static_cast<double>(s.request);
    c.points.push_back({g, s.tflops_per_gpu * (1 + kScalingLoss) / (1 + kScalingLoss * ratio)});
  }
  return c;
}

// One policy's cluster: the jobs' current sizes and when each becomes productive again.
class Policy {
 public:
  Policy(std::vector<JobCurve> jobs, bool optimal)
      : jobs_(std::move(jobs)), ready_(jobs_.size(), 0), optimal_(optimal) {}

  // Credits work from `last` to `now` at the current sizes.
  void Advance(double last, double now) {
    for (size_t j = 0; j < jobs_.size(); ++j) {
      if (jobs_[j].hit || jobs_[j].current_gpus == 0) continue;
      const double from = std::max(last, ready_[j]);
      if (now > from) {
        work_ += jobs_[j].weight * jobs_[j].TflopsAt(jobs_[j].current_gpus) * (now - from);
      }
    }
  }

  // The job holding healthy node `node` of the layout (jobs in order, then idle nodes), or -1.
  int JobOnNode(int64_t node) const {
    for (size_t j = 0; j < jobs_.size(); ++j) {
      if (jobs_[j].hit) continue;
      node -= jobs_[j].current_gpus / kGpusPerNode;
      if (node < 0) return static_cast<int>(j);
    }
    return -1;
  }

  void Hit(int job) {
    if (job >= 0) jobs_[static_cast<size_t>(job)].hit = true;
  }

  void Replan(int64_t healthy_nodes, double rate, double now) {
    const double horizon = *vigil::reliability::JobMttfSeconds(
        static_cast<double>(std::max<int64_t>(healthy_nodes, 1)), rate);
    const int64_t gpus = healthy_nodes * kGpusPerNode;
    const ReconfigurePlan plan = optimal_ ? *vigil::plan::PlanReconfiguration(jobs_, gpus, horizon)
                                          : vigil::plan::RestartAtOldSize(jobs_, gpus, horizon);
    for (size_t j = 0; j < jobs_.size(); ++j) {
      const vigil::plan::JobPlan& p = plan.jobs[j];
      if (p.restarts) ready_[j] = now + jobs_[j].transition_s;
      // A naive job that must wait keeps its old size to come back at.
      if (p.gpus > 0 || optimal_) {
        jobs_[j].current_gpus = p.gpus;
        jobs_[j].hit = false;
      }
    }
  }

  double work() const { return work_; }

 private:
  std::vector<JobCurve> jobs_;
  std::vector<double> ready_;
  bool optimal_;
  double work_ = 0;
};

// One run: both policies through the same failures. Returns {plan work, naive work}.
std::pair<double, double> RunOnce(const Scenario& s, uint64_t seed) {
  Policy plan(s.jobs, true);
  Policy naive(s.jobs, false);
  vigil::Rng rng(seed, 0);
  const double per_node = vigil::reliability::PerNodeSecondRate(s.rate);
  const double end = s.days * kDay;
  std::priority_queue<double, std::vector<double>, std::greater<>> repairs;
  int64_t healthy = s.nodes;
  double now = 0;
  for (;;) {
    const double next_failure = now + rng.Exponential(per_node * static_cast<double>(healthy));
    const bool repair = !repairs.empty() && repairs.top() < next_failure;
    const double t = std::min(repair ? repairs.top() : next_failure, end);
    plan.Advance(now, t);
    naive.Advance(now, t);
    now = t;
    if (now >= end) break;
    if (repair) {
      repairs.pop();
      ++healthy;
    } else {
      // The same node index for both policies; each maps it onto its own layout.
      const int64_t node = static_cast<int64_t>(rng.Uniform() * static_cast<double>(healthy));
      const int64_t index = std::min(node, healthy - 1);
      plan.Hit(plan.JobOnNode(index));
      naive.Hit(naive.JobOnNode(index));
      --healthy;
      repairs.push(now + s.repair_s);
    }
    plan.Replan(healthy, s.rate, now);
    naive.Replan(healthy, s.rate, now);
  }
  return {plan.work(), naive.work()};
}

// What the plan gains with every node healthy, over the whole period: GPUs moved to the jobs
// whose weight x marginal throughput is highest, which a scheduler could do without any failure.
double NoFailureGain(const Scenario& s) {
  const std::vector<JobCurve>& jobs = s.jobs;
  const int64_t gpus = s.nodes * kGpusPerNode;
  const double horizon = s.days * kDay;
  return vigil::plan::PlanReconfiguration(jobs, gpus, horizon)->value /
         vigil::plan::RestartAtOldSize(jobs, gpus, horizon).value;
}

std::vector<JobCurve> Curves(const std::vector<JobSpec>& specs) {
  std::vector<JobCurve> jobs;
  for (size_t j = 0; j < specs.size(); ++j) jobs.push_back(CurveOf(specs[j], j));
  return jobs;
}

std::vector<JobCurve> Uniform(int count, int64_t request, int64_t unit, double transition_s) {
  std::vector<JobSpec> jobs;
  for (int j = 0; j < count; ++j) {
    jobs.push_back({.request = request, .unit = unit, .transition_s = transition_s});
  }
  return Curves(jobs);
}

// A mixed cluster: two large pretraining jobs (weight 2), mid-size jobs and small fine-tunes.
std::vector<JobCurve> Mixed(double transition_s) {
  std::vector<JobSpec> jobs = {
      {.request = 2048,
       .unit = 128,
       .tflops_per_gpu = 420,
       .weight = 2,
       .transition_s = transition_s},
      {.request = 2048,
       .unit = 128,
       .tflops_per_gpu = 420,
       .weight = 2,
       .transition_s = transition_s},
  };
  for (int j = 0; j < 6; ++j) {
    jobs.push_back(
        {.request = 512, .unit = 64, .tflops_per_gpu = 380, .transition_s = transition_s});
  }
  for (int j = 0; j < 16; ++j) {
    jobs.push_back(
        {.request = 64, .unit = 8, .tflops_per_gpu = 300, .weight = 0.5, .transition_s = 300});
  }
  return Curves(jobs);
}

// `from_models`: the jobs file's jobs, their curves from the step model.
std::vector<Scenario> Scenarios(const std::vector<JobCurve>& from_models) {
  int64_t requested = 0;
  for (const JobCurve& j : from_models) requested += j.current_gpus;
  const int64_t model_nodes = requested / kGpusPerNode;
  return {
      {.name = "full: 128 nodes, 4 jobs x 256 GPUs (unit 64), RSC rate, 1-day repair",
       .nodes = 128,
       .jobs = Uniform(4, 256, 64, 900)},
      {.name = "same, 5x the failure rate",
       .nodes = 128,
       .jobs = Uniform(4, 256, 64, 900),
       .rate = 32.5},
      {.name = "same, 5x rate, 3-day repair",
       .nodes = 128,
       .jobs = Uniform(4, 256, 64, 900),
       .rate = 32.5,
       .repair_s = 3 * kDay},
      {.name = "5% spare nodes: 136 nodes, 4 x 256, 5x rate",
       .nodes = 136,
       .jobs = Uniform(4, 256, 64, 900),
       .rate = 32.5},
      {.name = "1-hour transitions: 128 nodes, 4 x 256, 5x rate",
       .nodes = 128,
       .jobs = Uniform(4, 256, 64, 3600),
       .rate = 32.5},
      {.name = "mixed: 1,024 nodes, 2 x 2048 (w 2) + 6 x 512 + 16 x 64 (w 0.5), RSC rate",
       .nodes = 1024,
       .jobs = Mixed(1200)},
      {.name = "mixed, 5x rate, 2-day repair",
       .nodes = 1024,
       .jobs = Mixed(1200),
       .rate = 32.5,
       .repair_s = 2 * kDay},
      {.name = fmt::format("curves from the step model: {} nodes, the jobs of --jobs, RSC rate",
                           model_nodes),
       .nodes = model_nodes,
       .jobs = from_models},
      {.name = "same, 5x rate", .nodes = model_nodes, .jobs = from_models, .rate = 32.5},
  };
}

// The jobs file's jobs with their curves; exits with the error when they cannot be read.
std::vector<JobCurve> ModelJobs(const std::string& path, double* seconds) {
  auto jobs = vigil::plan::ReadJobs(path);
  const double start = vigil::SystemClock().MonotonicSeconds();
  const vigil::Status filled = jobs.ok() ? vigil::plan::CurvesFromModels(*jobs) : jobs.status();
  *seconds = vigil::SystemClock().MonotonicSeconds() - start;
  if (!filled.ok()) {
    fmt::print(stderr, "plan_reconfigure_sim: {}\n", filled.message());
    std::exit(2);
  }
  return *std::move(jobs);
}

}  // namespace

int main(int argc, char** argv) {
  int seeds = 20;
  std::string jobs_path = "eval/data/plan/reconfigure_models.yaml";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--seeds") == 0) seeds = std::max(1, std::atoi(argv[i + 1]));
    if (std::strcmp(argv[i], "--jobs") == 0) jobs_path = argv[i + 1];
  }
  double curves_s = 0;
  const std::vector<JobCurve> from_models = ModelJobs(jobs_path, &curves_s);
  fmt::print(
      "| scenario | plan / naive, mean | min | max | naive's share of the requests' weighted "
      "throughput | plan / requests with no failure |\n|---|---|---|---|---|---|\n");
  const std::vector<Scenario> scenarios = Scenarios(from_models);
  for (const Scenario& s : scenarios) {
    std::vector<double> gains;
    double naive_share = 0;
    double peak = 0;
    for (const JobCurve& j : s.jobs) peak += j.weight * j.TflopsAt(j.current_gpus) * s.days * kDay;
    for (int seed = 0; seed < seeds; ++seed) {
      const auto [plan, naive] = RunOnce(s, static_cast<uint64_t>(seed) + 1);
      gains.push_back(plan / naive);
      naive_share += naive / peak / seeds;
    }
    double mean = 0;
    for (double g : gains) mean += g / static_cast<double>(gains.size());
    fmt::print("| {} | {:.3f} | {:.3f} | {:.3f} | {:.3f} | {:.3f} |\n", s.name, mean,
               *std::ranges::min_element(gains), *std::ranges::max_element(gains), naive_share,
               NoFailureGain(s));
  }
  fmt::print("\n{} seeds per scenario, {} days each\n", seeds, scenarios.front().days);
  fmt::print("\nCurves of {} ({} jobs) from the step model in {:.3f} s:\n", jobs_path,
             from_models.size(), curves_s);
  for (const JobCurve& j : from_models) {
    fmt::print("  {} (now {} GPUs: {:.1f} TFLOP/s per GPU; {} sizes, {} left out)\n", j.name,
               j.current_gpus, j.TflopsAt(j.current_gpus) / static_cast<double>(j.current_gpus),
               j.points.size(), j.left_out.size());
  }
  return 0;
}
