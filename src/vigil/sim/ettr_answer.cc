#include "vigil/sim/ettr_answer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "vigil/core/duration.h"
#include "vigil/core/figure.h"
#include "vigil/core/svg_plot.h"
#include "vigil/core/text_table.h"
#include "vigil/sim/job_sim.h"

namespace vigil::sim {
namespace {

using reliability::EttrEstimate;
using reliability::EttrParams;

// The mean simulated ETTR of the job of `p` (its u0 all restart, as the formula takes it), with
// fewer runs or shorter ones where failures would be more than kMaxAnswerFailures.
Result<double> SimulatedEttr(const EttrParams& p, const EttrAnswerOptions& options) {
  JobSimOptions o;
  o.nodes = std::max<int64_t>(1, std::llround(p.nodes));
  o.failures_per_1000_node_days = p.failures_per_1000_node_days;
  o.detect_s = 0;
  o.restart_s = p.restart_s;
  o.queue_s = p.queue_s;
  o.interval_s = p.interval_s;
  o.write_s = p.write_s;
  o.seed = options.seed;
  const double per_second =
      static_cast<double>(o.nodes) * reliability::PerNodeSecondRate(p.failures_per_1000_node_days);
  o.duration_s = std::min(options.duration_s, kMaxAnswerFailures / per_second);
  o.runs = static_cast<int>(std::clamp(kMaxAnswerFailures / (per_second * o.duration_s), 1.0,
                                       static_cast<double>(options.runs)));
  VIGIL_ASSIGN_OR_RETURN(const JobSimResult r, SimulateJob(o));
  return r.mean;
}

// Whether the formula at the optimal interval dt* is outside its domain (its loss at dt*).
bool OptimumOutsideDomain(const EttrParams& p, const EttrEstimate& e) {
  if (!(e.optimal_interval_s > 0)) return false;
  const double rate = p.nodes * reliability::PerNodeSecondRate(p.failures_per_1000_node_days);
  return rate * (p.restart_s + p.queue_s + e.optimal_interval_s / 2) >
         reliability::kEttrDomainLimit;
}

// The sweep's ETTR_FROM: what answered the row, and the formula's value where it did not.
std::string EttrFrom(const EttrAnswer& a) {
  const EttrEstimate& e = a.row.estimate;
  if (a.simulated && a.simulated_at_optimal) {
    return fmt::format("simulation (formula: {}; at optimum: {})", FormatFigure(e.ettr),
                       FormatFigure(e.ettr_at_optimal));
  }
  if (a.simulated) return fmt::format("simulation (formula: {})", FormatFigure(e.ettr));
  if (a.simulated_at_optimal) {
    return fmt::format("formula; at optimum, simulation (formula: {})",
                       FormatFigure(e.ettr_at_optimal));
  }
  return "formula";
}

}  // namespace

Result<std::vector<EttrAnswer>> AnswerEttrBySize(const EttrParams& params,
                                                 const std::vector<double>& nodes,
                                                 const EttrAnswerOptions& options) {
  VIGIL_ASSIGN_OR_RETURN(const std::vector<reliability::EttrRow> rows,
                         reliability::ExpectedEttrBySize(params, nodes));
  std::vector<EttrAnswer> out;
  for (const reliability::EttrRow& row : rows) {
    EttrAnswer a;
    a.row = row;
    if (!row.estimate.in_domain) {
      VIGIL_ASSIGN_OR_RETURN(a.simulated, SimulatedEttr(row.params, options));
    }
    if (OptimumOutsideDomain(row.params, row.estimate)) {
      EttrParams at_optimum = row.params;
      at_optimum.interval_s = row.estimate.optimal_interval_s;
      VIGIL_ASSIGN_OR_RETURN(a.simulated_at_optimal, SimulatedEttr(at_optimum, options));
    }
    out.push_back(a);
  }
  return out;
}

std::string EttrSweepTable(const std::vector<EttrAnswer>& rows, int gpus_per_node) {
  Table table({"GPUS", "NODES", "MTTF", "ETTR", "FAILURE_LOSS", "OPTIMAL_INTERVAL",
               "ETTR_AT_OPTIMAL", "ETTR_FROM"});
  bool any_simulated = false;
  for (const EttrAnswer& a : rows) {
    const EttrEstimate& e = a.row.estimate;
    any_simulated |= a.simulated.has_value() || a.simulated_at_optimal.has_value();
    const std::string from = EttrFrom(a);
    table.Add({FormatFigure(a.row.params.nodes * gpus_per_node), FormatFigure(a.row.params.nodes),
               FormatDuration(a.row.mttf_s), FormatFigure(a.Ettr()), FormatFigure(e.failure_loss),
               FormatDuration(e.optimal_interval_s), FormatFigure(a.EttrAtOptimal()), from});
  }
  std::string out = table.ToString();
  if (any_simulated) {
    out += fmt::format(
        "\nWhere failures cost more than {:.0f}% of the time the first-order formula is not "
        "trusted\n(it underestimates ETTR, below 0 past a loss of 1): ETTR there is the simulated "
        "job's mean\n(`vigil simulate job`), the formula's value beside it.\n",
        reliability::kEttrDomainLimit * 100);
  }
  return out;
}

std::string EttrSweepPlot(const std::vector<EttrAnswer>& rows, int gpus_per_node,
                          const std::string& subtitle) {
  PlotSeries ettr{"expected ETTR", {}}, optimal{"ETTR at optimal dt", {}};
  for (const EttrAnswer& a : rows) {
    const double gpus = a.row.params.nodes * gpus_per_node;
    ettr.points.emplace_back(gpus, a.Ettr());
    optimal.points.emplace_back(gpus, a.EttrAtOptimal());  // NaN without a write time: left out
  }
  PlotOptions o;
  o.title = "Expected ETTR by job size";
  o.subtitle = subtitle;
  o.x_label = "GPUs in the job";
  o.y_label = "ETTR";
  o.log_x = true;
  return LinePlotSvg(o, {ettr, optimal});
}

std::string EttrTable(const EttrAnswer& a) {
  const EttrEstimate& e = a.row.estimate;
  Table table({"QUANTITY", "VALUE", "MEANING"});
  table.Add({"job MTTF", FormatDuration(a.row.mttf_s), "1 / (N_nodes r_f)"});
  table.Add({"failure loss", FormatFigure(e.failure_loss), "N r_f (u0 + q + dt/2)"});
  table.Add({"checkpoint overhead", FormatFigure(e.checkpoint_overhead), "w_cp / dt"});
  if (a.simulated) {
    table.Add({"ETTR by the formula", FormatFigure(e.ettr),
               fmt::format("outside its domain (loss > {}): not trusted",
                           reliability::kEttrDomainLimit)});
    table.Add({"expected ETTR", FormatFigure(a.Ettr()), "simulated job's mean (simulate job)"});
  } else {
    table.Add({"expected ETTR", FormatFigure(e.ettr), "(1 - loss) / (1 + overhead)"});
  }
  if (a.row.params.write_s > 0) {
    table.Add(
        {"optimal interval", FormatDuration(e.optimal_interval_s), "dt* = sqrt(2 w_cp / (N r_f))"});
    table.Add({"ETTR at optimum", FormatFigure(a.EttrAtOptimal()),
               a.simulated_at_optimal
                   ? fmt::format("simulated (the formula, outside its domain: {})",
                                 FormatFigure(e.ettr_at_optimal))
                   : ""});
  }
  return table.ToString();
}

}  // namespace vigil::sim
