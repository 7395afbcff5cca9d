#include "vigil/plan/reconfigure.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <set>

#include "vigil/core/clock.h"
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
constexpr int64_t kMaxBatch = 1 << 24;  // sequences per step
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

// A list of GPU counts, or {from, to, step} (from defaults to step: its multiples up to `to`).
Result<std::vector<int64_t>> ParseSizes(const YAML::Node& n, const std::string& at,
                                        const YamlFields& f) {
  const std::string expected =
      fmt::format("expected a list of 1 to {} GPU counts, or {{from, to, step}}", kMaxPoints);
  std::vector<int64_t> sizes;
  if (n.IsSequence()) {
    if (n.size() == 0 || n.size() > kMaxPoints) return f.Error(n, at, expected);
    for (size_t i = 0; i < n.size(); ++i) {
      const std::string where = fmt::format("{}[{}]", at, i);
      VIGIL_ASSIGN_OR_RETURN(const int64_t g, f.Whole(n[i], where, 1, kMaxGpus));
      if (std::ranges::find(sizes, g) != sizes.end()) {
        return f.Error(n[i], where, fmt::format("{} GPUs listed twice", g));
      }
      sizes.push_back(g);
    }
    std::ranges::sort(sizes);
    return sizes;
  }
  if (!n.IsMap()) return f.Error(n, at, expected);
  VIGIL_RETURN_IF_ERROR(f.Map(n, at, {"from", "to", "step"}));
  for (const char* key : {"to", "step"}) {
    if (!n[key]) return f.Error(n, YamlFields::Path(at, key), "missing");
  }
  VIGIL_ASSIGN_OR_RETURN(const int64_t step,
                         f.Whole(n["step"], YamlFields::Path(at, "step"), 1, kMaxGpus));
  VIGIL_ASSIGN_OR_RETURN(const int64_t to,
                         f.Whole(n["to"], YamlFields::Path(at, "to"), 1, kMaxGpus));
  int64_t from = step;
  if (n["from"]) {
    VIGIL_ASSIGN_OR_RETURN(from, f.Whole(n["from"], YamlFields::Path(at, "from"), 1, to));
  }
  if (from > to || (to - from) / step + 1 > static_cast<int64_t>(kMaxPoints)) {
    return f.Error(n, at,
                   fmt::format("from {} to {} by {} gives no count or more than {}", from, to, step,
                               kMaxPoints));
  }
  for (int64_t g = from; g <= to; g += step) sizes.push_back(g);
  return sizes;
}

// One text, or a list of them.
Result<std::vector<std::string>> ParseTexts(const YAML::Node& n, const std::string& at,
                                            const YamlFields& f) {
  if (!n.IsSequence()) {
    VIGIL_ASSIGN_OR_RETURN(std::string one, f.Text(n, at));
    return std::vector<std::string>{std::move(one)};
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < n.size() && i < kMaxPoints; ++i) {
    VIGIL_ASSIGN_OR_RETURN(std::string one, f.Text(n[i], fmt::format("{}[{}]", at, i)));
    out.push_back(std::move(one));
  }
  if (out.empty() || n.size() > kMaxPoints) {
    return f.Error(n, at, fmt::format("expected a file or a list of 1 to {} files", kMaxPoints));
  }
  return out;
}

Result<CurveModel> ParseCurveModel(const YAML::Node& n, const std::string& at, const YamlFields& f,
                                   std::string_view source) {
  VIGIL_RETURN_IF_ERROR(f.Map(
      n, at, {"file", "gpu", "hardware", "global_batch", "micro_batch", "precision", "sizes"}));
  for (const char* key : {"file", "global_batch", "sizes"}) {
    if (!n[key]) return f.Error(n, YamlFields::Path(at, key), "missing");
  }
  CurveModel m;
  m.where = fmt::format("{}:{}: {}", source, YamlLine(n), at);
  const auto path = [&](const char* key) { return YamlFields::Path(at, key); };
  VIGIL_ASSIGN_OR_RETURN(m.model_path, f.Text(n["file"], path("file")));
  if (n["gpu"]) {
    VIGIL_ASSIGN_OR_RETURN(m.gpu,
                           f.Choice(n["gpu"], path("gpu"), {"a100", "h100", "h200", "b200"}));
  }
  if (n["hardware"]) {
    VIGIL_ASSIGN_OR_RETURN(m.hardware, ParseTexts(n["hardware"], path("hardware"), f));
  }
  VIGIL_ASSIGN_OR_RETURN(m.global_batch,
                         f.Whole(n["global_batch"], path("global_batch"), 1, kMaxBatch));
  if (n["micro_batch"]) {
    VIGIL_ASSIGN_OR_RETURN(m.micro_batch,
                           f.Whole(n["micro_batch"], path("micro_batch"), 1, m.global_batch));
  }
  if (n["precision"]) {
    VIGIL_ASSIGN_OR_RETURN(m.precision,
                           f.Choice(n["precision"], path("precision"), {"bf16", "fp8"}));
  }
  VIGIL_ASSIGN_OR_RETURN(m.sizes, ParseSizes(n["sizes"], path("sizes"), f));
  return m;
}

// The job's curve: exactly one of its hand-written points and its model.
Status ParseJobCurve(const YAML::Node& n, const std::string& at, const YamlFields& f,
                     std::string_view source, JobCurve& job) {
  if (n["throughput"] && n["model"]) {
    return f.Error(n, at,
                   fmt::format("job '{}' has both throughput and model; give one", job.name));
  }
  if (n["model"]) {
    VIGIL_ASSIGN_OR_RETURN(job.model,
                           ParseCurveModel(n["model"], YamlFields::Path(at, "model"), f, source));
    return Status::Ok();
  }
  if (!n["throughput"]) {
    return f.Error(n, YamlFields::Path(at, "throughput"),
                   fmt::format("missing: job '{}' needs throughput points or a model", job.name));
  }
  VIGIL_ASSIGN_OR_RETURN(job.points,
                         ParseCurve(n["throughput"], YamlFields::Path(at, "throughput"), f));
  return Status::Ok();
}

Result<JobCurve> ParseJob(const YAML::Node& n, const std::string& at, const YamlFields& f,
                          std::string_view source) {
  VIGIL_RETURN_IF_ERROR(
      f.Map(n, at, {"name", "weight", "gpus", "hit", "transition", "throughput", "model"}));
  for (const char* key : {"name", "gpus", "transition"}) {
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
  VIGIL_RETURN_IF_ERROR(ParseJobCurve(n, at, f, source, job));
  if (job.current_gpus > 0 &&
      !(job.model ? std::ranges::count(job.model->sizes, job.current_gpus)
                  : std::ranges::count(job.points, job.current_gpus, &ThroughputPoint::gpus))) {
    return f.Error(n["gpus"], YamlFields::Path(at, "gpus"),
                   fmt::format("{} is not one of the job's {}", job.current_gpus,
                               job.model ? "model.sizes" : "throughput sizes"));
  }
  return job;
}

Result<std::vector<JobCurve>> Parse(const YAML::Node& doc, const YamlFields& f,
                                    std::string_view source) {
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
    VIGIL_ASSIGN_OR_RETURN(JobCurve job, ParseJob(list[i], at, f, source));
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
  return Parse(doc, YamlFields(source, "jobs file"), source);
}

Result<std::vector<JobCurve>> ReadJobs(const std::string& path) {
  VIGIL_ASSIGN_OR_RETURN(const std::string text, ReadFile(path));
  VIGIL_ASSIGN_OR_RETURN(std::vector<JobCurve> jobs, ParseJobs(text, path));
  // A jobs file and its models travel together: their paths are relative to it, not to the
  // directory vigil runs in.
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  const auto beside = [&](std::string& p) {
    if (std::filesystem::path(p).is_relative()) p = (dir / p).lexically_normal().string();
  };
  for (JobCurve& j : jobs) {
    if (!j.model) continue;
    beside(j.model->model_path);
    for (std::string& h : j.model->hardware) beside(h);
  }
  return jobs;
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
  const double start = SystemClock().MonotonicSeconds();
  VIGIL_RETURN_IF_ERROR(CurvesFromModels(a.jobs));
  a.curves_s = SystemClock().MonotonicSeconds() - start;
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
