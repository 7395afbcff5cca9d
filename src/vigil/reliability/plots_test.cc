#include "vigil/reliability/plots.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "vigil/core/duration.h"
#include "vigil/testing/svg_check.h"

namespace vigil::reliability {
namespace {

using testing::Occurrences;
using testing::SvgNonsense;
using testing::XmlProblem;

void ExpectSoundSvg(const std::string& svg) {
  EXPECT_EQ(XmlProblem(svg), "") << svg;
  EXPECT_EQ(SvgNonsense(svg), "") << svg;
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
}

// Meta's projection (1.8 h at 16,384 GPUs, 0.23 h at 131,072) is on the plot, in hours, on log
// axes labelled with their units.
TEST(MttfPlotTest, DrawsEverySizeInHoursOnLogAxes) {
  const auto rows = MttfBySize({8, 512, 16384, 131072}, 8, 6.5);
  ASSERT_TRUE(rows.ok());
  const std::string svg = MttfPlot(*rows, 8, 6.5);
  ExpectSoundSvg(svg);
  EXPECT_EQ(Occurrences(svg, "<circle"), 4u);
  for (const char* text :
       {"<title>16384, 1.803</title>", "<title>131072, 0.225</title>", "<title>8, 3692</title>",
        ">MTTF (hours, log scale)</text>", ">GPUs in the job (log scale)</text>",
        "r_f = 6.500 failures per 1000 node-days, 8 GPUs per node", ">0.1</text>", ">1000</text>",
        ">131072</text>"}) {
    EXPECT_NE(svg.find(text), std::string::npos) << text;
  }
}

FleetStats TwoClassesAndLemons(size_t lemons) {
  FleetStats s;
  s.rate = {
      .failures = 30, .node_days = 3000, .per_1000_node_days = 10, .lower = 6.7, .upper = 14.3};
  SizeClassRow one{.min_nodes = 1, .max_nodes = 1, .jobs = 500, .infra_failures = 10};
  one.rate = {
      .failures = 10, .node_days = 2000, .per_1000_node_days = 5, .lower = 2.4, .upper = 9.2};
  SizeClassRow big{.min_nodes = 64, .max_nodes = 127, .jobs = 5, .infra_failures = 20};
  big.rate = {
      .failures = 20, .node_days = 1000, .per_1000_node_days = 20, .lower = 12, .upper = 31};
  s.size_classes = {one, big};
  for (size_t i = 0; i < lemons; ++i) {
    LemonNode l;
    l.node = "node-" + std::to_string(i);
    l.event_failures = 6;
    l.single_failures = 1;
    l.expected_event_failures = 0.5;
    l.expected_single_failures = 0.25;
    s.lemons.push_back(l);
  }
  return s;
}

// The rate panel: each class at its smallest size with its interval, the fleet's level line; the
// lemon panel: a pair of bars per lemon, as high as their figures.
TEST(FleetStatsPlotTest, RatesBySizeAndLemonsAgainstExpectation) {
  const std::string svg = FleetStatsPlot(TwoClassesAndLemons(3), 0.95, 0.05);
  ExpectSoundSvg(svg);
  for (const char* text :
       {"<title>1, 5</title>", "<title>64, 20</title>", ">fleet: 10</text>",
        ">failures per 1000 node-days</text>", "30 failures over 3000 node-days; intervals at 95%",
        "Lemon nodes: 3 at FDR 0.05", "<title>node-2, failed jobs: 7</title>",
        "<title>node-2, expected of it: 0.750</title>", ">failed jobs</text>"}) {
    EXPECT_NE(svg.find(text), std::string::npos) << text;
  }
  EXPECT_EQ(Occurrences(svg, "<circle"), 4u);       // 2 classes, the fleet line's 2 ends
  EXPECT_EQ(Occurrences(svg, "<rect x="), 8u);      // 3 pairs of bars, 2 legend boxes
  EXPECT_EQ(Occurrences(svg, "<g transform"), 2u);  // two panels
}

// Many lemons: the most significant kMaxPlottedLemons are drawn and the subtitle says so; none:
// the panel says so and draws no bar.
TEST(FleetStatsPlotTest, ManyLemonsAreCutAndNoneIsSaid) {
  std::string svg = FleetStatsPlot(TwoClassesAndLemons(kMaxPlottedLemons + 5), 0.9, 0.1);
  ExpectSoundSvg(svg);
  EXPECT_EQ(Occurrences(svg, ", failed jobs: "), kMaxPlottedLemons);
  EXPECT_NE(svg.find("the 24 most significant"), std::string::npos);
  EXPECT_NE(svg.find("intervals at 90%"), std::string::npos);
  svg = FleetStatsPlot(TwoClassesAndLemons(0), 0.95, 0.05);
  ExpectSoundSvg(svg);
  EXPECT_NE(svg.find("Lemon nodes: none at FDR 0.05"), std::string::npos);
  EXPECT_EQ(Occurrences(svg, "<rect x="), 2u);  // the legend only
}

// A log without finished jobs has no rate (NaN) and no classes: still a sound picture.
TEST(FleetStatsPlotTest, AnEmptyLogDrawsEmptyPanels) {
  FleetStats empty;
  empty.rate.per_1000_node_days = NAN;
  const std::string svg = FleetStatsPlot(empty, 0.95, 0.05);
  ExpectSoundSvg(svg);
  EXPECT_EQ(Occurrences(svg, "<circle"), 0u);
  EXPECT_NE(svg.find(">fleet: -</text>"), std::string::npos);
}

}  // namespace
}  // namespace vigil::reliability
