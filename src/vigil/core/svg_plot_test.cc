#include "vigil/core/svg_plot.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace vigil {
namespace {

// Checks that `xml` is well-formed for what LinePlotSvg writes: one root element, every tag
// closed in order, attribute values quoted, no '<' or bare '&' in text or values. "" when it is,
// else what is wrong and where.
std::string NotWellFormed(const std::string& xml) {
  std::vector<std::string> open;
  size_t i = 0, roots = 0;
  const auto bad_text = [&](size_t from, size_t to) {
    for (size_t k = from; k < to; ++k) {
      if (xml[k] == '<') return true;
      if (xml[k] == '&') {
        const size_t semi = xml.find(';', k);
        if (semi == std::string::npos || semi > to) return true;
        const std::string entity = xml.substr(k, semi - k + 1);
        if (entity != "&amp;" && entity != "&lt;" && entity != "&gt;" && entity != "&quot;" &&
            entity != "&#39;" && entity != "&apos;") {
          return true;
        }
      }
    }
    return false;
  };
  if (xml.rfind("<?xml", 0) == 0) i = xml.find("?>") + 2;
  while (i < xml.size()) {
    const size_t lt = xml.find('<', i);
    if (lt == std::string::npos) {
      if (bad_text(i, xml.size())) return "text after the root";
      break;
    }
    if (bad_text(i, lt)) return "bad text at " + std::to_string(i);
    const size_t gt = xml.find('>', lt);
    if (gt == std::string::npos) return "unclosed tag at " + std::to_string(lt);
    std::string tag = xml.substr(lt + 1, gt - lt - 1);
    if (size_t quotes = std::count(tag.begin(), tag.end(), '"'); quotes % 2 != 0) {
      return "unbalanced quotes in <" + tag + ">";
    }
    if (tag.starts_with("/")) {
      if (open.empty() || open.back() != tag.substr(1)) return "</" + tag + "> closes nothing";
      open.pop_back();
    } else {
      const bool empty = tag.ends_with("/");
      const std::string name = tag.substr(0, tag.find_first_of(" /"));
      if (open.empty() && ++roots > 1) return "two roots";
      if (!empty) open.push_back(name);
    }
    i = gt + 1;
  }
  return open.empty() ? "" : "<" + open.back() + "> never closed";
}

TEST(SvgPlotTest, TheCheckerCatchesWhatIsNotWellFormed) {
  EXPECT_EQ(NotWellFormed("<a><b/></a>"), "");
  EXPECT_NE(NotWellFormed("<a><b></a>"), "");
  EXPECT_NE(NotWellFormed("<a>x & y</a>"), "");
  EXPECT_NE(NotWellFormed("<a t=\"1></a>"), "");
  EXPECT_NE(NotWellFormed("<a/><b/>"), "");
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
  EXPECT_EQ(NotWellFormed(svg), "") << svg;
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
  EXPECT_EQ(NotWellFormed(svg), "") << svg;
  EXPECT_EQ(svg.find("<polyline"), std::string::npos);
}

}  // namespace
}  // namespace vigil
