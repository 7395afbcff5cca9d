#include "vigil/select/selector.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace vigil::select {
namespace {

constexpr int kWhyTerms = 2;

// The node's probability of each kind being what fails: the fleet's incident shares, each raised
// by the node's recent alerts of that kind.
Eigen::VectorXd KindWeights(const SuiteStats& suite, const CovariateTracker& tracker, int node,
                            double at_s, double window_s) {
  Eigen::VectorXd w = Eigen::Map<const Eigen::VectorXd>(
      suite.incident_share.data(), static_cast<Eigen::Index>(suite.incident_share.size()));
  w.conservativeResize(static_cast<Eigen::Index>(suite.kinds.size()));
  for (Eigen::Index k = static_cast<Eigen::Index>(suite.incident_share.size()); k < w.size(); ++k) {
    w[k] = 0;
  }
  for (const auto& [kind, count] : tracker.RecentAlertKinds(node, at_s, window_s)) {
    auto it = std::find(suite.kinds.begin(), suite.kinds.end(), kind);
    if (it != suite.kinds.end()) w[it - suite.kinds.begin()] *= 1 + count;
  }
  const double sum = w.sum();
  return sum > 0 ? Eigen::VectorXd(w / sum) : w;
}

// The covariates that raise the node's hazard most: "log_alerts_3d=1.39 (x2.3)".
std::string Why(const RiskModel& risk, const Eigen::RowVectorXd& x) {
  if (!risk.has_cox) return "baseline rate of its class";
  std::vector<std::pair<double, Eigen::Index>> terms;
  for (Eigen::Index j = 0; j < x.size(); ++j) {
    terms.emplace_back(risk.cox.beta[j] * (x[j] - risk.cox.mean[j]), j);
  }
  std::sort(terms.begin(), terms.end(), std::greater<>());
  std::string why;
  for (int i = 0; i < kWhyTerms && i < static_cast<int>(terms.size()) && terms[i].first > 0; ++i) {
    const auto j = terms[static_cast<size_t>(i)].second;
    why += fmt::format("{}{}={:.3g} (x{:.2g})", why.empty() ? "" : ", ",
                       risk.covariates[static_cast<size_t>(j)], x[j],
                       std::exp(terms[static_cast<size_t>(i)].first));
  }
  return why.empty() ? "risk below the fleet's average" : why;
}

}  // namespace

Status Validate(const SelectOptions& o) {
  const auto bad = [](std::string_view flag, double value, std::string_view want) {
    return Status::InvalidArgument(fmt::format("{} must be {}, got {}", flag, want, value));
  };
  if (!std::isfinite(o.horizon_s) || o.horizon_s <= 0) return bad("--horizon", o.horizon_s, "> 0");
  if (!std::isfinite(o.budget_node_hours) || o.budget_node_hours < 0) {
    return bad("--budget", o.budget_node_hours, ">= 0");
  }
  if (!std::isfinite(o.max_benchmark_s) || o.max_benchmark_s < 0) {
    return bad("--max-time", o.max_benchmark_s, ">= 0");
  }
  if (!(o.max_share > 0 && o.max_share <= 1)) return bad("--max-share", o.max_share, "in (0, 1]");
  if (!std::isfinite(o.cost_weight) || o.cost_weight <= 0) {
    return bad("--cost-weight", o.cost_weight, "> 0");
  }
  return Status::Ok();
}

Result<SelectorModel> FitSelector(const History& history, const RiskModelOptions& options) {
  SelectorModel model;
  VIGIL_ASSIGN_OR_RETURN(model.suite, LearnSuite(history));
  VIGIL_ASSIGN_OR_RETURN(model.risk,
                         FitRiskModel(history, history.start_s, history.end_s, options));
  return model;
}

Plan MakePlan(const SelectorModel& model, const CovariateTracker& tracker, const History& history,
              double at_s, const std::vector<NodeState>& states, const SelectOptions& options) {
  Plan plan;
  plan.at_s = at_s;
  plan.model = model.risk.has_cox ? "cox" : "baseline: " + model.risk.why_baseline;
  const double budget_s = options.max_benchmark_s > 0 ? options.max_benchmark_s : HUGE_VAL;
  const SubsetChooser chooser(model.suite, budget_s);
  const auto state = [&](size_t n) { return states.empty() ? NodeState::kUnknown : states[n]; };
  int validating = 0;
  Eigen::RowVectorXd x(static_cast<Eigen::Index>(tracker.names().size())), after;
  for (size_t n = 0; n < history.nodes.size(); ++n) {
    if (state(n) == NodeState::kValidating) ++validating;
    if (state(n) == NodeState::kValidating || state(n) == NodeState::kDown) continue;
    if (history.nodes[n].joined_s > at_s) continue;
    if (options.idle_only && state(n) != NodeState::kIdle) continue;
    tracker.Covariates(static_cast<int>(n), at_s, x);
    PlannedValidation p;
    p.node = static_cast<int>(n);
    p.probability =
        IncidentProbability(model.risk, x, history.nodes[n].node_class, options.horizon_s);
    p.expected_penalty = p.probability * model.suite.mean_incident_cost;
    // What a validation can avert is the risk it would remove: the node's as it stands less the
    // same node's just validated without a finding. A node validated an hour ago has little left
    // to remove, however high its risk. The baseline rate of a class has no covariate a
    // validation changes: with it, the whole risk counts, as the only figure there is.
    p.removable = p.probability;
    if (model.risk.has_cox) {
      after = x;
      tracker.AfterCleanValidation(after);
      p.removable = std::max(
          0.0, p.removable - IncidentProbability(model.risk, after, history.nodes[n].node_class,
                                                 options.horizon_s));
    }
    p.days_since_validation = std::expm1(x[kLogDaysSinceValidation]);
    p.subset =
        chooser.Choose(p.removable * model.suite.mean_incident_cost,
                       KindWeights(model.suite, tracker, p.node, at_s, options.alert_window_s),
                       options.cost_weight);
    if (p.subset.net <= 0) continue;
    p.idle = state(n) == NodeState::kIdle;
    p.why = Why(model.risk, x);
    plan.validations.push_back(std::move(p));
  }
  plan.candidates = static_cast<int>(plan.validations.size());
  std::stable_sort(plan.validations.begin(), plan.validations.end(),
                   [](const PlannedValidation& a, const PlannedValidation& b) {
                     if (a.idle != b.idle) return a.idle;
                     if (a.subset.net != b.subset.net) return a.subset.net > b.subset.net;
                     // Equal worth (the baseline rate's nodes of one class): the longest
                     // unvalidated first, so that planning every hour does not take the same nodes
                     // each time.
                     return a.days_since_validation > b.days_since_validation;
                   });
  // The share rounds down, but a fleet too small for one node's share may still validate one node
  // at a time (five nodes at 5% would otherwise never be validated).
  const int share = std::max(
      1,
      static_cast<int>(std::floor(options.max_share * static_cast<double>(history.nodes.size()))));
  const int slots = std::max(0, share - validating);
  double spent = 0;
  std::vector<PlannedValidation> kept;
  for (PlannedValidation& p : plan.validations) {
    if (static_cast<int>(kept.size()) >= slots) break;
    const double hours = p.subset.seconds / 3600;
    if (options.budget_node_hours > 0 && spent + hours > options.budget_node_hours) continue;
    spent += hours;
    kept.push_back(std::move(p));
  }
  plan.validations = std::move(kept);
  return plan;
}

Result<Selection> SelectFromHistory(const History& history, const SelectOptions& options,
                                    const std::vector<NodeState>& states) {
  VIGIL_RETURN_IF_ERROR(Validate(options));
  if (!states.empty() && states.size() != history.nodes.size()) {
    return Status::InvalidArgument(
        fmt::format("select: {} node states for {} nodes", states.size(), history.nodes.size()));
  }
  Selection out;
  VIGIL_ASSIGN_OR_RETURN(out.model, FitSelector(history));
  CovariateTracker tracker(history);
  tracker.AdvanceTo(history.end_s);
  out.plan = MakePlan(out.model, tracker, history, history.end_s, states, options);
  return out;
}

std::vector<std::string> PlannedBenchmarks(const Selection& selection, const PlannedValidation& v) {
  std::vector<std::string> names;
  for (int b : v.subset.benchmarks) {
    names.push_back(selection.model.suite.benchmarks[static_cast<size_t>(b)]);
  }
  return names;
}

Json SelectionToJson(const Selection& selection, const History& history) {
  const SelectorModel& m = selection.model;
  Json model = {{"kind", m.risk.has_cox ? "cox" : "baseline"}};
  if (m.risk.has_cox) {
    Json coefficients = Json::object();
    for (size_t j = 0; j < m.risk.covariates.size(); ++j) {
      coefficients[m.risk.covariates[j]] = m.risk.cox.beta[static_cast<Eigen::Index>(j)];
    }
    model["coefficients"] = coefficients;
    model["baseline_rate_per_day"] = m.risk.cox.baseline_rate * kSecondsPerDay;
    model["converged"] = m.risk.cox.converged;
  } else {
    model["why"] = m.risk.why_baseline;
  }
  Json rates = Json::object();
  for (size_t c = 0; c < m.risk.baseline.classes.size(); ++c) {
    rates[m.risk.baseline.classes[c]] = m.risk.baseline.per_node_day[c];
  }
  model["incidents_per_node_day_by_class"] = rates;
  model["mean_incident_node_hours"] = m.suite.mean_incident_cost;
  Json suite = Json::array();
  for (size_t b = 0; b < m.suite.benchmarks.size(); ++b) {
    Json coverage = Json::object();
    for (size_t k = 0; k < m.suite.kinds.size(); ++k) {
      coverage[m.suite.kinds[k]] =
          m.suite.coverage(static_cast<Eigen::Index>(b), static_cast<Eigen::Index>(k));
    }
    suite.push_back({{"benchmark", m.suite.benchmarks[b]},
                     {"seconds", m.suite.seconds[b]},
                     {"coverage", coverage}});
  }
  Json plan = Json::array();
  for (const PlannedValidation& v : selection.plan.validations) {
    plan.push_back({{"node", history.nodes[static_cast<size_t>(v.node)].name},
                    {"benchmarks", PlannedBenchmarks(selection, v)},
                    {"probability", v.probability},
                    {"expected_penalty_node_hours", v.expected_penalty},
                    {"removable_probability", v.removable},
                    {"days_since_validation", v.days_since_validation},
                    {"averted_node_hours", v.subset.averted},
                    {"cost_node_hours", v.subset.seconds / 3600},
                    {"net_node_hours", v.subset.net},
                    {"why", v.why}});
  }
  return {{"at", selection.plan.at_s},
          {"model", model},
          {"suite", suite},
          {"candidates", selection.plan.candidates},
          {"validations", plan}};
}

}  // namespace vigil::select
