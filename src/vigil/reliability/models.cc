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
  VIGIL_RETURN_IF_ERROR(CheckPositive(p.nodes, "--nodes"));
  VIGIL_RETURN_IF_ERROR(CheckPositive(p.failures_per_1000_node_days, "--rate"));
  VIGIL_RETURN_IF_ERROR(CheckNonNegative(p.restart_s, "--restart"));
  VIGIL_RETURN_IF_ERROR(CheckNonNegative(p.queue_s, "--queue"));
  VIGIL_RETURN_IF_ERROR(CheckPositive(p.interval_s, "--interval"));
  VIGIL_RETURN_IF_ERROR(CheckNonNegative(p.write_s, "--write"));
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

Result<std::vector<MttfRow>> MttfBySize(const std::vector<int64_t>& gpus, int gpus_per_node,
                                        double failures_per_1000_node_days) {
  VIGIL_RETURN_IF_ERROR(CheckPositive(gpus_per_node, "--gpus-per-node"));
  VIGIL_RETURN_IF_ERROR(CheckPositive(failures_per_1000_node_days, "--rate"));
  std::vector<MttfRow> rows;
  for (const int64_t g : gpus) {
    VIGIL_RETURN_IF_ERROR(CheckPositive(static_cast<double>(g), "--gpus"));
    MttfRow row{.gpus = g, .nodes = static_cast<double>(g) / gpus_per_node};
    VIGIL_ASSIGN_OR_RETURN(row.mttf_s, JobMttfSeconds(row.nodes, failures_per_1000_node_days));
    rows.push_back(row);
  }
  return rows;
}

Result<std::vector<EttrRow>> ExpectedEttrBySize(const EttrParams& params,
                                                const std::vector<double>& nodes) {
  std::vector<EttrRow> rows;
  for (const double n : nodes) {
    EttrRow row;
    row.params = params;
    row.params.nodes = n;
    VIGIL_ASSIGN_OR_RETURN(row.estimate, ExpectedEttr(row.params));
    row.mttf_s = *JobMttfSeconds(n, params.failures_per_1000_node_days);  // Validate held
    rows.push_back(row);
  }
  return rows;
}

Result<CheckpointIntervals> OptimalCheckpointIntervals(double write_s, double mtbf_s) {
  VIGIL_RETURN_IF_ERROR(CheckPositive(write_s, "--write"));
  VIGIL_RETURN_IF_ERROR(CheckPositive(mtbf_s, "--mtbf"));
  return CheckpointIntervals{.young_s = YoungInterval(write_s, mtbf_s),
                             .daly_s = DalyInterval(write_s, mtbf_s)};
}

double YoungInterval(double write_s, double mtbf_s) { return std::sqrt(2 * write_s * mtbf_s); }

double DalyInterval(double write_s, double mtbf_s) {
  if (write_s >= 2 * mtbf_s) return mtbf_s;
  const double ratio = write_s / (2 * mtbf_s);
  return std::sqrt(2 * write_s * mtbf_s) * (1 + std::sqrt(ratio) / 3 + ratio / 9) - write_s;
}

}  // namespace vigil::reliability
