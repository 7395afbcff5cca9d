#include "vigil/reliability/plots.h"

#include <fmt/format.h>

#include <algorithm>

#include "vigil/core/duration.h"
#include "vigil/core/figure.h"
#include "vigil/core/svg_plot.h"

namespace vigil::reliability {
namespace {

// The lemon panel is taller than a plain plot: its node names are slanted under the bars.
constexpr int kLemonPanelHeight = 480;

SvgPanel RateBySizePanel(const FleetStats& stats, double confidence) {
  PlotSeries classes{"jobs of each size", {}, {}};
  for (const SizeClassRow& c : stats.size_classes) {
    classes.points.emplace_back(c.min_nodes, c.rate.per_1000_node_days);
    classes.intervals.emplace_back(c.rate.lower, c.rate.upper);
  }
  PlotSeries fleet{fmt::format("fleet: {}", FormatFigure(stats.rate.per_1000_node_days)), {}, {}};
  if (!stats.size_classes.empty()) {
    // A level line across the classes drawn.
    fleet.points = {{stats.size_classes.front().min_nodes, stats.rate.per_1000_node_days},
                    {stats.size_classes.back().min_nodes, stats.rate.per_1000_node_days}};
  }
  PlotOptions o;
  o.title = "Infrastructure failure rate by job size";
  o.subtitle =
      fmt::format("{} failures over {} node-days; intervals at {:.0f}% (exact Poisson)",
                  stats.rate.failures, FormatFigure(stats.rate.node_days), 100 * confidence);
  o.x_label = "job size class (nodes: 1, 2-3, 4-7, ...)";
  o.y_label = "failures per 1000 node-days";
  o.log_x = true;
  return LinePlot(o, {classes, fleet});
}

SvgPanel LemonPanel(const FleetStats& stats, double fdr) {
  BarChart chart;
  chart.series = {{"failed jobs", {}}, {"expected of it", {}}};
  const size_t shown = std::min(stats.lemons.size(), kMaxPlottedLemons);
  for (size_t i = 0; i < shown; ++i) {
    const LemonNode& l = stats.lemons[i];
    chart.categories.push_back(l.node);
    chart.series[0].values.push_back(static_cast<double>(l.event_failures + l.single_failures));
    chart.series[1].values.push_back(l.expected_event_failures + l.expected_single_failures);
  }
  PlotOptions o;
  o.height = kLemonPanelHeight;
  o.title = stats.lemons.empty()
                ? fmt::format("Lemon nodes: none at FDR {}", fdr)
                : fmt::format("Lemon nodes: {} at FDR {}", stats.lemons.size(), fdr);
  o.subtitle = shown < stats.lemons.size()
                   ? fmt::format(
                         "the {} most significant; failed jobs with its event, or single-node "
                         "failures without one, against the fleet's rates",
                         shown)
                   : "failed jobs with its event, or single-node failures without one, against the "
                     "fleet's rates";
  o.x_label = "node";
  o.y_label = "failed jobs";
  return BarPlot(o, chart);
}

}  // namespace

std::string MttfPlot(const std::vector<MttfRow>& rows, int gpus_per_node,
                     double failures_per_1000_node_days) {
  PlotSeries mttf{"MTTF = 1 / (N_nodes r_f)", {}, {}};
  for (const MttfRow& r : rows) {
    mttf.points.emplace_back(static_cast<double>(r.gpus), r.mttf_s / kSecondsPerHour);
  }
  PlotOptions o;
  o.title = "Mean time to failure of a job by size";
  o.subtitle = fmt::format("r_f = {} failures per 1000 node-days, {} GPUs per node",
                           FormatFigure(failures_per_1000_node_days), gpus_per_node);
  o.x_label = "GPUs in the job (log scale)";
  o.y_label = "MTTF (hours, log scale)";
  o.log_x = true;
  o.log_y = true;
  return LinePlotSvg(o, {mttf});
}

std::string FleetStatsPlot(const FleetStats& stats, double confidence, double fdr) {
  return SvgDocument({RateBySizePanel(stats, confidence), LemonPanel(stats, fdr)});
}

}  // namespace vigil::reliability
