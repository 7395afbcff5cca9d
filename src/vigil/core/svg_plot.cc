#include "vigil/core/svg_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "vigil/core/figure.h"
#include "vigil/core/text.h"

namespace vigil {
namespace {

// Room around the plot area for the ticks' labels, the axis labels and the title.
constexpr double kLeft = 70, kRight = 190, kTop = 56, kBottom = 55;
constexpr std::array<const char*, 6> kColours = {"#1f77b4", "#d62728", "#2ca02c",
                                                 "#9467bd", "#ff7f0e", "#8c564b"};

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void Add(double v) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  bool empty() const { return !(lo <= hi); }
};

// Data to pixels: x on a log2 scale when asked; a range of one value is widened to show it.
struct Scale {
  double x0, x1, y0, y1, width, height;
  bool log_x;
  double X(double x) const {
    const double t = log_x ? std::log2(x) : x;
    return kLeft + (t - x0) / (x1 - x0) * (width - kLeft - kRight);
  }
  double Y(double y) const {
    return height - kBottom - (y - y0) / (y1 - y0) * (height - kTop - kBottom);
  }
};

// A tick's label: whole numbers in full (131072, not 1.31e+05), others as short as they go (0.8).
std::string TickLabel(double v) {
  if (v == std::round(v) && std::abs(v) < 1e15) return fmt::format("{:.0f}", v);
  return fmt::format("{:g}", v);
}

bool Drawn(double x, double y, bool log_x) {
  return std::isfinite(x) && std::isfinite(y) && (!log_x || x > 0);
}

Scale ScaleOf(const PlotOptions& o, const std::vector<PlotSeries>& series) {
  Range x, y;
  if (o.y_from_zero) y.Add(0);
  for (const PlotSeries& s : series) {
    for (const auto& [px, py] : s.points) {
      if (!Drawn(px, py, o.log_x)) continue;
      x.Add(o.log_x ? std::log2(px) : px);
      y.Add(py);
    }
  }
  if (x.empty()) x = Range{0, 1};
  if (y.empty()) y = Range{0, 1};
  if (x.hi == x.lo) x = Range{x.lo - 0.5, x.hi + 0.5};
  if (y.hi == y.lo) y = Range{y.lo - 0.5, y.hi + 0.5};
  const std::vector<double> yt = NiceTicks(y.lo, y.hi);
  return Scale{x.lo,
               x.hi,
               std::min(y.lo, yt.front()),
               std::max(y.hi, yt.back()),
               static_cast<double>(o.width),
               static_cast<double>(o.height),
               o.log_x};
}

// The axes, their ticks with labels, and the axis labels.
std::string Axes(const PlotOptions& o, const Scale& s) {
  const double left = kLeft, right = s.width - kRight, bottom = s.height - kBottom;
  std::string out =
      fmt::format("<path d=\"M{0:.1f} {1:.1f}V{2:.1f}H{3:.1f}\" fill=\"none\" stroke=\"#333\"/>\n",
                  left, kTop, bottom, right);
  std::vector<double> xt;
  if (s.log_x) {
    // Powers of 2, every k-th so that at most about 9 are labelled.
    const int first = static_cast<int>(std::ceil(s.x0 - 1e-9)),
              last = static_cast<int>(std::floor(s.x1 + 1e-9));
    const int step = std::max(1, (last - first) / 8 + 1);
    for (int e = first; e <= last; e += step) xt.push_back(std::exp2(e));
  } else {
    xt = NiceTicks(s.x0, s.x1);
  }
  for (const double v : xt) {
    const double px = s.X(v);
    if (px < left - 0.5 || px > right + 0.5) continue;
    out += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#333\"/>"
        "<text x=\"{0:.1f}\" y=\"{3:.1f}\" text-anchor=\"middle\">{4}</text>\n",
        px, bottom, bottom + 5, bottom + 18, HtmlEscape(TickLabel(v)));
  }
  for (const double v : NiceTicks(s.y0, s.y1)) {
    const double py = s.Y(v);
    if (py < kTop - 0.5 || py > bottom + 0.5) continue;
    out += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>"
        "<text x=\"{3:.1f}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
        left, py, right, left - 6, py + 4, HtmlEscape(TickLabel(v)));
  }
  out += fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n"
      "<text transform=\"translate(16 {:.1f}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
      (left + right) / 2, s.height - 12, HtmlEscape(o.x_label), (kTop + bottom) / 2,
      HtmlEscape(o.y_label));
  return out;
}

// One series: its polyline, a dot at each point (with the point in a tooltip), its legend entry.
std::string Series(const PlotSeries& series, size_t index, const Scale& s) {
  const char* colour = kColours[index % kColours.size()];
  std::string points, dots;
  for (const auto& [x, y] : series.points) {
    if (!Drawn(x, y, s.log_x)) continue;
    const double px = s.X(x), py = s.Y(y);
    points += fmt::format("{}{:.1f},{:.1f}", points.empty() ? "" : " ", px, py);
    dots += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"><title>{}, {}</title></circle>\n",
        px, py, colour, HtmlEscape(FormatFigure(x)), HtmlEscape(FormatFigure(y)));
  }
  std::string out;
  if (!points.empty()) {
    out += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>\n",
                       points, colour);
  }
  const double ly = kTop + 10 + 20 * static_cast<double>(index);
  out +=
      dots + fmt::format(
                 "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"{3}\" "
                 "stroke-width=\"2\"/><text x=\"{4:.1f}\" y=\"{5:.1f}\">{6}</text>\n",
                 s.width - kRight + 15, ly, s.width - kRight + 35, colour, s.width - kRight + 40,
                 ly + 4, HtmlEscape(series.name));
  return out;
}

}  // namespace

std::vector<double> NiceTicks(double lo, double hi, int count) {
  if (!(std::isfinite(lo) && std::isfinite(hi)) || hi <= lo || count < 1) return {lo};
  const double raw = (hi - lo) / count;
  const double magnitude = std::pow(10, std::floor(std::log10(raw)));
  double step = magnitude;
  for (const double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * magnitude;
    if (step >= raw) break;
  }
  // Integer multiples of the step, not a running sum, so that errors do not add up.
  std::vector<double> ticks;
  const double first = std::floor(lo / step), last = std::ceil(hi / step - 1e-9);
  for (double k = first; k <= last; ++k) ticks.push_back(k == 0 ? 0 : k * step);
  return ticks;
}

std::string LinePlotSvg(const PlotOptions& o, const std::vector<PlotSeries>& series) {
  const Scale s = ScaleOf(o, series);
  std::string out = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{2:.1f}\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">{3}</text>\n"
      "<text x=\"{2:.1f}\" y=\"40\" text-anchor=\"middle\" font-size=\"11\">{4}</text>\n",
      o.width, o.height, o.width / 2.0, HtmlEscape(o.title), HtmlEscape(o.subtitle));
  out += Axes(o, s);
  for (size_t i = 0; i < series.size(); ++i) out += Series(series[i], i, s);
  return out + "</svg>\n";
}

}  // namespace vigil
