#include "cli/plan_reconfigure.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "vigil/core/duration.h"
#include "vigil/core/json.h"
#include "vigil/plan/reconfigure.h"

namespace vigil::cli {
namespace {

// Weighted TFLOP over the horizon, printed in weighted EFLOP (1e6 TFLOP) to keep figures short.
constexpr double kTflopPerEflop = 1e6;

Json PlanJson(const plan::ReconfigurePlan& p) {
  Json jobs = Json::array();
  for (const plan::JobPlan& j : p.jobs) {
    jobs.push_back(Json{{"name", j.name},
                        {"gpus", j.gpus},
                        {"current_gpus", j.current_gpus},
                        {"restarts", j.restarts},
                        {"weighted_tflop", j.value}});
  }
  return Json{{"gpus_used", p.gpus_used}, {"weighted_tflop", p.value}, {"jobs", jobs}};
}

// The curves the step model gave: their points and the sizes where nothing fits.
Json CurvesJson(const plan::ReconfigureAnswer& a) {
  Json curves = Json::array();
  for (const plan::JobCurve& j : a.jobs) {
    if (!j.model) continue;
    Json points = Json::array();
    for (const plan::ThroughputPoint& p : j.points) {
      points.push_back(Json{{"gpus", p.gpus}, {"tflops_per_gpu", p.tflops_per_gpu}});
    }
    curves.push_back(Json{{"name", j.name},
                          {"model", j.model->model_path},
                          {"gpu", j.model->gpu},
                          {"throughput", points},
                          {"left_out", j.left_out}});
  }
  return curves;
}

void PrintCurves(const plan::ReconfigureAnswer& a) {
  bool any = false;
  for (const plan::JobCurve& j : a.jobs) {
    if (!j.model) continue;
    any = true;
    std::string points;
    for (const plan::ThroughputPoint& p : j.points) {
      points += fmt::format("{}{}: {}", points.empty() ? "" : ", ", p.gpus,
                            FormatFigure(p.tflops_per_gpu));
    }
    fmt::print("{}: curve from {} on {} (GPUs: TFLOP/s per GPU) {}\n", j.name, j.model->model_path,
               j.model->gpu, points);
    if (!j.left_out.empty()) {
      fmt::print("  left out, no layout fits: {} GPUs\n", fmt::join(j.left_out, ", "));
    }
  }
  if (any) fmt::print("Curves searched in {:.3f} s\n\n", a.curves_s);
}

double Gain(const plan::ReconfigureAnswer& a) {
  return a.naive.value > 0 ? a.plan.value / a.naive.value : 0;
}

void PrintAnswer(const PlanReconfigureOptions& o, const plan::ReconfigureAnswer& a) {
  PrintCurves(a);
  fmt::print("{} healthy GPUs; expected time to the next failure {} ({})\n\n", o.gpus,
             FormatDuration(a.horizon_s),
             a.horizon_from_mttf_model
                 ? fmt::format("MTTF of {} GPUs at {} failures per 1000 node-days", o.gpus, o.rate)
                 : std::string("given"));
  Table table({"JOB", "CURRENT", "PLAN", "RESTARTS", "NAIVE", "PLAN_WEIGHTED_EFLOP",
               "NAIVE_WEIGHTED_EFLOP"});
  for (size_t i = 0; i < a.jobs.size(); ++i) {
    const plan::JobPlan& p = a.plan.jobs[i];
    const plan::JobPlan& n = a.naive.jobs[i];
    table.Add({p.name, fmt::format("{}", p.current_gpus), fmt::format("{}", p.gpus),
               p.restarts ? "yes" : "no", fmt::format("{}", n.gpus),
               FormatFigure(p.value / kTflopPerEflop), FormatFigure(n.value / kTflopPerEflop)});
  }
  fmt::print("{}\nPlan: {} weighted EFLOP on {} GPUs; restart at old size: {} on {} GPUs",
             table.ToString(), FormatFigure(a.plan.value / kTflopPerEflop), a.plan.gpus_used,
             FormatFigure(a.naive.value / kTflopPerEflop), a.naive.gpus_used);
  if (a.naive.value > 0) fmt::print(" (plan / naive = {})", FormatFigure(Gain(a)));
  fmt::print("\n");
}

}  // namespace

CLI::App* SetupPlanReconfigure(CLI::App& plan, PlanReconfigureOptions& o) {
  CLI::App* c = plan.add_subcommand(
      "reconfigure",
      "GPUs per job after failures: exact DP over jobs x GPU counts, beside restarting each "
      "job at its old size");
  c->add_option("--jobs", o.jobs,
                "Jobs file (YAML or JSON): weights, sizes, throughput curves or model files")
      ->required()
      ->check(CLI::ExistingFile);
  c->add_option("--gpus", o.gpus, "Healthy GPUs after the failures")
      ->required()
      ->check(InBounds(kGpusBounds));
  c->add_option("--mttf", o.mttf,
                "Expected time to the next failure (e.g. 6h); default: MTTF of the healthy "
                "nodes at --rate");
  c->add_option("--gpus-per-node", o.gpus_per_node, "GPUs per node, for the MTTF model")
      ->check(InBounds(kGpusPerNodeBounds))
      ->capture_default_str();
  AddModelRateFlag(*c, o.rate);
  c->add_flag("--json", o.json, "Print JSON");
  return c;
}

CommandResult RunPlanReconfigure(const PlanReconfigureOptions& o) {
  plan::ReconfigureQuestion q;
  q.jobs_path = o.jobs;
  q.healthy_gpus = o.gpus;
  q.gpus_per_node = o.gpus_per_node;
  q.failures_per_1000_node_days = o.rate;
  if (!o.mttf.empty()) {
    VIGIL_ASSIGN_OR_RETURN(q.mttf_s, ParseDurationFlag("--mttf", o.mttf, kIntervalBounds));
  }
  VIGIL_ASSIGN_OR_RETURN(const plan::ReconfigureAnswer a, plan::AnswerReconfigure(q));
  if (o.json) {
    fmt::print("{}\n", DumpJson(Json{{"healthy_gpus", o.gpus},
                                     {"horizon_s", a.horizon_s},
                                     {"horizon_from_mttf_model", a.horizon_from_mttf_model},
                                     {"plan", PlanJson(a.plan)},
                                     {"naive", PlanJson(a.naive)},
                                     {"gain", Gain(a)},
                                     {"curves", CurvesJson(a)},
                                     {"curves_s", a.curves_s}},
                                2));
  } else {
    PrintAnswer(o, a);
  }
  return ExitCode::kHealthy;
}

}  // namespace vigil::cli
