#include "vigil/select/cox.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

namespace vigil::select {
namespace {

constexpr int kMaxHalvings = 30;

std::vector<int64_t> OrderDescending(const Eigen::VectorXd& key) {
  std::vector<int64_t> order(static_cast<size_t>(key.size()));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return key[a] > key[b]; });
  return order;
}

// The rows whose event happens at one time.
struct EventGroup {
  double time = 0;
  std::vector<int64_t> rows;
};

// The event times with their rows, latest first.
std::vector<EventGroup> EventGroups(const SurvivalData& d) {
  std::vector<EventGroup> groups;
  for (int64_t row : OrderDescending(d.stop)) {
    if (!d.event[static_cast<size_t>(row)]) continue;
    if (groups.empty() || groups.back().time != d.stop[row]) groups.push_back({d.stop[row], {}});
    groups.back().rows.push_back(row);
  }
  return groups;
}

// Walks the event times from the last to the first, keeping the risk set (start < t <= stop) by
// adding rows as t falls to their stop and removing them as t falls to their start: the agreg
// sweep of R's survival package, each row added and removed once.
class RiskSetSweep {
 public:
  explicit RiskSetSweep(const SurvivalData& d)
      : d_(d), by_stop_(OrderDescending(d.stop)), by_start_(OrderDescending(d.start)) {}

  // Calls add(row) for the rows entering and remove(row) for the rows leaving the risk set at
  // `t`. REQUIRES: t does not increase between calls.
  void MoveTo(double t, const std::function<void(int64_t)>& add,
              const std::function<void(int64_t)>& remove) {
    for (; next_stop_ < by_stop_.size() && d_.stop[by_stop_[next_stop_]] >= t; ++next_stop_) {
      add(by_stop_[next_stop_]);
    }
    // A row with start >= t has stop > t, so it was added above before it leaves here.
    for (; next_start_ < by_start_.size() && d_.start[by_start_[next_start_]] >= t; ++next_start_) {
      remove(by_start_[next_start_]);
    }
  }

 private:
  const SurvivalData& d_;
  std::vector<int64_t> by_stop_, by_start_;
  size_t next_stop_ = 0, next_start_ = 0;
};

struct Derivatives {
  double log_likelihood = 0;
  Eigen::VectorXd gradient;
  Eigen::MatrixXd information;  // minus the Hessian
};

// Breslow's partial log-likelihood of the centred covariates `xc` at beta, with its gradient and
// information when `with_derivatives`.
Derivatives Evaluate(const SurvivalData& d, const CovariateMatrix& xc, const Eigen::VectorXd& beta,
                     const std::vector<EventGroup>& groups, bool with_derivatives) {
  const Eigen::Index p = xc.cols();
  const Eigen::VectorXd eta = xc * beta;
  const Eigen::VectorXd w = eta.array().exp();
  Derivatives out{0, Eigen::VectorXd::Zero(p), Eigen::MatrixXd::Zero(p, p)};
  double s0 = 0;
  Eigen::VectorXd s1 = Eigen::VectorXd::Zero(p);
  Eigen::MatrixXd s2 = Eigen::MatrixXd::Zero(p, p);  // lower triangle only
  const auto change = [&](int64_t row, double weight) {
    s0 += weight;
    if (!with_derivatives) return;
    s1.noalias() += weight * xc.row(row).transpose();
    s2.selfadjointView<Eigen::Lower>().rankUpdate(xc.row(row).transpose(), weight);
  };
  RiskSetSweep sweep(d);
  for (const EventGroup& g : groups) {
    sweep.MoveTo(
        g.time, [&](int64_t r) { change(r, w[r]); }, [&](int64_t r) { change(r, -w[r]); });
    const double deaths = static_cast<double>(g.rows.size());
    for (int64_t row : g.rows) out.log_likelihood += eta[row];
    out.log_likelihood -= deaths * std::log(s0);
    if (!with_derivatives) continue;
    const Eigen::VectorXd mean = s1 / s0;
    for (int64_t row : g.rows) out.gradient += xc.row(row).transpose();
    out.gradient -= deaths * mean;
    out.information.triangularView<Eigen::Lower>() +=
        (deaths / s0) * s2 - deaths * (mean * mean.transpose());
  }
  out.information = out.information.selfadjointView<Eigen::Lower>();
  return out;
}

Status Check(const SurvivalData& d) {
  const Eigen::Index n = d.x.rows();
  if (d.start.size() != n || d.stop.size() != n || static_cast<Eigen::Index>(d.event.size()) != n) {
    return Status::InvalidArgument(
        "survival data: rows, starts, stops and events differ in number");
  }
  for (Eigen::Index i = 0; i < n; ++i) {
    if (!std::isfinite(d.start[i]) || !std::isfinite(d.stop[i]) || !(d.start[i] < d.stop[i])) {
      return Status::InvalidArgument(fmt::format("survival data: row {}: empty interval", i));
    }
  }
  if (!d.x.allFinite()) return Status::InvalidArgument("survival data: a covariate is not finite");
  if (std::none_of(d.event.begin(), d.event.end(), [](uint8_t e) { return e != 0; })) {
    return Status::InvalidArgument("survival data: no event to fit on");
  }
  return Status::Ok();
}

double Penalised(const Derivatives& v, const Eigen::VectorXd& beta, double ridge) {
  return v.log_likelihood - 0.5 * ridge * beta.squaredNorm();
}

}  // namespace

Eigen::VectorXd LinearPredictor(const CoxFit& fit, const CovariateMatrix& x) {
  return (x.rowwise() - fit.mean.transpose()) * fit.beta;
}

Result<CoxFit> FitCox(const SurvivalData& d, const CoxOptions& options) {
  VIGIL_RETURN_IF_ERROR(Check(d));
  CoxFit fit;
  fit.mean = d.x.colwise().mean().transpose();
  // Centred covariates keep exp(eta) and the running sums of the sweep well scaled.
  const CovariateMatrix xc = d.x.rowwise() - fit.mean.transpose();
  const std::vector<EventGroup> groups = EventGroups(d);
  const Eigen::Index p = d.x.cols();
  fit.beta = Eigen::VectorXd::Zero(p);
  Derivatives current = Evaluate(d, xc, fit.beta, groups, true);
  for (fit.iterations = 0; fit.iterations < options.max_iterations; ++fit.iterations) {
    const Eigen::VectorXd gradient = current.gradient - options.ridge * fit.beta;
    const Eigen::MatrixXd information =
        current.information + options.ridge * Eigen::MatrixXd::Identity(p, p);
    const Eigen::LDLT<Eigen::MatrixXd> ldlt(information);
    Eigen::VectorXd step = ldlt.solve(gradient);
    if (ldlt.info() != Eigen::Success || !step.allFinite()) {
      // Rather no model than one reported converged at a point no step was tried from.
      return Status::InvalidArgument(fmt::format(
          "the information matrix cannot be solved at iteration {} (covariates that never vary "
          "or move together)",
          fit.iterations));
    }
    const double before = Penalised(current, fit.beta, options.ridge);
    Derivatives next;
    int halvings = 0;
    for (; halvings < kMaxHalvings; ++halvings, step /= 2) {
      next = Evaluate(d, xc, fit.beta + step, groups, false);
      if (std::isfinite(next.log_likelihood) &&
          Penalised(next, fit.beta + step, options.ridge) >= before) {
        break;
      }
    }
    if (halvings == kMaxHalvings) {
      fit.converged = true;  // no step improves: at the optimum within rounding
      break;
    }
    fit.beta += step;
    current = Evaluate(d, xc, fit.beta, groups, true);
    const double gain = Penalised(current, fit.beta, options.ridge) - before;
    if (gain <= options.tolerance * (1 + std::abs(before))) {
      fit.converged = true;
      ++fit.iterations;
      break;
    }
  }
  fit.log_likelihood = current.log_likelihood;
  const Eigen::VectorXd w = (xc * fit.beta).array().exp();
  const double exposure = w.dot(d.stop - d.start);
  fit.events = static_cast<int>(std::count(d.event.begin(), d.event.end(), uint8_t{1}));
  fit.baseline_rate = fit.events / exposure;
  return fit;
}

double Concordance(const SurvivalData& d, const Eigen::VectorXd& score) {
  // Ranks of the scores, equal scores sharing one, for a Fenwick tree of the risk set's counts.
  std::vector<int64_t> order(static_cast<size_t>(score.size()));
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return score[a] < score[b]; });
  std::vector<int> rank(order.size());
  int ranks = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    if (i > 0 && score[order[i]] != score[order[i - 1]]) ++ranks;
    rank[static_cast<size_t>(order[i])] = ranks + 1;
  }
  std::vector<int64_t> tree(static_cast<size_t>(ranks) + 2, 0);
  const auto update = [&](int r, int64_t delta) {
    for (; r < static_cast<int>(tree.size()); r += r & -r) tree[static_cast<size_t>(r)] += delta;
  };
  const auto below_or_at = [&](int r) {
    int64_t sum = 0;
    for (; r > 0; r -= r & -r) sum += tree[static_cast<size_t>(r)];
    return sum;
  };
  int64_t at_risk = 0;
  double concordant = 0, comparable = 0;
  RiskSetSweep sweep(d);
  for (const EventGroup& g : EventGroups(d)) {
    sweep.MoveTo(
        g.time, [&](int64_t r) { update(rank[static_cast<size_t>(r)], 1), ++at_risk; },
        [&](int64_t r) { update(rank[static_cast<size_t>(r)], -1), --at_risk; });
    // Events at the same time are not compared with each other.
    for (int64_t row : g.rows) update(rank[static_cast<size_t>(row)], -1);
    const int64_t others = at_risk - static_cast<int64_t>(g.rows.size());
    for (int64_t row : g.rows) {
      const int r = rank[static_cast<size_t>(row)];
      const int64_t lower = below_or_at(r - 1);
      const int64_t equal = below_or_at(r) - lower;
      concordant += static_cast<double>(lower) + 0.5 * static_cast<double>(equal);
      comparable += static_cast<double>(others);
    }
    for (int64_t row : g.rows) update(rank[static_cast<size_t>(row)], 1);
  }
  return comparable > 0 ? concordant / comparable : std::nan("");
}

}  // namespace vigil::select
