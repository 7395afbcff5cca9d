// A small SVG writer for plots, where a person would rather look than read (`vigil model ettr
// --sweep --plot FILE.svg`, `model mttf`, `simulate job` and `fleet stats --plot`): line plots
// and bar charts with axes, ticks and their labels, a title, axis labels and a legend, alone or as
// panels one under another in one document. Standalone SVG 1.1, no script, no external resources,
// so that a browser or an image viewer shows it as it is.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace vigil {

struct PlotSeries {
  std::string name;                               // the legend's text
  std::vector<std::pair<double, double>> points;  // (x, y); non-finite ones are left out
  // Empty, or one (low, high) per point: the point's interval, drawn as a vertical whisker (a
  // confidence interval). An end that leaves the plot is cut at its edge; a non-finite interval,
  // or one around a point left out, is not drawn.
  std::vector<std::pair<double, double>> intervals = {};
};

struct PlotOptions {
  std::string title;        // above the plot
  std::string subtitle;     // under the title, smaller (what the plot was made for); "": none
  std::string x_label;      // under the x axis
  std::string y_label;      // beside the y axis
  bool log_x = false;       // line plots: x on a base-2 log scale (job sizes that double);
                            // points with x <= 0 are left out
  bool log_y = false;       // line plots: y on a base-10 log scale (times that span decades);
                            // points with y <= 0 are left out
  bool y_from_zero = true;  // linear y: the axis starts at 0 (a ratio), else at the data's lowest
  int width = 720;          // pixels
  int height = 440;         // pixels
  int legend_width = 190;   // pixels right of the plot area, for the legend
};

// Bars by category: one value per series and category, side by side or stacked.
struct BarSeries {
  std::string name;            // the legend's text
  std::vector<double> values;  // one per category; a missing, negative or non-finite one is
                               // not drawn (stacked: counts as 0)
};

struct BarChart {
  std::vector<std::string> categories;  // under the x axis, left to right
  std::vector<BarSeries> series;
  bool stacked = false;  // one bar per category, the series on top of each other
};

// One plot, drawn in its own box of options.width x options.height pixels, to be put into a
// document by SvgDocument.
struct SvgPanel {
  std::string body;  // SVG elements in the panel's own coordinates
  int width = 0;
  int height = 0;
};

// About `count` round tick values ("nice" steps of 1, 2 or 5 x 10^k) covering [lo, hi]. Pure.
std::vector<double> NiceTicks(double lo, double hi, int count = 5);

// A line plot: one polyline per series with a dot at each point (its values in a tooltip), and
// the intervals' whiskers. Text is XML-escaped. Series without a drawn point are in the legend
// only; with no drawn point at all the axes span [0, 1] (log axes: [1, 10] or [1, 2]). Pure;
// thread-safe.
SvgPanel LinePlot(const PlotOptions& options, const std::vector<PlotSeries>& series);

// A bar chart: the y axis from 0 up to the highest bar (stacked: the highest sum), each bar with
// its value in a tooltip; category labels slanted when there are many. log_x and log_y are
// ignored. Pure; thread-safe.
SvgPanel BarPlot(const PlotOptions& options, const BarChart& chart);

// The panels one under another as an SVG document, as wide as the widest. Pure; thread-safe.
std::string SvgDocument(const std::vector<SvgPanel>& panels);

// SvgDocument({LinePlot(options, series)}).
std::string LinePlotSvg(const PlotOptions& options, const std::vector<PlotSeries>& series);

}  // namespace vigil
