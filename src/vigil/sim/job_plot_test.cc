#include "vigil/sim/job_plot.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "vigil/testing/svg_check.h"

namespace vigil::sim {
namespace {

using testing::Occurrences;
using testing::SvgNonsense;
using testing::XmlProblem;

// The heights of the stacked bar's parts in pixels, in order.
std::vector<double> PartHeights(const std::string& svg) {
  std::vector<double> out;
  for (size_t at = svg.find("<rect x=\""); at != std::string::npos;
       at = svg.find("<rect x=\"", at + 1)) {
    double x, y, w, h;
    if (std::sscanf(svg.c_str() + at, "<rect x=\"%lf\" y=\"%lf\" width=\"%lf\" height=\"%lf\"", &x,
                    &y, &w, &h) == 4 &&
        svg.compare(svg.find('>', at), 8, "><title>") == 0) {
      out.push_back(h);
    }
  }
  return out;
}

// A 30-day job on 1,024 nodes: its parts, in hours, add up to the run's 720 h, each drawn as tall
// as its share and named with its share and hours in the legend.
TEST(JobTimePlotTest, ThePartsOfTheRunAddUpInHours) {
  JobSimOptions o;
  o.runs = 200;
  const auto r = SimulateJob(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const std::string svg = JobTimePlot(o, *r);
  EXPECT_EQ(XmlProblem(svg), "") << svg;
  EXPECT_EQ(SvgNonsense(svg), "") << svg;
  const std::vector<double> heights = PartHeights(svg);
  ASSERT_EQ(heights.size(), 5u) << svg;  // queue is 0 without --queue: not drawn
  double total = 0;
  for (const double h : heights) total += h;
  const double productive = r->mean_fraction.productive;
  EXPECT_NEAR(heights[0] / total, productive, 0.002);
  for (const std::string& text :
       {std::string(">hours of the run</text>"), std::string(">mean of 200 runs</text>"),
        fmt::format(">productive {:.1f}%, ", 100 * productive),
        std::string(">queue 0.0%, 0 h</text>"),
        std::string("30 d on 1024 nodes, 6.500 failures per 1000 node-days: ETTR mean "),
        std::string(">800</text>")}) {
    EXPECT_NE(svg.find(text), std::string::npos) << text << svg;
  }
  EXPECT_EQ(Occurrences(svg, "<title>mean of 200 runs, "), 5u);
}

// A result with nonsense in it (as a bug elsewhere might give) draws no NaN or negative bar.
TEST(JobTimePlotTest, NonsenseIsNotDrawn) {
  JobSimOptions o;
  JobSimResult r;
  r.mean = NAN;
  r.mean_fraction = {.productive = 0.9, .recompute = -0.1, .detect = NAN};
  const std::string svg = JobTimePlot(o, r);
  EXPECT_EQ(XmlProblem(svg), "") << svg;
  EXPECT_EQ(SvgNonsense(svg), "") << svg;
  EXPECT_EQ(PartHeights(svg).size(), 1u);
}

}  // namespace
}  // namespace vigil::sim
