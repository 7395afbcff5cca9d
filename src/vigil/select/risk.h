// Incident risk per node, learned from the fleet's history: the covariates of a node at a time,
// the survival rows they make (one per node and day), a Cox model fitted on them beside the
// baseline of a constant rate per node-day by hardware class, and the probability that a node has
// an incident in the next T. docs/select.md lists the covariates and why each is there.
#pragma once

#include <Eigen/Dense>
#include <string>
#include <vector>

#include "vigil/select/cox.h"
#include "vigil/select/history.h"

namespace vigil::select {

inline constexpr double kSecondsPerDay = 86400;

// The columns of the fixed covariates (docs/select.md), in CovariateTracker::names()' order; one
// indicator column per hardware class but the first follows them.
enum CovariateColumn : Eigen::Index {
  kLogDaysSinceValidation,
  kLastMargin,
  kLogLastFindings,
  kLogFindings,
  kLogIncidents90d,
  kLogAlerts3d,
  kLogAlerts30d,
  kAgeYears,
  kLogAlertsSinceValidation,
  kFixedCovariateCount
};

// A node's state as its history up to a time tells it, updated record by record in time order.
// Not thread-safe.
class CovariateTracker {
 public:
  // Keeps a reference to `history`, which must outlive this (it may grow: records appended in
  // time order after the last one consumed are seen by later calls).
  explicit CovariateTracker(const History& history);

  // Consumes every record with time <= t. REQUIRES: t does not decrease between calls.
  void AdvanceTo(double t);

  // The covariates (CovariateNames' order) of `node` at the time last advanced to.
  void Covariates(int node, double t, Eigen::Ref<Eigen::RowVectorXd> out) const;

  // `x`, a node's covariates, as they would read just after a validation that found nothing:
  // no time since it, no alert it has not looked into, no findings of it, and a margin no worse
  // than the history's typical one after a validation that found nothing (a defect it finds is
  // repaired; one it misses stays unknown).
  void AfterCleanValidation(Eigen::Ref<Eigen::RowVectorXd> x) const;

  const std::vector<std::string>& names() const { return names_; }
  // Alerts of each kind on `node` within `window_s` before t.
  std::vector<std::pair<std::string, int>> RecentAlertKinds(int node, double t,
                                                            double window_s) const;

 private:
  struct NodeState {
    double last_validation_s = -1;  // < 0: never validated
    double last_margin = 0;
    int last_findings = 0;
    int findings = 0;
    std::vector<double> incidents;    // times
    std::vector<double> alerts;       // times
    std::vector<size_t> alert_index;  // their records in history.alerts
  };

  void EnsureNodes();

  const History& history_;
  std::vector<std::string> classes_;  // the classes with a column: all but the first seen
  std::vector<std::string> names_;
  // A healthy node's last_margin: for nodes never validated, and as a clean validation leaves it.
  double typical_margin_ = 0;
  std::vector<NodeState> nodes_;
  size_t next_validation_ = 0, next_incident_ = 0, next_alert_ = 0;
};

// One row per node and day of [from_s, to_s) (days counted from from_s; a node from the day it
// joined), with the covariates at the day's start and an event when the node had an incident in
// the day. Rows of a node after to_s or the history's end are not made.
struct NodeDays {
  SurvivalData data;
  std::vector<int> node;  // the node of each row
};
NodeDays SurvivalRows(const History& history, double from_s, double to_s);

// Incidents per node-day for each class in [from_s, to_s): the baseline.
struct ClassRates {
  std::vector<std::string> classes;
  std::vector<double> per_node_day;
  double fleet_per_node_day = 0;  // all classes together: for a class without node-days
  double RateOf(const std::string& node_class) const;
};
ClassRates BaselineRates(const History& history, double from_s, double to_s);

// The most node classes FitRiskModel takes (each is a covariate).
inline constexpr size_t kMaxClasses = 64;

struct RiskModelOptions {
  CoxOptions cox;
  int min_events = 20;  // fewer incidents than this: the Cox model is not fitted (baseline only)
};

// The risk model of a fleet: Cox where there are enough incidents to fit it, the baseline always.
struct RiskModel {
  std::vector<std::string> covariates;
  bool has_cox = false;      // false: predictions are the baseline's
  std::string why_baseline;  // when !has_cox: why
  CoxFit cox;
  ClassRates baseline;
};

// The most node-days a fit takes (20,000 nodes x 5 years): each is a row of covariates in memory.
inline constexpr double kMaxNodeDays = 20000.0 * 365 * 5;

// Fits on the history's [from_s, to_s). InvalidArgument "no incidents ..." when the window has
// none: no rate can be learned from it; InvalidArgument when it spans more than kMaxNodeDays.
Result<RiskModel> FitRiskModel(const History& history, double from_s, double to_s,
                               const RiskModelOptions& options = {});

// P(incident within horizon_s) of a node whose covariates are `x` (Cox) and whose class is
// `node_class` (baseline when the model has no Cox part).
double IncidentProbability(const RiskModel& model, const Eigen::RowVectorXd& x,
                           const std::string& node_class, double horizon_s);

// Concordance of the Cox model and of the baseline on the history's [from_s, to_s) (a later,
// held-out window).
struct HeldOutScore {
  double cox_concordance = 0;       // NaN without a Cox part
  double baseline_concordance = 0;  // the class rate as the score
  int rows = 0, events = 0;
};
HeldOutScore ScoreHeldOut(const RiskModel& model, const History& history, double from_s,
                          double to_s);

}  // namespace vigil::select
