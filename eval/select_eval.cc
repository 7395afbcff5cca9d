// The Selector judged in the fleet simulator (issue 25, "How well"; docs/select.md): a year of a
// fleet under each policy (no validation, the full suite weekly, before every job, a random subset
// weekly, the Selector), over several seeds. Prints MTBI and validation node-hours per policy with
// their spread, the ratios the issue targets, the risk model's concordance on held-out history,
// and writes an SVG of MTBI against validation cost.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "vigil/core/file.h"
#include "vigil/core/json.h"
#include "vigil/core/stats.h"
#include "vigil/core/svg_plot.h"
#include "vigil/select/fleet_sim.h"
#include "vigil/select/risk.h"

namespace {

using vigil::select::PolicyKind;

struct PolicyRuns {
  PolicyKind kind;
  std::vector<double> mtbi_h, validation_node_hours, incidents, incident_node_hours;
};

double Mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? NAN : s / static_cast<double>(v.size());
}

double Sd(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const double m = Mean(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size() - 1));
}

// The risk model fitted on the first two thirds of the judged year of a weekly-validated fleet,
// scored on the last third.
void PrintConcordance(const vigil::select::History& h, double days, vigil::Json& out) {
  const double year0 = h.end_s - days * vigil::select::kSecondsPerDay;
  const double split = year0 + days * 2 / 3 * vigil::select::kSecondsPerDay;
  auto model = vigil::select::FitRiskModel(h, year0, split);
  if (!model.ok()) {
    fmt::print("risk model: {}\n", model.status().ToString());
    return;
  }
  const auto score = vigil::select::ScoreHeldOut(*model, h, split, h.end_s);
  fmt::print(
      "risk model on held-out history (weekly policy, first seed; fit on days 0-{:.0f}, scored "
      "on days {:.0f}-{:.0f}: {} node-days, {} with an incident): concordance Cox {:.3f}, "
      "baseline (rate by class) {:.3f}\n",
      days * 2 / 3, days * 2 / 3, days, score.rows, score.events, score.cox_concordance,
      score.baseline_concordance);
  fmt::print("Cox coefficients:");
  for (size_t j = 0; j < model->covariates.size() && model->has_cox; ++j) {
    fmt::print(" {}={:.3f}", model->covariates[j], model->cox.beta[static_cast<Eigen::Index>(j)]);
  }
  fmt::print("\n");
  out["concordance"] = {{"cox", score.cox_concordance},
                        {"baseline", score.baseline_concordance},
                        {"rows", score.rows},
                        {"events", score.events}};
}

// Where a policy's incidents struck and how its validations were spread, over the judged days:
// hardware incidents by days since the node's last validation (software ones no benchmark finds),
// validations per node and their mean length.
vigil::Json Spread(const vigil::select::History& h, double days) {
  const double year0 = h.end_s - days * vigil::select::kSecondsPerDay;
  const std::vector<double> edges = {1, 2, 3, 5, 7, 14};  // days
  std::vector<int> struck(edges.size() + 1, 0);
  std::vector<double> last(h.nodes.size(), -HUGE_VAL);
  size_t v = 0;
  int software = 0;
  for (const vigil::select::HistoryIncident& i : h.incidents) {
    for (; v < h.validations.size() && h.validations[v].time_s <= i.time_s; ++v) {
      last[static_cast<size_t>(h.validations[v].node)] = h.validations[v].time_s;
    }
    if (i.time_s < year0) continue;
    if (i.kind == "software") {
      ++software;
      continue;
    }
    const double since =
        (i.time_s - last[static_cast<size_t>(i.node)]) / vigil::select::kSecondsPerDay;
    ++struck[static_cast<size_t>(std::upper_bound(edges.begin(), edges.end(), since) -
                                 edges.begin())];
  }
  std::vector<double> per_node(h.nodes.size(), 0);
  double seconds = 0, count = 0;
  for (const vigil::select::HistoryValidation& val : h.validations) {
    if (val.time_s < year0) continue;
    ++per_node[static_cast<size_t>(val.node)];
    ++count;
    for (const vigil::select::BenchmarkRun& b : val.benchmarks) seconds += b.seconds;
  }
  vigil::Json by_days = vigil::Json::object();
  for (size_t b = 0; b < struck.size(); ++b) {
    const std::string from = b == 0 ? "0" : fmt::format("{:g}", edges[b - 1]);
    by_days[b < edges.size() ? fmt::format("{}-{:g}", from, edges[b]) : ">" + from] = struck[b];
  }
  return {{"hardware_incidents_by_days_since_validation", by_days},
          {"software_incidents", software},
          {"validations_per_node",
           {{"p10", vigil::stats::Quantile(per_node, 0.1)},
            {"p50", vigil::stats::Quantile(per_node, 0.5)},
            {"p90", vigil::stats::Quantile(per_node, 0.9)},
            {"max", vigil::stats::Quantile(per_node, 1)}}},
          {"mean_validation_minutes", count > 0 ? seconds / 60 / count : 0}};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("The Selector against four validation policies in the fleet simulator");
  int seeds = 3, first_seed = 1, nodes = 1000;
  double days = 365;
  std::string svg, json_path;
  app.add_option("--seeds", seeds, "Seeds per policy (1..seeds)")->check(CLI::Range(1, 100));
  app.add_option("--first-seed", first_seed, "The first seed (the Selector was tuned on seed 1)")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--nodes", nodes, "Fleet size")->check(CLI::Range(1, 100000));
  app.add_option("--days", days, "Judged days")->check(CLI::Range(7.0, 3650.0));
  app.add_option("--svg", svg, "Write the plot of MTBI against validation node-hours here");
  app.add_option("--json", json_path, "Write every run's figures here");
  vigil::select::PolicyOptions selector;
  double horizon_days = selector.select.horizon_s / vigil::select::kSecondsPerDay;
  app.add_option("--horizon-days", horizon_days, "Selector: the horizon of its expected penalty")
      ->capture_default_str();
  app.add_option("--decide-every", selector.decide_every_h, "Selector: hours between its plans")
      ->capture_default_str();
  app.add_option("--max-share", selector.select.max_share,
                 "Selector: at most this share of the fleet validating at once")
      ->capture_default_str();
  app.add_option("--budget", selector.budget_node_hours_per_week,
                 "Selector: validation node-hours per week (0: what the weekly full suite spent in "
                 "the same seed)")
      ->capture_default_str();
  std::string only;
  app.add_option("--only", only,
                 "Run only this policy (none, weekly, before-job, random-subset, selector)");
  CLI11_PARSE(app, argc, argv);
  selector.select.horizon_s = horizon_days * vigil::select::kSecondsPerDay;

  std::vector<PolicyRuns> runs;
  for (PolicyKind k : {PolicyKind::kNone, PolicyKind::kWeekly, PolicyKind::kBeforeJob,
                       PolicyKind::kRandomSubset, PolicyKind::kSelector}) {
    runs.push_back({k, {}, {}, {}, {}});
  }
  vigil::Json out = {
      {"nodes", nodes}, {"days", days}, {"seeds", seeds}, {"runs", vigil::Json::array()}};
  for (int seed = first_seed; seed < first_seed + seeds; ++seed) {
    for (PolicyRuns& r : runs) {
      vigil::select::FleetSimParams params;
      params.nodes = nodes;
      params.days = days;
      params.seed = static_cast<uint64_t>(seed);
      if (!only.empty() && only != vigil::select::PolicyName(r.kind)) continue;
      vigil::select::PolicyOptions policy = selector;
      policy.kind = r.kind;
      // Unless told, the Selector gets the node-hours the weekly full suite spent in this seed.
      if (r.kind == PolicyKind::kSelector && selector.budget_node_hours_per_week == 0 &&
          !runs[1].validation_node_hours.empty()) {
        policy.budget_node_hours_per_week = runs[1].validation_node_hours.back() / (days / 7);
      }
      const auto t0 = std::chrono::steady_clock::now();
      auto outcome = vigil::select::SimulateFleet(params, policy);
      if (!outcome.ok()) {
        fmt::print(stderr, "{}: {}\n", vigil::select::PolicyName(r.kind),
                   outcome.status().ToString());
        return 3;
      }
      const double secs =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      r.mtbi_h.push_back(outcome->mtbi_h);
      r.validation_node_hours.push_back(outcome->validation_node_hours);
      r.incidents.push_back(outcome->incidents);
      r.incident_node_hours.push_back(outcome->incident_node_hours);
      fmt::print(stderr,
                 "seed {} {}: MTBI {:.2f} h, {} incidents, {:.0f} validation node-h, {} "
                 "findings, {} validations ({:.1f} s)\n",
                 seed, vigil::select::PolicyName(r.kind), outcome->mtbi_h, outcome->incidents,
                 outcome->validation_node_hours, outcome->findings, outcome->validations, secs);
      const vigil::Json spread = Spread(outcome->history, days);
      fmt::print(stderr, "  {}\n", vigil::DumpJson(spread));
      out["runs"].push_back({{"policy", vigil::select::PolicyName(r.kind)},
                             {"seed", seed},
                             {"mtbi_h", outcome->mtbi_h},
                             {"incidents", outcome->incidents},
                             {"incident_node_hours", outcome->incident_node_hours},
                             {"validations", outcome->validations},
                             {"validation_node_hours", outcome->validation_node_hours},
                             {"findings", outcome->findings},
                             {"spread", spread}});
      if (seed == first_seed && r.kind == PolicyKind::kWeekly)
        PrintConcordance(outcome->history, days, out);
    }
  }
  fmt::print("\n{:<14} {:>16} {:>12} {:>20} {:>18}\n", "policy", "MTBI h (sd)", "incidents",
             "validation node-h", "incident node-h");
  std::vector<vigil::PlotSeries> series;
  for (const PolicyRuns& r : runs) {
    fmt::print("{:<14} {:>9.2f} ({:.2f}) {:>12.0f} {:>20.0f} {:>18.0f}\n",
               vigil::select::PolicyName(r.kind), Mean(r.mtbi_h), Sd(r.mtbi_h), Mean(r.incidents),
               Mean(r.validation_node_hours), Mean(r.incident_node_hours));
    vigil::PlotSeries s{std::string(vigil::select::PolicyName(r.kind)), {}};
    for (size_t i = 0; i < r.mtbi_h.size(); ++i) {
      s.points.emplace_back(r.validation_node_hours[i] + 1, r.mtbi_h[i]);
    }
    series.push_back(std::move(s));
  }
  const double none = Mean(runs[0].mtbi_h), weekly = Mean(runs[1].mtbi_h);
  const PolicyRuns& sel = runs[4];
  fmt::print(
      "\nSelector MTBI / none {:.2f} (target >= 5), / weekly {:.2f} (target >= 1.5); "
      "validation node-hours / weekly's {:.2f} (target <= 1)\n",
      Mean(sel.mtbi_h) / none, Mean(sel.mtbi_h) / weekly,
      Mean(sel.validation_node_hours) / Mean(runs[1].validation_node_hours));
  if (!svg.empty()) {
    vigil::PlotOptions plot;
    plot.title = "MTBI against validation cost, per policy";
    plot.subtitle = fmt::format("fleet simulator, {} nodes x {:.0f} days, seeds {}-{}", nodes, days,
                                first_seed, first_seed + seeds - 1);
    plot.x_label = "validation node-hours in the year + 1 (log2)";
    plot.y_label = "mean time between incidents (h)";
    plot.log_x = true;
    if (auto s = vigil::WriteFileAtomic(svg, vigil::LinePlotSvg(plot, series)); !s.ok()) {
      fmt::print(stderr, "{}\n", s.ToString());
      return 3;
    }
  }
  if (!json_path.empty()) {
    if (auto s = vigil::WriteFileAtomic(json_path, vigil::DumpJson(out, 2) + "\n"); !s.ok()) {
      fmt::print(stderr, "{}\n", s.ToString());
      return 3;
    }
  }
  return 0;
}
