// A small SVG writer for line plots, where a person would rather look than read (`vigil model
// ettr --sweep --plot FILE.svg`): axes with ticks and their labels, a title, axis labels, one
// polyline per series with a dot at each point, and a legend. Standalone SVG 1.1, no script, no
// external resources, so that a browser or an image viewer shows it as it is.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace vigil {

struct PlotSeries {
  std::string name;                               // the legend's text
  std::vector<std::pair<double, double>> points;  // (x, y); non-finite ones are left out
};

struct PlotOptions {
  std::string title;        // above the plot
  std::string subtitle;     // under the title, smaller (what the plot was made for); "": none
  std::string x_label;      // under the x axis
  std::string y_label;      // beside the y axis
  bool log_x = false;       // x on a base-2 log scale (job sizes that double); REQUIRES x > 0
  bool y_from_zero = true;  // the y axis starts at 0 (a ratio), else at the data's lowest
  int width = 720;          // pixels
  int height = 440;         // pixels
};

// About `count` round tick values ("nice" steps of 1, 2 or 5 x 10^k) covering [lo, hi]. Pure.
std::vector<double> NiceTicks(double lo, double hi, int count = 5);

// The plot as an SVG document. Text is XML-escaped. Series without a finite point are drawn in the
// legend only; with no finite point at all the axes span [0, 1]. Pure; thread-safe.
std::string LinePlotSvg(const PlotOptions& options, const std::vector<PlotSeries>& series);

}  // namespace vigil
