#include "vigil/sim/job_plot.h"

#include <fmt/format.h>

#include <cmath>
#include <utility>

#include "vigil/core/duration.h"
#include "vigil/core/figure.h"
#include "vigil/core/svg_plot.h"

namespace vigil::sim {

std::string JobTimePlot(const JobSimOptions& options, const JobSimResult& result) {
  const TimeBreakdown& f = result.mean_fraction;
  const std::pair<const char*, double> parts[] = {
      {"productive", f.productive}, {"recompute", f.recompute}, {"detect", f.detect},
      {"restart", f.restart},       {"queue", f.queue},         {"checkpoint", f.checkpoint}};
  const double run_hours = options.duration_s / kSecondsPerHour;
  BarChart chart;
  chart.stacked = true;
  chart.categories = {fmt::format("mean of {} runs", options.runs)};
  for (const auto& [name, share] : parts) {
    // A share that is not one (a bug upstream) is named as unknown and not drawn.
    const bool sane = std::isfinite(share) && share >= 0;
    chart.series.push_back(BarSeries{
        sane ? fmt::format("{} {:.1f}%, {} h", name, 100 * share, FormatFigure(share * run_hours))
             : fmt::format("{} -", name),
        {share * run_hours}});
  }
  PlotOptions o;
  o.width = 760;
  o.legend_width = 230;  // each part's share and hours
  o.title = "Where the time of a run went";
  o.subtitle = fmt::format(
      "{} on {} nodes, {} failures per 1000 node-days: ETTR mean {} (p5 {}, p95 {}), {} failures "
      "a run",
      FormatDuration(options.duration_s), options.nodes,
      FormatFigure(options.failures_per_1000_node_days), FormatFigure(result.mean),
      FormatFigure(result.p5), FormatFigure(result.p95), FormatFigure(result.mean_failures));
  o.x_label = "simulated job";
  o.y_label = "hours of the run";
  return SvgDocument({BarPlot(o, chart)});
}

}  // namespace vigil::sim
