#include "vigil/plan/reconfigure.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "vigil/core/file.h"
#include "vigil/core/yaml_fields.h"
#include "vigil/reliability/models.h"

namespace vigil::plan {
namespace {

constexpr int64_t kMaxGpus = 1048576;     // as the CLI's --gpus
constexpr double kMaxTflopsPerGpu = 1e5;  // far above any GPU (a B200 peaks at 4,500 FP8)
constexpr double kMaxWeight = 1e6;
constexpr double kMaxTransitionS = 30 * 86400.0;
constexpr size_t kMaxJobs = 10000;
constexpr size_t kMaxPoints = 1000;
// The exact DP's limits: table cells (4 bytes each: 200 MB) and steps (seconds on one core).
constexpr double kMaxCells = 5e7;
constexpr double kMaxSteps = 2e9;

Result<ThroughputPoint> ParsePoint(const YAML::Node& n, const std::string& at,
                                   const YamlFields& f) {
  VIGIL_RETURN_IF_ERROR(f.Map(n, at, {"gpus", "tflops_per_gpu"}));
  ThroughputPoint p;
  for (const char* key : {"gpus", "tflops_per_gpu"}) {
    if (!n[key]) return f.Error(n, YamlFields::Path(at, key), "missing");
  }
  VIGIL_ASSIGN_OR_RETURN(p.gpus, f.Whole(n["gpus"], YamlFields::Path(at, "gpus"), 1, kMaxGpus));
  VIGIL_ASSIGN_OR_RETURN(
      p.tflops_per_gpu,
      f.Number(n["tflops_per_gpu"], YamlFields::Path(at, "tflops_per_gpu"), 0, kMaxTflopsPerGpu));
  return p;
}

Result<std::vector<ThroughputPoint>> ParseCurve(const YAML::Node& n, const std::string& at,
                                                const YamlFields& f) {
  if (!n.IsSequence() || n.size() == 0 || n.size() > kMaxPoints) {
    return f.Error(n, at,
                   fmt::format("expected a list of 1 to {} {{gpus, tflops_per_gpu}}", kMaxPoints));
  }
  std::vector<ThroughputPoint> points;
  std::set<int64_t> seen;
  for (size_t i = 0; i < n.size(); ++i) {
    const std::string where = fmt::format("{}[{}]", at, i);
    VIGIL_ASSIGN_OR_RETURN(const ThroughputPoint p, ParsePoint(n[i], where, f));
    if (!seen.insert(p.gpus).second) {
      return f.Error(n[i], where + ".gpus", fmt::format("{} GPUs listed twice", p.gpus));
    }
    points.push_back(p);
  }
  std::ranges::sort(points, {}, &ThroughputPoint::gpus);
  return points;
}

Result<JobCurve> ParseJob(const YAML::Node& n, const std::string& at, const YamlFields& f) {
  VIGIL_RETURN_IF_ERROR(
      f.Map(n, at, {"name", "weight", "gpus", "hit", "transition", "throughput"}));
  for (const char* key : {"name", "gpus", "transition", "throughput"}) {
    if (!n[key]) return f.Error(n, YamlFields::Path(at, key), "missing");
  }
  JobCurve job;
  VIGIL_ASSIGN_OR_RETURN(job.name, f.Text(n["name"], YamlFields::Path(at, "name")));
  if (n["weight"]) {
    VIGIL_ASSIGN_OR_RETURN(job.weight,
                           f.Number(n["weight"], YamlFields::Path(at, "weight"), 0, kMaxWeight));
  }
  VIGIL_ASSIGN_OR_RETURN(job.current_gpus,
                         f.Whole(n["gpus"], YamlFields::Path(at, "gpus"), 0, kMaxGpus));
  if (n["hit"]) {
    VIGIL_ASSIGN_OR_RETURN(const std::string hit,
                           f.Choice(n["hit"], YamlFields::Path(at, "hit"), {"true", "false"}));
    job.hit = hit == "true";
  }
  VIGIL_ASSIGN_OR_RETURN(
      job.transition_s,
      f.Seconds(n["transition"], YamlFields::Path(at, "transition"), 0, kMaxTransitionS));
  VIGIL_ASSIGN_OR_RETURN(job.points,
                         ParseCurve(n["throughput"], YamlFields::Path(at, "throughput"), f));
  if (job.current_gpus > 0 && std::ranges::none_of(job.points, [&](const ThroughputPoint& p) {
        return p.gpus == job.current_gpus;
      })) {
    return f.Error(n["gpus"], YamlFields::Path(at, "gpus"),
                   fmt::format("{} is not one of the job's throughput sizes", job.current_gpus));
  }
  return job;
}

Result<std::vector<JobCurve>> Parse(const YAML::Node& doc, const YamlFields& f) {
  VIGIL_RETURN_IF_ERROR(f.Map(doc, "", {"jobs"}));
  const YAML::Node list = doc["jobs"];
  if (!list || !list.IsSequence() || list.size() == 0 || list.size() > kMaxJobs) {
    return f.Error(list ? list : doc, "jobs",
                   fmt::format("expected a list of 1 to {} jobs", kMaxJobs));
  }
  std::vector<JobCurve> jobs;
  std::set<std::string> names;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string at = fmt::format("jobs[{}]", i);
    VIGIL_ASSIGN_OR_RETURN(JobCurve job, ParseJob(list[i], at, f));
    if (!names.insert(job.name).second) {
      return f.Error(list[i]["name"], at + ".name",
                     fmt::format("'{}' is the name of an earlier job", job.name));
    }
    jobs.push_back(std::move(job));
  }
  return jobs;
}

// The greatest common divisor of every allowed size: the DP's unit of GPUs, exact because every
// size is a whole number of units.
int64_t GpuUnit(std::span<const JobCurve> jobs) {
  int64_t unit = 0;
  for (const JobCurve& j : jobs) {
    for (const ThroughputPoint& p : j.points) unit = std::gcd(unit, p.gpus);
  }
  return std::max<int64_t>(unit, 1);
}

JobPlan PlanOf(const JobCurve& job, int64_t gpus, double horizon_s) {
  return JobPlan{.name = job.name,
                 .gpus = gpus,
                 .current_gpus = job.current_gpus,
                 .restarts = gpus > 0 && (job.hit || gpus != job.current_gpus),
                 .value = PlanValue(job, gpus, horizon_s)};
}

ReconfigurePlan Total(std::vector<JobPlan> jobs) {
  ReconfigurePlan plan;
  plan.jobs = std::move(jobs);
  for (const JobPlan& j : plan.jobs) {
    plan.gpus_used += j.gpus;
    plan.value += j.value;
  }
  return plan;
}

}  // namespace

double JobCurve::TflopsAt(int64_t gpus) const {
  for (const ThroughputPoint& p : points) {
    if (p.gpus == gpus) return p.tflops_per_gpu * static_cast<double>(gpus);
  }
  return 0;
}

Result<std::vector<JobCurve>> ParseJobs(std::string_view text, std::string_view source) {
  VIGIL_ASSIGN_OR_RETURN(const YAML::Node doc, LoadYaml(text, source));
  return Parse(doc, YamlFields(source, "jobs file"));
}

Result<std::vector<JobCurve>> ReadJobs(const std::string& path) {
  VIGIL_ASSIGN_OR_RETURN(const std::string text, ReadFile(path));
  return ParseJobs(text, path);
}

double PlanValue(const JobCurve& job, int64_t gpus, double horizon_s) {
  if (gpus == 0) return 0;
  const bool restarts = job.hit || gpus != job.current_gpus;
  const double productive_s = std::max(0.0, horizon_s - (restarts ? job.transition_s : 0));
  return job.weight * job.TflopsAt(gpus) * productive_s;
}

Result<ReconfigurePlan> PlanReconfiguration(std::span<const JobCurve> jobs, int64_t healthy_gpus,
                                            double horizon_s) {
  if (jobs.empty()) return Status::InvalidArgument("no jobs to plan");
  if (healthy_gpus < 0) return Status::InvalidArgument("--gpus must be at least 0");
  if (!(horizon_s > 0)) return Status::InvalidArgument("the horizon must be a positive time");
  const int64_t unit = GpuUnit(jobs);
  const size_t cap = static_cast<size_t>(healthy_gpus / unit);
  double steps = 0;
  for (const JobCurve& j : jobs) steps += static_cast<double>(j.points.size() + 1);
  const double cells = static_cast<double>(jobs.size()) * static_cast<double>(cap + 1);
  if (cells > kMaxCells || steps * static_cast<double>(cap + 1) > kMaxSteps) {
    return Status::InvalidArgument(fmt::format(
        "{} jobs over {} units of {} GPUs is too large to plan exactly", jobs.size(), cap, unit));
  }
  // best[c]: the greatest value of the jobs so far within c units; choice[j][c]: the point job j
  // takes there (-1: paused).
  std::vector<double> best(cap + 1, 0.0);
  std::vector<std::vector<int32_t>> choice(jobs.size(), std::vector<int32_t>(cap + 1, -1));
  for (size_t j = 0; j < jobs.size(); ++j) {
    std::vector<double> next = best;  // paused: adds nothing
    for (size_t k = 0; k < jobs[j].points.size(); ++k) {
      const int64_t g = jobs[j].points[k].gpus;
      const size_t units = static_cast<size_t>(g / unit);
      const double v = PlanValue(jobs[j], g, horizon_s);
      for (size_t c = units; c <= cap; ++c) {
        if (best[c - units] + v > next[c]) {
          next[c] = best[c - units] + v;
          choice[j][c] = static_cast<int32_t>(k);
        }
      }
    }
    best = std::move(next);
  }
  std::vector<JobPlan> out(jobs.size());
  size_t c = cap;
  for (size_t j = jobs.size(); j-- > 0;) {
    const int32_t k = choice[j][c];
    const int64_t g = k < 0 ? 0 : jobs[j].points[static_cast<size_t>(k)].gpus;
    out[j] = PlanOf(jobs[j], g, horizon_s);
    c -= static_cast<size_t>(g / unit);
  }
  return Total(std::move(out));
}

ReconfigurePlan RestartAtOldSize(std::span<const JobCurve> jobs, int64_t healthy_gpus,
                                 double horizon_s) {
  // Jobs the failure spared keep running first; then the others restart in order where they fit.
  std::vector<int64_t> gpus(jobs.size(), 0);
  int64_t free = healthy_gpus;
  for (bool restarting : {false, true}) {
    for (size_t i = 0; i < jobs.size(); ++i) {
      const JobCurve& j = jobs[i];
      if (j.hit != restarting || j.current_gpus == 0 || j.current_gpus > free) continue;
      gpus[i] = j.current_gpus;
      free -= j.current_gpus;
    }
  }
  std::vector<JobPlan> out;
  for (size_t i = 0; i < jobs.size(); ++i) out.push_back(PlanOf(jobs[i], gpus[i], horizon_s));
  return Total(std::move(out));
}

Result<ReconfigureAnswer> AnswerReconfigure(const ReconfigureQuestion& q) {
  ReconfigureAnswer a;
  VIGIL_ASSIGN_OR_RETURN(a.jobs, ReadJobs(q.jobs_path));
  // The jobs the failure spared still run on healthy GPUs: more of them than there are healthy
  // GPUs is a jobs file and a --gpus that disagree.
  int64_t spared = 0;
  for (const JobCurve& j : a.jobs) spared += j.hit ? 0 : j.current_gpus;
  if (spared > q.healthy_gpus) {
    return Status::InvalidArgument(
        fmt::format("{}: the jobs not hit run on {} GPUs, more than the {} healthy ones of --gpus",
                    q.jobs_path, spared, q.healthy_gpus));
  }
  a.horizon_s = q.mttf_s;
  if (a.horizon_s <= 0) {
    if (q.gpus_per_node < 1 || q.healthy_gpus < 1) {
      return Status::InvalidArgument("--gpus and --gpus-per-node must be at least 1");
    }
    const double nodes = std::ceil(static_cast<double>(q.healthy_gpus) / q.gpus_per_node);
    VIGIL_ASSIGN_OR_RETURN(a.horizon_s,
                           reliability::JobMttfSeconds(nodes, q.failures_per_1000_node_days));
    a.horizon_from_mttf_model = true;
  }
  VIGIL_ASSIGN_OR_RETURN(a.plan, PlanReconfiguration(a.jobs, q.healthy_gpus, a.horizon_s));
  a.naive = RestartAtOldSize(a.jobs, q.healthy_gpus, a.horizon_s);
  return a;
}

}  // namespace vigil::plan
