#include "vigil/select/risk.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace vigil::select {
namespace {

constexpr double kLemonWindowS = 90 * kSecondsPerDay;
constexpr double kShortAlertWindowS = 3 * kSecondsPerDay;
constexpr double kLongAlertWindowS = 30 * kSecondsPerDay;
constexpr double kSecondsPerYear = 365 * kSecondsPerDay;
constexpr double kMarginClip = 1;

// In CovariateColumn's order.
const std::vector<std::string> kFixedCovariates = {
    "log_days_since_validation",  "last_margin",   "log_last_findings", "log_findings",
    "log_incidents_90d",          "log_alerts_3d", "log_alerts_30d",    "age_years",
    "log_alerts_since_validation"};

// Occurrences in (t - window, t] of a sorted list of times.
int CountWithin(const std::vector<double>& times, double t, double window) {
  const auto hi = std::upper_bound(times.begin(), times.end(), t);
  const auto lo = std::upper_bound(times.begin(), hi, t - window);
  return static_cast<int>(hi - lo);
}

double MinMargin(const HistoryValidation& v, double fallback) {
  if (v.margins.empty()) return fallback;
  double m = v.margins.front().second;
  for (const auto& [kind, value] : v.margins) m = std::min(m, value);
  return std::clamp(m, -kMarginClip, kMarginClip);
}

// The last_margin covariate of a healthy node: the median over the validations that found nothing
// of their smallest margin (the covariate's own definition, not the median of every kind's margin,
// which sits higher by the spread of a validation's kinds). 0 without such a validation.
double TypicalMargin(const History& h) {
  std::vector<double> margins;
  for (const HistoryValidation& v : h.validations) {
    if (v.findings.empty() && !v.margins.empty()) margins.push_back(MinMargin(v, 0));
  }
  if (margins.empty()) return 0;
  std::nth_element(margins.begin(), margins.begin() + margins.size() / 2, margins.end());
  return margins[margins.size() / 2];
}

}  // namespace

CovariateTracker::CovariateTracker(const History& history)
    : history_(history), names_(kFixedCovariates), typical_margin_(TypicalMargin(history)) {
  for (const HistoryNode& n : history.nodes) {
    if (n.node_class == history.nodes.front().node_class) continue;
    if (std::find(classes_.begin(), classes_.end(), n.node_class) != classes_.end()) continue;
    classes_.push_back(n.node_class);
    names_.push_back("class=" + n.node_class);
  }
  EnsureNodes();
}

void CovariateTracker::EnsureNodes() {
  if (nodes_.size() < history_.nodes.size()) nodes_.resize(history_.nodes.size());
}

void CovariateTracker::AdvanceTo(double t) {
  EnsureNodes();
  for (; next_validation_ < history_.validations.size() &&
         history_.validations[next_validation_].time_s <= t;
       ++next_validation_) {
    const HistoryValidation& v = history_.validations[next_validation_];
    NodeState& n = nodes_[static_cast<size_t>(v.node)];
    n.last_validation_s = v.time_s;
    n.last_margin = MinMargin(v, typical_margin_);
    n.last_findings = static_cast<int>(v.findings.size());
    n.findings += n.last_findings;
  }
  for (;
       next_incident_ < history_.incidents.size() && history_.incidents[next_incident_].time_s <= t;
       ++next_incident_) {
    const HistoryIncident& i = history_.incidents[next_incident_];
    nodes_[static_cast<size_t>(i.node)].incidents.push_back(i.time_s);
  }
  for (; next_alert_ < history_.alerts.size() && history_.alerts[next_alert_].time_s <= t;
       ++next_alert_) {
    const HistoryAlert& a = history_.alerts[next_alert_];
    nodes_[static_cast<size_t>(a.node)].alerts.push_back(a.time_s);
    nodes_[static_cast<size_t>(a.node)].alert_index.push_back(next_alert_);
  }
}

void CovariateTracker::Covariates(int node, double t, Eigen::Ref<Eigen::RowVectorXd> out) const {
  const NodeState& n = nodes_[static_cast<size_t>(node)];
  const HistoryNode& info = history_.nodes[static_cast<size_t>(node)];
  const bool validated = n.last_validation_s >= 0;
  const double since = t - (validated ? n.last_validation_s : info.joined_s);
  out[kLogDaysSinceValidation] = std::log1p(std::max(0.0, since) / kSecondsPerDay);
  out[kLastMargin] = validated ? n.last_margin : typical_margin_;
  out[kLogLastFindings] = std::log1p(n.last_findings);
  out[kLogFindings] = std::log1p(n.findings);
  out[kLogIncidents90d] = std::log1p(CountWithin(n.incidents, t, kLemonWindowS));
  out[kLogAlerts3d] = std::log1p(CountWithin(n.alerts, t, kShortAlertWindowS));
  out[kLogAlerts30d] = std::log1p(CountWithin(n.alerts, t, kLongAlertWindowS));
  out[kAgeYears] = std::max(0.0, t - info.joined_s) / kSecondsPerYear;
  // Alerts a validation has not yet looked into: within the short window, after the last one.
  const double unchecked =
      std::min(kShortAlertWindowS, validated ? t - n.last_validation_s : HUGE_VAL);
  out[kLogAlertsSinceValidation] = std::log1p(CountWithin(n.alerts, t, unchecked));
  for (size_t c = 0; c < classes_.size(); ++c) {
    out[kFixedCovariateCount + static_cast<Eigen::Index>(c)] =
        info.node_class == classes_[c] ? 1 : 0;
  }
}

std::vector<std::pair<std::string, int>> CovariateTracker::RecentAlertKinds(int node, double t,
                                                                            double window_s) const {
  std::vector<std::pair<std::string, int>> kinds;
  const NodeState& n = nodes_[static_cast<size_t>(node)];
  for (size_t i = n.alerts.size(); i-- > 0 && n.alerts[i] > t - window_s;) {
    const std::string& kind = history_.alerts[n.alert_index[i]].kind;
    auto it =
        std::find_if(kinds.begin(), kinds.end(), [&](const auto& k) { return k.first == kind; });
    if (it == kinds.end()) {
      kinds.emplace_back(kind, 1);
    } else {
      ++it->second;
    }
  }
  return kinds;
}

void CovariateTracker::AfterCleanValidation(Eigen::Ref<Eigen::RowVectorXd> x) const {
  x[kLogDaysSinceValidation] = 0;
  x[kLastMargin] = std::max(x[kLastMargin], typical_margin_);
  x[kLogLastFindings] = 0;
  x[kLogAlertsSinceValidation] = 0;
}

NodeDays SurvivalRows(const History& h, double from_s, double to_s) {
  to_s = std::min(to_s, h.end_s);
  std::vector<std::vector<double>> incidents(h.nodes.size());
  for (const HistoryIncident& i : h.incidents) {
    incidents[static_cast<size_t>(i.node)].push_back(i.time_s);
  }
  CovariateTracker tracker(h);
  const auto days = static_cast<int64_t>(std::ceil(std::max(0.0, to_s - from_s) / kSecondsPerDay));
  const auto p = static_cast<Eigen::Index>(tracker.names().size());
  NodeDays out;
  const auto capacity = static_cast<Eigen::Index>(days * static_cast<int64_t>(h.nodes.size()));
  out.data.x.resize(capacity, p);
  out.data.start.resize(capacity);
  out.data.stop.resize(capacity);
  Eigen::Index row = 0;
  for (int64_t d = 0; d < days; ++d) {
    const double start = from_s + static_cast<double>(d) * kSecondsPerDay;
    const double stop = std::min(start + kSecondsPerDay, to_s);
    tracker.AdvanceTo(start);
    for (size_t n = 0; n < h.nodes.size(); ++n) {
      const double begin = std::max(start, h.nodes[n].joined_s);
      if (begin >= stop) continue;
      tracker.Covariates(static_cast<int>(n), begin, out.data.x.row(row));
      out.data.start[row] = begin;
      out.data.stop[row] = stop;
      out.data.event.push_back(CountWithin(incidents[n], stop, stop - begin) > 0 ? 1 : 0);
      out.node.push_back(static_cast<int>(n));
      ++row;
    }
  }
  out.data.x.conservativeResize(row, p);
  out.data.start.conservativeResize(row);
  out.data.stop.conservativeResize(row);
  return out;
}

double ClassRates::RateOf(const std::string& node_class) const {
  for (size_t c = 0; c < classes.size(); ++c) {
    if (classes[c] == node_class && per_node_day[c] > 0) return per_node_day[c];
  }
  return fleet_per_node_day;
}

ClassRates BaselineRates(const History& h, double from_s, double to_s) {
  ClassRates rates;
  std::vector<double> node_days, events;
  const auto class_index = [&](const std::string& c) {
    auto it = std::find(rates.classes.begin(), rates.classes.end(), c);
    if (it != rates.classes.end()) return static_cast<size_t>(it - rates.classes.begin());
    rates.classes.push_back(c);
    node_days.push_back(0);
    events.push_back(0);
    return rates.classes.size() - 1;
  };
  to_s = std::min(to_s, h.end_s);
  for (const HistoryNode& n : h.nodes) {
    node_days[class_index(n.node_class)] +=
        std::max(0.0, to_s - std::max(from_s, n.joined_s)) / kSecondsPerDay;
  }
  for (const HistoryIncident& i : h.incidents) {
    // (from, to], as the Cox rows count an incident: one at the window's end is in it.
    if (i.time_s > from_s && i.time_s <= to_s) {
      events[class_index(h.nodes[static_cast<size_t>(i.node)].node_class)] += 1;
    }
  }
  double all_days = 0, all_events = 0;
  for (size_t c = 0; c < rates.classes.size(); ++c) {
    rates.per_node_day.push_back(node_days[c] > 0 ? events[c] / node_days[c] : 0);
    all_days += node_days[c];
    all_events += events[c];
  }
  rates.fleet_per_node_day = all_days > 0 ? all_events / all_days : 0;
  return rates;
}

Result<RiskModel> FitRiskModel(const History& h, double from_s, double to_s,
                               const RiskModelOptions& options) {
  RiskModel model;
  model.baseline = BaselineRates(h, from_s, to_s);
  // Each class is a covariate, and the fit's cost grows with their square.
  if (model.baseline.classes.size() > kMaxClasses) {
    return Status::InvalidArgument(fmt::format(
        "the history has {} node classes, more than the {} the risk model takes: a class is a "
        "hardware type (H100, A100), not a node",
        model.baseline.classes.size(), kMaxClasses));
  }
  if (model.baseline.fleet_per_node_day <= 0) {
    return Status::InvalidArgument(
        "the history has no incidents in the window it is fitted on: no incident rate can be "
        "learned from it");
  }
  const double node_days =
      std::ceil(std::max(0.0, std::min(to_s, h.end_s) - from_s) / kSecondsPerDay) *
      static_cast<double>(h.nodes.size());
  if (node_days > kMaxNodeDays) {
    return Status::InvalidArgument(fmt::format(
        "the history spans {:.3g} node-days, more than the {:.3g} the risk model is fitted on: "
        "select a shorter window",
        node_days, kMaxNodeDays));
  }
  const NodeDays rows = SurvivalRows(h, from_s, to_s);
  model.covariates = CovariateTracker(h).names();
  const auto events = std::count(rows.data.event.begin(), rows.data.event.end(), uint8_t{1});
  if (events < options.min_events) {
    model.why_baseline = fmt::format(
        "{} node-days with an incident, fewer than the {} the Cox "
        "model needs: the baseline rate per node-day by class is used",
        events, options.min_events);
    return model;
  }
  Result<CoxFit> cox = FitCox(rows.data, options.cox);
  if (!cox.ok()) {
    model.why_baseline = "the Cox model could not be fitted (" + cox.status().message() +
                         "): the baseline rate per node-day by class is used";
    return model;
  }
  model.cox = std::move(cox).value();
  model.has_cox = true;
  return model;
}

double IncidentProbability(const RiskModel& model, const Eigen::RowVectorXd& x,
                           const std::string& node_class, double horizon_s) {
  double expected = 0;
  if (model.has_cox) {
    const double eta = (x - model.cox.mean.transpose()).dot(model.cox.beta.transpose());
    expected = model.cox.baseline_rate * horizon_s * std::exp(eta);
  } else {
    expected = model.baseline.RateOf(node_class) * horizon_s / kSecondsPerDay;
  }
  return -std::expm1(-expected);
}

HeldOutScore ScoreHeldOut(const RiskModel& model, const History& h, double from_s, double to_s) {
  const NodeDays rows = SurvivalRows(h, from_s, to_s);
  HeldOutScore score;
  score.rows = static_cast<int>(rows.data.x.rows());
  score.events =
      static_cast<int>(std::count(rows.data.event.begin(), rows.data.event.end(), uint8_t{1}));
  score.cox_concordance = model.has_cox
                              ? Concordance(rows.data, LinearPredictor(model.cox, rows.data.x))
                              : std::nan("");
  Eigen::VectorXd base(rows.data.x.rows());
  for (Eigen::Index r = 0; r < base.size(); ++r) {
    base[r] = model.baseline.RateOf(
        h.nodes[static_cast<size_t>(rows.node[static_cast<size_t>(r)])].node_class);
  }
  score.baseline_concordance = Concordance(rows.data, base);
  return score;
}

}  // namespace vigil::select
