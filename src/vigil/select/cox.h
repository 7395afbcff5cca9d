// Cox proportional-hazards regression with time-varying covariates, in the counting-process form
// of Andersen and Gill (1982): each row is one subject over (start, stop] with the covariates it
// had then and whether its event happened at stop. Fitted by Newton-Raphson on Breslow's partial
// likelihood for tied event times, with step halving; Harrell's concordance index to judge it.
//
// Pure functions of their arguments; thread-safe.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <vector>

#include "vigil/core/status.h"

namespace vigil::select {

// Row-major: the fit walks the rows one by one.
using CovariateMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

struct SurvivalData {
  CovariateMatrix x;      // one row per (subject, interval), one column per covariate
  Eigen::VectorXd start;  // the interval (start, stop]; start < stop
  Eigen::VectorXd stop;
  std::vector<uint8_t> event;  // 1: the subject's event happened at stop
};

struct CoxOptions {
  int max_iterations = 30;  // Newton steps
  double tolerance = 1e-9;  // stop when the log-likelihood gains less than this (relative)
  // An L2 penalty ridge * |beta|^2 / 2, which keeps the fit finite when a covariate separates
  // (a class without a single event); small enough not to move a well-determined coefficient.
  double ridge = 1e-3;
};

struct CoxFit {
  Eigen::VectorXd beta;       // coefficients of the centred covariates
  Eigen::VectorXd mean;       // the covariates' means the fit centred them on
  double log_likelihood = 0;  // Breslow's partial log-likelihood at beta (penalty excluded)
  int iterations = 0;
  bool converged = false;
  // The baseline hazard per unit of time, taken as constant: events / sum of exp(eta) x exposure.
  // Hazard of a row = baseline_rate x exp((x - mean) . beta).
  double baseline_rate = 0;
  int events = 0;
};

// InvalidArgument when the data's sizes disagree, an interval is empty or not finite, or there is
// no event; otherwise the fit (converged false when max_iterations ran out).
Result<CoxFit> FitCox(const SurvivalData& data, const CoxOptions& options = {});

// The linear predictor (x - mean) . beta of every row.
Eigen::VectorXd LinearPredictor(const CoxFit& fit, const CovariateMatrix& x);

// Harrell's C for counting-process data: over every event at time t and every other row at risk
// at t (start < t <= stop) without an event at t, the share where the event's score is higher
// (ties count one half). 0.5 is chance. NaN when no pair is comparable.
// REQUIRES: score.size() == data.x.rows().
double Concordance(const SurvivalData& data, const Eigen::VectorXd& score);

}  // namespace vigil::select
