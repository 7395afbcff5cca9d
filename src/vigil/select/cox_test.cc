#include "vigil/select/cox.h"

#include <gtest/gtest.h>

#include <cmath>

#include "vigil/core/random.h"

namespace vigil::select {
namespace {

// Subjects with exponential event times of hazard exp(x . beta), censored at `censor`.
SurvivalData Simulated(const Eigen::VectorXd& beta, int subjects, double censor, uint64_t seed) {
  Rng rng(seed, 0);
  SurvivalData d;
  d.x.resize(subjects, beta.size());
  d.start = Eigen::VectorXd::Zero(subjects);
  d.stop.resize(subjects);
  for (int i = 0; i < subjects; ++i) {
    for (Eigen::Index j = 0; j < beta.size(); ++j) d.x(i, j) = rng.Normal(0, 1);
    const double t = rng.Exponential(std::exp(d.x.row(i).dot(beta)));
    d.stop[i] = std::min(t, censor);
    d.event.push_back(t < censor ? 1 : 0);
  }
  return d;
}

// The same subjects with each interval cut in two at its middle: the counting-process form of
// the same data, which must give the same fit.
SurvivalData SplitInTwo(const SurvivalData& d) {
  const Eigen::Index n = d.x.rows();
  SurvivalData s;
  s.x.resize(2 * n, d.x.cols());
  s.start.resize(2 * n);
  s.stop.resize(2 * n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const double mid = (d.start[i] + d.stop[i]) / 2;
    s.x.row(2 * i) = d.x.row(i);
    s.x.row(2 * i + 1) = d.x.row(i);
    s.start[2 * i] = d.start[i];
    s.stop[2 * i] = mid;
    s.start[2 * i + 1] = mid;
    s.stop[2 * i + 1] = d.stop[i];
    s.event.push_back(0);
    s.event.push_back(d.event[static_cast<size_t>(i)]);
  }
  return s;
}

// Breslow's partial log-likelihood straight from its definition, O(n^2).
double NaiveLogLikelihood(const SurvivalData& d, const Eigen::VectorXd& beta) {
  const CovariateMatrix xc = d.x.rowwise() - d.x.colwise().mean();
  const Eigen::VectorXd eta = xc * beta;
  double ll = 0;
  for (Eigen::Index i = 0; i < d.x.rows(); ++i) {
    if (!d.event[static_cast<size_t>(i)]) continue;
    double s0 = 0;
    for (Eigen::Index j = 0; j < d.x.rows(); ++j) {
      if (d.start[j] < d.stop[i] && d.stop[i] <= d.stop[j]) s0 += std::exp(eta[j]);
    }
    ll += eta[i] - std::log(s0);
  }
  return ll;
}

TEST(FitCoxTest, RecoversTheCoefficientsOfSimulatedData) {
  const Eigen::VectorXd beta = Eigen::Vector2d(0.7, -0.5);
  const Result<CoxFit> fit = FitCox(Simulated(beta, 4000, 2.0, 1));
  ASSERT_TRUE(fit.ok()) << fit.status().ToString();
  EXPECT_TRUE(fit->converged);
  EXPECT_NEAR(fit->beta[0], 0.7, 0.08);
  EXPECT_NEAR(fit->beta[1], -0.5, 0.08);
}

TEST(FitCoxTest, LogLikelihoodMatchesTheDefinitionAndIsMaximal) {
  const SurvivalData d = Simulated(Eigen::Vector2d(0.4, 0.2), 300, 1.0, 2);
  CoxOptions options;
  options.ridge = 0;
  const Result<CoxFit> fit = FitCox(d, options);
  ASSERT_TRUE(fit.ok());
  EXPECT_NEAR(fit->log_likelihood, NaiveLogLikelihood(d, fit->beta), 1e-8);
  for (int j = 0; j < 2; ++j) {
    Eigen::VectorXd moved = fit->beta;
    moved[j] += 0.05;
    EXPECT_LT(NaiveLogLikelihood(d, moved), fit->log_likelihood);
    moved[j] -= 0.1;
    EXPECT_LT(NaiveLogLikelihood(d, moved), fit->log_likelihood);
  }
}

TEST(FitCoxTest, CountingProcessSplitsGiveTheSameFit) {
  const SurvivalData d = Simulated(Eigen::Vector2d(0.5, -0.3), 500, 1.5, 3);
  const Result<CoxFit> whole = FitCox(d);
  const Result<CoxFit> split = FitCox(SplitInTwo(d));
  ASSERT_TRUE(whole.ok() && split.ok());
  EXPECT_NEAR(whole->beta[0], split->beta[0], 1e-6);
  EXPECT_NEAR(whole->beta[1], split->beta[1], 1e-6);
  EXPECT_NEAR(whole->log_likelihood, split->log_likelihood, 1e-6);
}

TEST(FitCoxTest, TiedEventTimesUseBreslow) {
  // Event times rounded to tenths make ties; the likelihood is still Breslow's definition.
  SurvivalData d = Simulated(Eigen::Vector2d(0.6, 0.0), 400, 1.0, 4);
  for (Eigen::Index i = 0; i < d.stop.size(); ++i) d.stop[i] = std::ceil(d.stop[i] * 10) / 10;
  CoxOptions options;
  options.ridge = 0;
  const Result<CoxFit> fit = FitCox(d, options);
  ASSERT_TRUE(fit.ok());
  EXPECT_NEAR(fit->log_likelihood, NaiveLogLikelihood(d, fit->beta), 1e-8);
}

TEST(FitCoxTest, RefusesDataWithoutEventsOrWithEmptyIntervals) {
  SurvivalData d = Simulated(Eigen::Vector2d(0.1, 0.1), 10, 1.0, 5);
  std::fill(d.event.begin(), d.event.end(), 0);
  EXPECT_EQ(FitCox(d).status().code(), StatusCode::kInvalidArgument);
  d.event[0] = 1;
  d.stop[1] = d.start[1];
  EXPECT_EQ(FitCox(d).status().code(), StatusCode::kInvalidArgument);
}

TEST(ConcordanceTest, PerfectReversedAndConstantScores) {
  const Eigen::VectorXd beta = Eigen::VectorXd::Constant(1, 1.0);
  SurvivalData d = Simulated(beta, 200, 1e9, 6);
  // Without censoring, the true hazard ordering is not perfect; a score that is the event time's
  // reverse is.
  const Eigen::VectorXd perfect = -d.stop;
  EXPECT_DOUBLE_EQ(Concordance(d, perfect), 1.0);
  EXPECT_DOUBLE_EQ(Concordance(d, d.stop), 0.0);
  EXPECT_DOUBLE_EQ(Concordance(d, Eigen::VectorXd::Zero(200)), 0.5);
  EXPECT_GT(Concordance(d, d.x.col(0)), 0.6);
}

}  // namespace
}  // namespace vigil::select
