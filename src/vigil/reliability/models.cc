#include "vigil/reliability/models.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "vigil/core/duration.h"

namespace vigil::reliability {
namespace {

constexpr double kNodeDaysPerRateUnit = 1000;

Status CheckPositive(double value, std::string_view name) {
  if (!std::isfinite(value) || value <= 0) {
    return Status::InvalidArgument(
        fmt::format("{} must be a positive number, got {}", name, value));
  }
  return Status::Ok();
}

Status CheckNonNegative(double value, std::string_view name) {
  if (!std::isfinite(value) || value < 0) {
    return Status::InvalidArgument(fmt::format("{} must be zero or more, got {}", name, value));
  }
  return Status::Ok();
}

}  // namespace

double PerNodeSecondRate(double failures_per_1000_node_days) {
  return failures_per_1000_node_days / kNodeDaysPerRateUnit / kSecondsPerDay;
}

Result<double> JobMttfSeconds(double nodes, double failures_per_1000_node_days) {
  VIGIL_RETURN_IF_ERROR(CheckPositive(nodes, "the number of nodes"));
  VIGIL_RETURN_IF_ERROR(CheckPositive(failures_per_1000_node_days, "the failure rate"));
  return 1 / (nodes * PerNodeSecondRate(failures_per_1000_node_days));
}

Status Validate(const EttrParams& p) {
  VIGIL_RETURN_IF_ERROR(CheckPositive(p.nodes, "nodes"));
  VIGIL_RETURN_IF_ERROR(CheckPositive(p.failures_per_1000_node_days, "the failure rate"));
  VIGIL_RETURN_IF_ERROR(CheckNonNegative(p.restart_s, "the restart time"));
  VIGIL_RETURN_IF_ERROR(CheckNonNegative(p.queue_s, "the queue time"));
  VIGIL_RETURN_IF_ERROR(CheckPositive(p.interval_s, "the checkpoint interval"));
  VIGIL_RETURN_IF_ERROR(CheckNonNegative(p.write_s, "the checkpoint write time"));
  return Status::Ok();
}

Result<EttrEstimate> ExpectedEttr(const EttrParams& p) {
  VIGIL_RETURN_IF_ERROR(Validate(p));
  const double job_rate = p.nodes * PerNodeSecondRate(p.failures_per_1000_node_days);
  const auto ettr_at = [&](double interval) {
    return (1 - job_rate * (p.restart_s + p.queue_s + interval / 2)) / (1 + p.write_s / interval);
  };
  EttrEstimate e;
  e.failure_loss = job_rate * (p.restart_s + p.queue_s + p.interval_s / 2);
  e.checkpoint_overhead = p.write_s / p.interval_s;
  e.ettr = ettr_at(p.interval_s);
  e.in_domain = e.failure_loss <= kEttrDomainLimit;
  if (p.write_s > 0) {
    e.optimal_interval_s = std::sqrt(2 * p.write_s / job_rate);
    e.ettr_at_optimal = ettr_at(e.optimal_interval_s);
  } else {
    e.ettr_at_optimal = std::numeric_limits<double>::quiet_NaN();
  }
  return e;
}

double YoungInterval(double write_s, double mtbf_s) { return std::sqrt(2 * write_s * mtbf_s); }

double DalyInterval(double write_s, double mtbf_s) {
  if (write_s >= 2 * mtbf_s) return mtbf_s;
  const double ratio = write_s / (2 * mtbf_s);
  return std::sqrt(2 * write_s * mtbf_s) * (1 + std::sqrt(ratio) / 3 + ratio / 9) - write_s;
}

}  // namespace vigil::reliability
