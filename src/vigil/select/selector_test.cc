#include "vigil/select/selector.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "vigil/select/fleet_sim.h"

namespace vigil::select {
namespace {

// A small simulated fleet's history under the weekly full suite: 200 nodes, 120 days.
const History& SmallHistory() {
  static const History history = WeeklyHistory(200, 120, 7).value();
  return history;
}

TEST(RiskModelTest, CoxBeatsTheBaselineOnHeldOutHistory) {
  const History& h = SmallHistory();
  const double split = h.end_s - 40 * kSecondsPerDay;
  const Result<RiskModel> model = FitRiskModel(h, h.start_s, split);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  ASSERT_TRUE(model->has_cox);
  const HeldOutScore score = ScoreHeldOut(*model, h, split, h.end_s);
  EXPECT_GT(score.events, 20);
  EXPECT_GT(score.cox_concordance, score.baseline_concordance);
  // Alerts precede the simulator's incidents; the model learns that they raise the hazard: a
  // node with two alerts in the last three days, none validated yet, is at higher risk.
  ASSERT_EQ(model->covariates[5], "log_alerts_3d");
  ASSERT_EQ(model->covariates[8], "log_alerts_since_validation");
  Eigen::RowVectorXd quiet = model->cox.mean.transpose();
  quiet[5] = quiet[6] = quiet[8] = 0;
  Eigen::RowVectorXd alerted = quiet;
  alerted[5] = alerted[6] = alerted[8] = std::log1p(2.0);
  EXPECT_GT(IncidentProbability(*model, alerted, "H100", kSecondsPerDay),
            2 * IncidentProbability(*model, quiet, "H100", kSecondsPerDay));
}

TEST(RiskModelTest, FewIncidentsFallBackToTheBaselineAndNoneIsAnError) {
  History h;
  h.start_s = 0;
  h.end_s = 100 * kSecondsPerDay;
  h.nodes = {{"n1", "H100", 0}, {"n2", "A100", 0}};
  EXPECT_EQ(FitRiskModel(h, 0, h.end_s).status().code(), StatusCode::kInvalidArgument);
  h.incidents.push_back({1, 50 * kSecondsPerDay, "GPU", 10});
  const Result<RiskModel> model = FitRiskModel(h, 0, h.end_s);
  ASSERT_TRUE(model.ok());
  EXPECT_FALSE(model->has_cox);
  EXPECT_NE(model->why_baseline.find("baseline"), std::string::npos);
  EXPECT_DOUBLE_EQ(model->baseline.RateOf("A100"), 1.0 / 100);
  // A class per node is a mistake in the history, not a model of 65 covariates.
  History many = h;
  for (int i = 0; i < 65; ++i)
    many.nodes.push_back({fmt::format("x{}", i), fmt::format("c{}", i), 0});
  EXPECT_EQ(FitRiskModel(many, 0, h.end_s).status().message(),
            "the history has 67 node classes, more than the 64 the risk model takes: a class is a "
            "hardware type (H100, A100), not a node");
  // An incident at the window's very end counts, as in the Cox model's (start, stop] rows.
  EXPECT_DOUBLE_EQ(BaselineRates(h, 0, 50 * kSecondsPerDay).RateOf("A100"), 1.0 / 50);
  EXPECT_DOUBLE_EQ(BaselineRates(h, 50 * kSecondsPerDay, h.end_s).fleet_per_node_day, 0);
  // A class without incidents takes the fleet's rate rather than zero.
  EXPECT_DOUBLE_EQ(model->baseline.RateOf("H100"), 1.0 / 200);
  const double p = IncidentProbability(*model, Eigen::RowVectorXd::Zero(9), "A100", kSecondsPerDay);
  EXPECT_NEAR(p, 1 - std::exp(-0.01), 1e-12);
}

TEST(SelectorTest, PlansWithinTheShareAndTheBudgetAndExplains) {
  SelectOptions options;
  options.max_share = 0.05;
  const Result<Selection> s = SelectFromHistory(SmallHistory(), options);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_TRUE(s->model.risk.has_cox);
  ASSERT_FALSE(s->plan.validations.empty());
  EXPECT_LE(s->plan.validations.size(), 10u);
  for (const PlannedValidation& v : s->plan.validations) {
    EXPECT_GT(v.subset.averted, v.subset.seconds / 3600);
    EXPECT_FALSE(v.why.empty());
  }
  options.budget_node_hours = 1;
  const Result<Selection> small = SelectFromHistory(SmallHistory(), options);
  ASSERT_TRUE(small.ok());
  double hours = 0;
  for (const PlannedValidation& v : small->plan.validations) hours += v.subset.seconds / 3600;
  EXPECT_LE(hours, 1);
  const Json json = SelectionToJson(*s, SmallHistory());
  EXPECT_EQ(json["model"]["kind"], "cox");
  EXPECT_EQ(json["validations"].size(), s->plan.validations.size());
}

// SmallHistory with node `node`'s validations and alerts of its last eight days replaced by one
// clean full-suite validation `ago_s` before the history's end.
History ValidatedAgo(int node, double ago_s) {
  History h = SmallHistory();
  const double recent = h.end_s - 8 * kSecondsPerDay;
  HistoryValidation clean;
  clean.node = -1;
  for (const HistoryValidation& v : h.validations) {
    if (v.node == node && v.time_s > recent) clean = v;
  }
  EXPECT_EQ(clean.node, node) << "the weekly history validated node " << node << " in 8 days";
  std::erase_if(h.validations,
                [&](const HistoryValidation& v) { return v.node == node && v.time_s > recent; });
  std::erase_if(h.alerts,
                [&](const HistoryAlert& a) { return a.node == node && a.time_s > recent; });
  clean.time_s = h.end_s - ago_s;
  clean.findings.clear();
  const auto at = std::find_if(h.validations.begin(), h.validations.end(),
                               [&](const HistoryValidation& v) { return v.time_s > clean.time_s; });
  h.validations.insert(at, clean);
  return h;
}

TEST(SelectorTest, ANodeJustValidatedHasLittleLeftToAvert) {
  // Every node that pays at all is planned: the plan shows what each would avert.
  SelectOptions options;
  options.max_share = 1;
  options.cost_weight = 1e-6;
  const auto averted = [&](double ago_s) {
    const History h = ValidatedAgo(5, ago_s);
    const Result<Selection> s = SelectFromHistory(h, options);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    for (const PlannedValidation& v : s->plan.validations) {
      if (v.node == 5) return v.subset.averted;
    }
    return 0.0;
  };
  const double week = averted(7 * kSecondsPerDay), hour = averted(3600);
  EXPECT_GT(week, 0);
  // Its risk an hour after a clean validation is not much below a week after (the hazard grows
  // with the time since the last validation, but slowly); what a validation can still remove is:
  // the risk as it stands less the same node's just validated.
  EXPECT_LT(hour, 0.1 * week);
}

TEST(SelectorTest, WhyExplainsTheRiskAsItStandsNotAsAValidationWouldLeaveIt) {
  History h = ValidatedAgo(5, 2 * kSecondsPerDay);
  for (double ago_h : {20.0, 2.0}) {
    HistoryAlert a{5, h.end_s - ago_h * 3600, "GPU"};
    h.alerts.insert(std::find_if(h.alerts.begin(), h.alerts.end(),
                                 [&](const HistoryAlert& b) { return b.time_s > a.time_s; }),
                    a);
  }
  SelectOptions options;
  options.max_share = 1;
  const Result<Selection> s = SelectFromHistory(h, options);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const auto it = std::find_if(s->plan.validations.begin(), s->plan.validations.end(),
                               [](const PlannedValidation& v) { return v.node == 5; });
  ASSERT_NE(it, s->plan.validations.end());
  EXPECT_NE(it->why.find("log_alerts_since_validation"), std::string::npos) << it->why;
}

TEST(SelectorTest, WithTheBaselineRateTheWholeRiskCounts) {
  // Too few incidents for the Cox model: the baseline rate of a class has no covariate that a
  // validation changes, and the plan is made on the rate alone rather than on nothing.
  History h = SmallHistory();
  h.incidents.resize(10);
  SelectOptions options;
  options.cost_weight = 0.001;
  const Result<Selection> s = SelectFromHistory(h, options);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_FALSE(s->model.risk.has_cox);
  ASSERT_FALSE(s->plan.validations.empty());
  // Nodes of equal worth go longest unvalidated first, not in the history's order.
  for (size_t i = 1; i < s->plan.validations.size(); ++i) {
    const PlannedValidation &a = s->plan.validations[i - 1], &b = s->plan.validations[i];
    if (a.subset.net == b.subset.net) {
      EXPECT_GE(a.days_since_validation, b.days_since_validation);
    }
  }
  EXPECT_DOUBLE_EQ(s->plan.validations[0].removable, s->plan.validations[0].probability);
}

TEST(SelectorTest, WhenTheShareBindsTheMostValuableValidationsAreTaken) {
  SelectOptions all;
  all.max_share = 1;
  all.cost_weight = 0.1;  // below face value, as when the budget is left over
  const Result<Selection> every = SelectFromHistory(SmallHistory(), all);
  ASSERT_TRUE(every.ok()) << every.status().ToString();
  SelectOptions few = all;
  few.max_share = 0.05;  // 10 of the 200 nodes
  const Result<Selection> s = SelectFromHistory(SmallHistory(), few);
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->plan.validations.size(), 10u);
  ASSERT_GT(every->plan.validations.size(), 10u);
  std::vector<double> nets;
  for (const PlannedValidation& v : every->plan.validations) nets.push_back(v.subset.net);
  std::sort(nets.begin(), nets.end(), std::greater<>());
  // Not the cheapest per hour: a two-minute benchmark that averts a little per minute would
  // otherwise take a place a fuller validation of a riskier node needs.
  for (const PlannedValidation& v : s->plan.validations) EXPECT_GE(v.subset.net, nets[9]);
}

TEST(RiskModelTest, AfterACleanValidationTheValidationsCovariatesReset) {
  CovariateTracker tracker(SmallHistory());
  tracker.AdvanceTo(SmallHistory().end_s);
  const std::vector<std::string>& names = tracker.names();
  ASSERT_EQ(names[kLogDaysSinceValidation], "log_days_since_validation");
  ASSERT_EQ(names[kLastMargin], "last_margin");
  ASSERT_EQ(names[kLogLastFindings], "log_last_findings");
  ASSERT_EQ(names[kLogAlertsSinceValidation], "log_alerts_since_validation");
  ASSERT_EQ(names[kFixedCovariateCount], "class=A100");
  Eigen::RowVectorXd x(static_cast<Eigen::Index>(names.size()));
  x.setConstant(2);
  x[kLastMargin] = -0.5;  // a margin outside its criteria
  tracker.AfterCleanValidation(x);
  EXPECT_EQ(x[kLogDaysSinceValidation], 0);
  EXPECT_EQ(x[kLogLastFindings], 0);
  EXPECT_EQ(x[kLogAlertsSinceValidation], 0);
  // The simulator's healthy kinds read 0.15 +- 0.04; the smallest of a validation's four is less.
  EXPECT_GT(x[kLastMargin], 0.05);
  EXPECT_LT(x[kLastMargin], 0.15);
  // What a validation does not change stays: the node's findings, incidents, alerts, age, class.
  for (Eigen::Index j : {kLogFindings, kLogIncidents90d, kLogAlerts3d, kLogAlerts30d, kAgeYears,
                         kFixedCovariateCount}) {
    EXPECT_EQ(x[j], 2) << names[static_cast<size_t>(j)];
  }
  x[kLastMargin] = 0.9;  // better than typical: a validation does not make it worse
  tracker.AfterCleanValidation(x);
  EXPECT_EQ(x[kLastMargin], 0.9);
}

TEST(SelectorTest, AFleetTooSmallForOneNodesShareStillValidatesOne) {
  SelectOptions options;
  options.max_share = 0.001;  // 0.2 of the 200 nodes
  const Result<Selection> s = SelectFromHistory(SmallHistory(), options);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->plan.validations.size(), 1u);
}

TEST(SelectorTest, NodeStatesDecideWhoIsPlannedAndFirst) {
  SelectOptions options;
  options.max_share = 0.05;  // 10 of the 200 nodes
  options.cost_weight = 0.001;
  std::vector<NodeState> states(SmallHistory().nodes.size(), NodeState::kBusy);
  states[7] = NodeState::kIdle;
  states[0] = NodeState::kDown;
  for (int n = 1; n <= 3; ++n) states[static_cast<size_t>(n)] = NodeState::kValidating;
  const Result<Selection> s = SelectFromHistory(SmallHistory(), options, states);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->plan.validations.size(), 7u);  // three of the ten places are taken
  EXPECT_EQ(s->plan.validations[0].node, 7);
  EXPECT_TRUE(s->plan.validations[0].idle);
  for (const PlannedValidation& v : s->plan.validations) EXPECT_GT(v.node, 3);

  states.pop_back();
  EXPECT_EQ(SelectFromHistory(SmallHistory(), options, states).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(SelectorTest, RefusesBadOptions) {
  SelectOptions options;
  options.max_share = 0;
  EXPECT_EQ(Validate(options).message(), "--max-share must be in (0, 1], got 0");
  options = {};
  options.horizon_s = -1;
  EXPECT_EQ(Validate(options).code(), StatusCode::kInvalidArgument);
}

TEST(FleetSimTest, ValidationLengthensTheTimeBetweenIncidents) {
  FleetSimParams params;
  params.nodes = 100;
  params.days = 60;
  PolicyOptions none, before;
  none.kind = PolicyKind::kNone;
  before.kind = PolicyKind::kBeforeJob;
  const Result<SimOutcome> a = SimulateFleet(params, none);
  const Result<SimOutcome> b = SimulateFleet(params, before);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->validation_node_hours, 0);
  EXPECT_GT(b->validation_node_hours, 0);
  EXPECT_GT(b->findings, 0);
  EXPECT_GT(b->mtbi_h, 1.5 * a->mtbi_h);
  // What it emits is a history the reader accepts, unchanged through a round trip.
  const std::string text = HistoryToJsonl(b->history);
  const Result<History> back = ParseHistory(text, "sim");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->incidents.size(), b->history.incidents.size());
}

TEST(FleetSimTest, AWeeklyHistoryHasItsNodesAndTheirWeeklyValidations) {
  const History h = WeeklyHistory(20, 30, 1).value();
  EXPECT_EQ(h.nodes.size(), 20u);
  // Every node is validated about once a week, the 90-day warm-up included.
  EXPECT_GT(h.validations.size(), 20u * 15);
  EXPECT_FALSE(WeeklyHistory(0, 30, 1).ok());
}

TEST(FleetSimTest, RefusesBadParameters) {
  FleetSimParams params;
  params.nodes = 0;
  EXPECT_EQ(SimulateFleet(params, {}).status().code(), StatusCode::kInvalidArgument);
  params = {};
  params.suite.push_back({"x", 1, {{"no-such-kind", 1}}});
  EXPECT_EQ(SimulateFleet(params, {}).status().code(), StatusCode::kInvalidArgument);
  params = {};
  params.kinds.clear();
  EXPECT_EQ(SimulateFleet(params, {}).status().message(),
            "simulator: kinds and the suite must not be empty");
  params = {};
  for (SimKind& k : params.kinds) k.share = 0;
  EXPECT_EQ(SimulateFleet(params, {}).status().message(),
            "simulator: the kinds' shares must sum above 0");
}

}  // namespace
}  // namespace vigil::select
