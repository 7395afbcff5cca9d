#include "vigil/core/svg_plot.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "vigil/testing/svg_check.h"

namespace vigil {
namespace {

using testing::Occurrences;
using testing::SvgNonsense;
using testing::XmlProblem;

TEST(SvgPlotTest, TheCheckerCatchesWhatIsNotWellFormed) {
  EXPECT_EQ(XmlProblem("<a><b/></a>"), "");
  EXPECT_NE(XmlProblem("<a><b></a>"), "");
  EXPECT_NE(XmlProblem("<a>x & y</a>"), "");
  EXPECT_NE(XmlProblem("<a t=\"1></a>"), "");
  EXPECT_NE(XmlProblem("<a/><b/>"), "");
  EXPECT_NE(XmlProblem("just text"), "");
  EXPECT_EQ(SvgNonsense("<g><rect x=\"1\" width=\"2\"/><text>Infrastructure</text></g>"), "");
  EXPECT_NE(SvgNonsense("<rect x=\"nan\"/>"), "");
  EXPECT_NE(SvgNonsense("<rect height=\"-3.0\"/>"), "");
  EXPECT_NE(SvgNonsense("<text>mean -inf</text>"), "");
}

TEST(SvgPlotTest, NiceTicksAreRoundAndCoverTheRange) {
  const std::vector<double> unit = NiceTicks(0, 1);
  ASSERT_EQ(unit.size(), 6u);
  for (size_t k = 0; k < unit.size(); ++k) EXPECT_NEAR(unit[k], 0.2 * k, 1e-12);
  const std::vector<double> t = NiceTicks(3, 97);
  EXPECT_LE(t.front(), 3);
  EXPECT_GE(t.back(), 97);
  EXPECT_DOUBLE_EQ(t[1] - t[0], 20);
  EXPECT_EQ(NiceTicks(1, 1), std::vector<double>{1});
  // A few ulps wide, far from zero: the steps are so small that k passes 2^53 (it used to loop
  // for ever there).
  const double big = 1e17;
  const std::vector<double> tiny = NiceTicks(big, std::nextafter(std::nextafter(big, 2e17), 2e17));
  ASSERT_FALSE(tiny.empty());
  EXPECT_LE(tiny.size(), 1001u);
}

// Every point is drawn, at the place its value says, in a well-formed document with its labels
// escaped.
TEST(SvgPlotTest, APlotIsWellFormedAndHoldsEveryPoint) {
  PlotOptions o;
  o.title = "ETTR <by> size & more";
  o.subtitle = "r_f & co";
  o.x_label = "GPUs";
  o.y_label = "ETTR";
  o.log_x = true;
  PlotSeries s{"expected ETTR", {{1024, 0.96}, {2048, 0.92}, {4096, 0.85}, {8192, 0.7}}};
  PlotSeries nan{"with a hole", {{1024, 0.9}, {2048, NAN}}};
  const std::string svg = LinePlotSvg(o, {s, nan});
  EXPECT_EQ(XmlProblem(svg), "") << svg;
  EXPECT_NE(svg.find("ETTR &lt;by&gt; size &amp; more"), std::string::npos);
  EXPECT_EQ(svg.find("size & more"), std::string::npos);
  EXPECT_NE(svg.find(">r_f &amp; co</text>"), std::string::npos);
  // Ticks are labelled in full: 1024 to 8192 on x, 0.2 steps on y.
  for (const char* tick : {">1024</text>", ">8192</text>", ">0.8</text>", ">0</text>"}) {
    EXPECT_NE(svg.find(tick), std::string::npos) << tick;
  }
  const size_t line = svg.find("<polyline points=\"");
  ASSERT_NE(line, std::string::npos) << svg;
  const std::string points = svg.substr(line + 18, svg.find('"', line + 18) - line - 18);
  EXPECT_EQ(std::count(points.begin(), points.end(), ','), 4) << points;
  for (const char* tip : {"<title>1024, 0.960</title>", "<title>8192, 0.700</title>"}) {
    EXPECT_NE(svg.find(tip), std::string::npos) << tip;
  }
  // x doubles: the points are evenly spaced on the log axis; y falls, so the pixels go down.
  double x[4], y[4];
  ASSERT_EQ(std::sscanf(points.c_str(), "%lf,%lf %lf,%lf %lf,%lf %lf,%lf", &x[0], &y[0], &x[1],
                        &y[1], &x[2], &y[2], &x[3], &y[3]),
            8);
  EXPECT_NEAR(x[1] - x[0], x[3] - x[2], 0.2);
  EXPECT_LT(y[0], y[3]);
  // The hole's series keeps its one point and its legend.
  EXPECT_NE(svg.find(">with a hole</text>"), std::string::npos);
}

TEST(SvgPlotTest, NoPointsStillMakesAWellFormedPlot) {
  const std::string svg = LinePlotSvg(PlotOptions{}, {PlotSeries{"empty", {}}});
  EXPECT_EQ(XmlProblem(svg), "") << svg;
  EXPECT_EQ(svg.find("<polyline"), std::string::npos);
}

// The pixel coordinates of every dot (<circle>) in `svg`, in order.
std::vector<std::pair<double, double>> Dots(const std::string& svg) {
  std::vector<std::pair<double, double>> out;
  for (size_t at = svg.find("<circle cx=\""); at != std::string::npos;
       at = svg.find("<circle cx=\"", at + 1)) {
    double x = 0, y = 0;
    if (std::sscanf(svg.c_str() + at, "<circle cx=\"%lf\" cy=\"%lf\"", &x, &y) == 2) {
      out.emplace_back(x, y);
    }
  }
  return out;
}

// MTTF against GPUs: both axes logarithmic, so that 1 / N is a straight line; the y ticks are
// whole decades, and points at or below 0 are left out rather than drawn at -infinity.
TEST(SvgPlotTest, LogLogAxesMakeAPowerLawStraight) {
  PlotOptions o;
  o.log_x = true;
  o.log_y = true;
  PlotSeries s{"MTTF", {}};
  for (const double gpus : {8.0, 64.0, 512.0, 4096.0, 32768.0})
    s.points.emplace_back(gpus, 3e4 / gpus);
  s.points.emplace_back(65536, 0);  // left out: no log of 0
  const std::string svg = LinePlotSvg(o, {s});
  EXPECT_EQ(XmlProblem(svg), "") << svg;
  EXPECT_EQ(SvgNonsense(svg), "") << svg;
  const auto dots = Dots(svg);
  ASSERT_EQ(dots.size(), 5u) << svg;
  // Equal steps on both axes: each point is as far from the last one, the same way.
  for (size_t i = 2; i < dots.size(); ++i) {
    EXPECT_NEAR(dots[i].first - dots[i - 1].first, dots[1].first - dots[0].first, 0.2);
    EXPECT_NEAR(dots[i].second - dots[i - 1].second, dots[1].second - dots[0].second, 0.2);
  }
  EXPECT_GT(dots[4].second, dots[0].second);  // falls: lower on the page
  // 3e4/32768 = 0.92 to 3750: decades from 0.1 to 10000.
  for (const char* tick : {">0.1</text>", ">1</text>", ">10</text>", ">10000</text>"}) {
    EXPECT_NE(svg.find(tick), std::string::npos) << tick;
  }
  EXPECT_EQ(svg.find(">20</text>"), std::string::npos);  // five decades: no 2s and 5s
}

TEST(SvgPlotTest, AFewDecadesGetTicksAtTwoAndFive) {
  PlotOptions o;
  o.log_y = true;
  const std::string svg = LinePlotSvg(o, {PlotSeries{"s", {{1, 3}, {2, 40}}}});
  for (const char* tick : {">1</text>", ">2</text>", ">5</text>", ">10</text>", ">50</text>"}) {
    EXPECT_NE(svg.find(tick), std::string::npos) << tick << svg;
  }
}

// An interval is a whisker through its point; one that leaves the plot is cut at the edge, and a
// non-finite one is not drawn.
TEST(SvgPlotTest, IntervalsAreWhiskersCutToThePlot) {
  PlotOptions o;
  o.height = 440;
  PlotSeries s{"rate", {{1, 5}, {2, 6}, {4, 7}}, {{4, 6}, {0, 1e6}, {NAN, 8}}};
  const std::string svg = LinePlotSvg(o, {s});
  EXPECT_EQ(XmlProblem(svg), "") << svg;
  EXPECT_EQ(SvgNonsense(svg), "") << svg;
  EXPECT_EQ(Occurrences(svg, "V"), 2u + 1u) << svg;  // two whiskers, and the axes' path
  // The second whisker (after the axes' path and the first) runs from the axis (y = 0) to the
  // top of the plot (56), not beyond.
  size_t second = svg.find("<path d=\"M");
  for (int k = 0; k < 2 && second != std::string::npos; ++k) {
    second = svg.find("<path d=\"M", second + 1);
  }
  ASSERT_NE(second, std::string::npos);
  double x = 0, top = 0, bottom = 0;
  ASSERT_EQ(std::sscanf(svg.c_str() + second, "<path d=\"M%lf %lfV%lf", &x, &top, &bottom), 3);
  EXPECT_DOUBLE_EQ(top, 56);
  EXPECT_DOUBLE_EQ(bottom, 440 - 55);
}

// Bars side by side: one per series and category, as high as its value says, NaN and negative
// values left out; the categories' labels under them and the series in the legend.
TEST(SvgPlotTest, GroupedBarsStandOnTheAxis) {
  PlotOptions o;
  o.title = "failed against expected";
  BarChart chart;
  chart.categories = {"node-a", "node-b", "node<c>"};
  chart.series = {{"failed", {10, 4, NAN}}, {"expected", {2, -1, 1}}};
  const std::string svg = SvgDocument({BarPlot(o, chart)});
  EXPECT_EQ(XmlProblem(svg), "") << svg;
  EXPECT_EQ(SvgNonsense(svg), "") << svg;
  EXPECT_EQ(Occurrences(svg, "<rect x="), 4u + 2u) << svg;  // 4 bars, 2 legend boxes
  for (const char* text : {">node-a</text>", ">node&lt;c&gt;</text>", ">failed</text>",
                           ">expected</text>", "<title>node-a, failed: 10</title>"}) {
    EXPECT_NE(svg.find(text), std::string::npos) << text;
  }
  // node-a's "failed" bar is 5 times as high as its "expected" one, both from the axis.
  double x1, y1, w1, h1, x2, y2, w2, h2;
  const size_t first = svg.find("<rect x=\"", svg.find("</text>\n<text transform"));
  ASSERT_EQ(
      std::sscanf(svg.c_str() + svg.find("<rect x=\"", first),
                  "<rect x=\"%lf\" y=\"%lf\" width=\"%lf\" height=\"%lf\"", &x1, &y1, &w1, &h1),
      4);
  const size_t next = svg.find("<rect x=\"", svg.find("<rect x=\"", first) + 1);
  ASSERT_EQ(
      std::sscanf(svg.c_str() + next, "<rect x=\"%lf\" y=\"%lf\" width=\"%lf\" height=\"%lf\"", &x2,
                  &y2, &w2, &h2),
      4);
  EXPECT_NEAR(h1, 5 * h2, 0.2);
  EXPECT_NEAR(y1 + h1, y2 + h2, 0.1);
  EXPECT_NEAR(x2, x1 + w1, 0.1);
}

// Stacked: one bar per category whose parts add up, the axis reaching the highest sum.
TEST(SvgPlotTest, StackedBarsAddUp) {
  PlotOptions o;
  BarChart chart;
  chart.categories = {"mean run"};
  chart.series = {{"productive", {600}}, {"recompute", {80}}, {"restart", {40}}};
  chart.stacked = true;
  const std::string svg = SvgDocument({BarPlot(o, chart)});
  EXPECT_EQ(XmlProblem(svg), "") << svg;
  std::vector<double> tops, bottoms;
  for (size_t at = svg.find("\"><title>mean run"); at != std::string::npos;
       at = svg.find("\"><title>mean run", at + 1)) {
    const size_t rect = svg.rfind("<rect x=\"", at);
    double x, y, w, h;
    ASSERT_EQ(std::sscanf(svg.c_str() + rect,
                          "<rect x=\"%lf\" y=\"%lf\" width=\"%lf\" height=\"%lf\"", &x, &y, &w, &h),
              4);
    EXPECT_LE(w, 120.1);
    tops.push_back(y);
    bottoms.push_back(y + h);
  }
  ASSERT_EQ(tops.size(), 3u) << svg;
  EXPECT_NEAR(bottoms[1], tops[0], 0.15);  // each part sits on the one before (pixels to 0.1)
  EXPECT_NEAR(bottoms[2], tops[1], 0.15);
  EXPECT_NE(svg.find(">800</text>"), std::string::npos) << svg;  // the axis covers 720
}

// Panels one under another: the document as high as both, each panel moved below the last.
TEST(SvgPlotTest, PanelsStackInOneDocument) {
  PlotOptions a, b;
  b.height = 300;
  const std::string svg = SvgDocument(
      {LinePlot(a, {PlotSeries{"x", {{1, 1}}}}), BarPlot(b, BarChart{{"c"}, {{"v", {1}}}, false})});
  EXPECT_EQ(XmlProblem(svg), "") << svg;
  EXPECT_NE(svg.find("height=\"740\" viewBox=\"0 0 720 740\""), std::string::npos) << svg;
  EXPECT_NE(svg.find("<g transform=\"translate(0 0)\">"), std::string::npos);
  EXPECT_NE(svg.find("<g transform=\"translate(0 440)\">"), std::string::npos);
  EXPECT_EQ(XmlProblem(SvgDocument({BarPlot(b, BarChart{})})), "");  // nothing to draw
}

// A wider legend narrows the plot area: the axes end that far from the right edge.
TEST(SvgPlotTest, TheLegendTakesItsWidth) {
  PlotOptions o;
  o.width = 760;
  o.legend_width = 230;
  const std::string svg = LinePlotSvg(o, {PlotSeries{"a long legend entry", {{1, 1}}}});
  EXPECT_NE(svg.find("H530.0\""), std::string::npos) << svg;  // the x axis ends at 760 - 230
  EXPECT_NE(svg.find("<text x=\"570.0\""), std::string::npos) << svg;  // the legend's text
}

}  // namespace
}  // namespace vigil
