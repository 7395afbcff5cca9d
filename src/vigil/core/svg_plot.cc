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

// Room around the plot area for the ticks' labels, the axis labels and the title (the legend's is
// PlotOptions::legend_width).
constexpr double kLeft = 70, kTop = 56, kBottom = 55;
constexpr std::array<const char*, 6> kColours = {"#1f77b4", "#d62728", "#2ca02c",
                                                 "#9467bd", "#ff7f0e", "#8c564b"};
// The share of a category's band that its bars fill, and the widest a stacked bar grows: one
// bar alone should look like a bar, not a wall.
constexpr double kBarFill = 0.7, kMaxBarWidth = 120;
// More categories than this and their labels are slanted, so that long node names do not overlap.
constexpr size_t kMaxUprightLabels = 8;
// A log axis spanning at most this many decades also gets ticks at 2 and 5 times each power.
constexpr double kFewDecades = 2;

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void Add(double v) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  bool empty() const { return !(lo <= hi); }
};

enum class AxisKind { kLinear, kLog2, kLog10 };

// One axis: [lo, hi] is the span drawn, in data units or, on a log axis, in exponents.
struct Axis {
  AxisKind kind = AxisKind::kLinear;
  double lo = 0, hi = 1;
  double T(double v) const {
    if (kind == AxisKind::kLog2) return std::log2(v);
    if (kind == AxisKind::kLog10) return std::log10(v);
    return v;
  }
  double Frac(double v) const { return (T(v) - lo) / (hi - lo); }
  bool Takes(double v) const { return std::isfinite(v) && (kind == AxisKind::kLinear || v > 0); }
};

// Data to pixels within a panel of width x height.
struct Scale {
  Axis x, y;
  double width, height, legend;
  double Left() const { return kLeft; }
  double Right() const { return width - legend; }
  double Top() const { return kTop; }
  double Bottom() const { return height - kBottom; }
  double X(double v) const { return Left() + x.Frac(v) * (Right() - Left()); }
  double Y(double v) const { return Bottom() - y.Frac(v) * (Bottom() - Top()); }
  // A y pixel cut to the plot area (an interval's end that leaves it).
  double YIn(double v) const { return std::clamp(Y(v), Top(), Bottom()); }
};

// A tick's label: whole numbers in full (131072, not 1.31e+05), others as short as they go (0.8).
std::string TickLabel(double v) {
  if (v == std::round(v) && std::abs(v) < 1e15) return fmt::format("{:.0f}", v);
  return fmt::format("{:g}", v);
}

// An axis over `range` (in T units): one value is widened to show it; nothing gives [0, 1].
Axis AxisOver(AxisKind kind, Range range) {
  if (range.empty()) range = Range{0, 1};
  if (range.hi == range.lo) range = Range{range.lo - 0.5, range.hi + 0.5};
  return Axis{kind, range.lo, range.hi};
}

// The y axis: linear ones end on round ticks, log ones on whole decades.
Axis YAxisOver(AxisKind kind, const Range& range) {
  Axis a = AxisOver(kind, range);
  if (kind == AxisKind::kLog10) {
    a.lo = std::floor(a.lo);
    a.hi = std::ceil(a.hi);
  } else {
    const std::vector<double> ticks = NiceTicks(a.lo, a.hi);
    a.lo = std::min(a.lo, ticks.front());
    a.hi = std::max(a.hi, ticks.back());
  }
  return a;
}

std::vector<double> Ticks(const Axis& a) {
  std::vector<double> ticks;
  if (a.kind == AxisKind::kLinear) return NiceTicks(a.lo, a.hi);
  const int first = static_cast<int>(std::ceil(a.lo - 1e-9));
  const int last = static_cast<int>(std::floor(a.hi + 1e-9));
  if (a.kind == AxisKind::kLog2) {
    // Powers of 2, every k-th so that at most about 9 are labelled.
    const int step = std::max(1, (last - first) / 8 + 1);
    for (int e = first; e <= last; e += step) ticks.push_back(std::exp2(e));
    return ticks;
  }
  const bool few = a.hi - a.lo <= kFewDecades;
  for (int e = static_cast<int>(std::floor(a.lo)); e <= last; ++e) {
    const double power = std::pow(10.0, e);
    for (const double m : {1.0, 2.0, 5.0}) {
      if (m > 1 && !few) break;
      const double t = m * power;
      if (a.T(t) >= a.lo - 1e-9 && a.T(t) <= a.hi + 1e-9) ticks.push_back(t);
    }
  }
  return ticks;
}

std::string Header(const PlotOptions& o) {
  return fmt::format(
      "<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n"
      "<text x=\"{2:.1f}\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">{3}</text>\n"
      "<text x=\"{2:.1f}\" y=\"40\" text-anchor=\"middle\" font-size=\"11\">{4}</text>\n",
      o.width, o.height, o.width / 2.0, HtmlEscape(o.title), HtmlEscape(o.subtitle));
}

// The axes' lines, the y ticks with their grid lines and labels, and the axis labels.
std::string Frame(const PlotOptions& o, const Scale& s) {
  std::string out =
      fmt::format("<path d=\"M{0:.1f} {1:.1f}V{2:.1f}H{3:.1f}\" fill=\"none\" stroke=\"#333\"/>\n",
                  s.Left(), s.Top(), s.Bottom(), s.Right());
  for (const double v : Ticks(s.y)) {
    const double py = s.Y(v);
    if (py < s.Top() - 0.5 || py > s.Bottom() + 0.5) continue;
    out += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>"
        "<text x=\"{3:.1f}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
        s.Left(), py, s.Right(), s.Left() - 6, py + 4, HtmlEscape(TickLabel(v)));
  }
  out += fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n"
      "<text transform=\"translate(16 {:.1f}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
      (s.Left() + s.Right()) / 2, s.height - 12, HtmlEscape(o.x_label), (s.Top() + s.Bottom()) / 2,
      HtmlEscape(o.y_label));
  return out;
}

std::string XTicks(const Scale& s) {
  std::string out;
  for (const double v : Ticks(s.x)) {
    const double px = s.X(v);
    if (px < s.Left() - 0.5 || px > s.Right() + 0.5) continue;
    out += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#333\"/>"
        "<text x=\"{0:.1f}\" y=\"{3:.1f}\" text-anchor=\"middle\">{4}</text>\n",
        px, s.Bottom(), s.Bottom() + 5, s.Bottom() + 18, HtmlEscape(TickLabel(v)));
  }
  return out;
}

// The legend's entry of series `index`: a line (a line plot's series) or a box (a bar's).
std::string LegendEntry(const std::string& name, size_t index, const Scale& s, bool box) {
  const char* colour = kColours[index % kColours.size()];
  const double x = s.Right() + 15, y = kTop + 10 + 20 * static_cast<double>(index);
  const std::string swatch =
      box ? fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"20\" height=\"10\" fill=\"{}\"/>",
                        x, y - 5, colour)
          : fmt::format(
                "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"{3}\" "
                "stroke-width=\"2\"/>",
                x, y, x + 20, colour);
  return swatch + fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", x + 25, y + 4,
                              HtmlEscape(name));
}

bool Drawn(const Scale& s, double x, double y) { return s.x.Takes(x) && s.y.Takes(y); }

// A point's interval as a whisker with caps, cut to the plot area.
std::string Whisker(const Scale& s, double x, std::pair<double, double> interval,
                    const char* colour) {
  const auto [lo, hi] = interval;
  if (!s.y.Takes(lo) || !s.y.Takes(hi) || lo > hi) return "";
  const double px = s.X(x), top = s.YIn(hi), bottom = s.YIn(lo);
  return fmt::format(
      "<path d=\"M{0:.1f} {1:.1f}V{2:.1f}M{3:.1f} {1:.1f}H{4:.1f}M{3:.1f} {2:.1f}H{4:.1f}\" "
      "fill=\"none\" stroke=\"{5}\"/>\n",
      px, top, bottom, px - 4, px + 4, colour);
}

// One series: its polyline, a dot at each point (with the point in a tooltip), the whiskers of its
// intervals, its legend entry.
std::string Series(const PlotSeries& series, size_t index, const Scale& s) {
  const char* colour = kColours[index % kColours.size()];
  std::string points, dots;
  for (size_t i = 0; i < series.points.size(); ++i) {
    const auto [x, y] = series.points[i];
    if (!Drawn(s, x, y)) continue;
    const double px = s.X(x), py = s.Y(y);
    points += fmt::format("{}{:.1f},{:.1f}", points.empty() ? "" : " ", px, py);
    dots += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"><title>{}, {}</title></circle>\n",
        px, py, colour, HtmlEscape(FormatFigure(x)), HtmlEscape(FormatFigure(y)));
    if (i < series.intervals.size()) dots += Whisker(s, x, series.intervals[i], colour);
  }
  std::string out;
  if (!points.empty()) {
    out += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>\n",
                       points, colour);
  }
  return out + dots + LegendEntry(series.name, index, s, false);
}

// The categories' labels under their bands (category i spans [i, i + 1] on x).
std::string CategoryLabels(const std::vector<std::string>& categories, const Scale& s) {
  const bool slanted = categories.size() > kMaxUprightLabels;
  std::string out;
  for (size_t i = 0; i < categories.size(); ++i) {
    const double px = s.X(static_cast<double>(i) + 0.5), py = s.Bottom() + 16;
    out += slanted
               ? fmt::format(
                     "<text transform=\"translate({:.1f} {:.1f}) rotate(-35)\" "
                     "text-anchor=\"end\" font-size=\"10\">{}</text>\n",
                     px, py - 6, HtmlEscape(categories[i]))
               : fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n",
                             px, py, HtmlEscape(categories[i]));
  }
  return out;
}

double BarValue(const BarSeries& series, size_t category) {
  if (category >= series.values.size()) return 0;
  const double v = series.values[category];
  return std::isfinite(v) && v > 0 ? v : 0;
}

std::string Bar(double x, double width, double top, double bottom, const char* colour,
                const std::string& tip) {
  return fmt::format(
      "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\">"
      "<title>{}</title></rect>\n",
      x, top, width, bottom - top, colour, HtmlEscape(tip));
}

// Every bar of category `c`: side by side, or stacked from the axis up.
std::string Bars(const BarChart& chart, size_t c, const Scale& s) {
  const double band = s.X(1) - s.X(0), centre = s.X(static_cast<double>(c) + 0.5);
  const size_t n = chart.series.size();
  const double width = chart.stacked
                           ? std::min(kBarFill * band, kMaxBarWidth)
                           : kBarFill * band / static_cast<double>(std::max<size_t>(n, 1));
  std::string out;
  double base = 0;
  for (size_t k = 0; k < n; ++k) {
    const BarSeries& series = chart.series[k];
    const double v = BarValue(series, c);
    if (v <= 0) continue;
    const double x = chart.stacked ? centre - width / 2
                                   : centre - kBarFill * band / 2 + static_cast<double>(k) * width;
    const double from = chart.stacked ? base : 0;
    out += Bar(x, width, s.Y(from + v), s.Y(from), kColours[k % kColours.size()],
               fmt::format("{}, {}: {}", chart.categories[c], series.name, FormatFigure(v)));
    if (chart.stacked) base += v;
  }
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
  // A range a few ulps wide far from zero puts k beyond 2^53, where ++k no longer moves: count
  // the ticks with an integer, and give such a range its two ends.
  if (!(last - first >= 0 && last - first <= 1000)) return {lo, hi};
  const auto n = static_cast<int>(last - first);
  for (int i = 0; i <= n; ++i) {
    const double k = first + i;
    ticks.push_back(k == 0 ? 0 : k * step);
  }
  return ticks;
}

SvgPanel LinePlot(const PlotOptions& o, const std::vector<PlotSeries>& series) {
  const Axis x_kind{o.log_x ? AxisKind::kLog2 : AxisKind::kLinear};
  const Axis y_kind{o.log_y ? AxisKind::kLog10 : AxisKind::kLinear};
  Range x, y;
  if (o.y_from_zero && !o.log_y) y.Add(0);
  for (const PlotSeries& s : series) {
    for (const auto& [px, py] : s.points) {
      if (!x_kind.Takes(px) || !y_kind.Takes(py)) continue;
      x.Add(x_kind.T(px));
      y.Add(y_kind.T(py));
    }
  }
  const Scale s{AxisOver(x_kind.kind, x), YAxisOver(y_kind.kind, y), static_cast<double>(o.width),
                static_cast<double>(o.height), static_cast<double>(o.legend_width)};
  std::string body = Header(o) + Frame(o, s) + XTicks(s);
  for (size_t i = 0; i < series.size(); ++i) body += Series(series[i], i, s);
  return SvgPanel{std::move(body), o.width, o.height};
}

SvgPanel BarPlot(const PlotOptions& o, const BarChart& chart) {
  Range y;
  y.Add(0);
  for (size_t c = 0; c < chart.categories.size(); ++c) {
    double sum = 0;
    for (const BarSeries& series : chart.series) {
      const double v = BarValue(series, c);
      sum += v;
      y.Add(chart.stacked ? sum : v);
    }
  }
  const double bands = static_cast<double>(std::max<size_t>(chart.categories.size(), 1));
  const Scale s{Axis{AxisKind::kLinear, 0, bands}, YAxisOver(AxisKind::kLinear, y),
                static_cast<double>(o.width), static_cast<double>(o.height),
                static_cast<double>(o.legend_width)};
  std::string body = Header(o) + Frame(o, s) + CategoryLabels(chart.categories, s);
  for (size_t c = 0; c < chart.categories.size(); ++c) body += Bars(chart, c, s);
  for (size_t k = 0; k < chart.series.size(); ++k) {
    body += LegendEntry(chart.series[k].name, k, s, true);
  }
  return SvgPanel{std::move(body), o.width, o.height};
}

std::string SvgDocument(const std::vector<SvgPanel>& panels) {
  int width = 0, height = 0;
  for (const SvgPanel& p : panels) {
    width = std::max(width, p.width);
    height += p.height;
  }
  std::string out = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      width, height);
  int top = 0;
  for (const SvgPanel& p : panels) {
    out += fmt::format("<g transform=\"translate(0 {})\">\n{}</g>\n", top, p.body);
    top += p.height;
  }
  return out + "</svg>\n";
}

std::string LinePlotSvg(const PlotOptions& options, const std::vector<PlotSeries>& series) {
  return SvgDocument({LinePlot(options, series)});
}

}  // namespace vigil
