#include "vigil/detect/evaluate.h"

#include <gtest/gtest.h>

#include "vigil/core/stats.h"

namespace vigil::detect {
namespace {

Alert At(std::string machine, double detected) {
  Alert a;
  a.machine = std::move(machine);
  a.kind = AlertKind::kDivergence;
  a.rule = "peers";
  a.detected = detected;
  return a;
}

TEST(LabelsTest, ParsesAndRejects) {
  Result<std::vector<FaultLabel>> l =
      ParseLabels("kind,machine,onset,end\nhang,n1,100,\nnic_down,n2,50.5,80\n", "l.csv");
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  ASSERT_EQ(l->size(), 2u);
  EXPECT_EQ((*l)[0].machine, "n1");
  EXPECT_EQ((*l)[0].end, 0);
  EXPECT_DOUBLE_EQ((*l)[1].onset, 50.5);
  EXPECT_DOUBLE_EQ((*l)[1].end, 80);
  EXPECT_EQ(ParseLabels("machine,onset,kind\nn1,x,hang\n", "l.csv").status().message(),
            "l.csv:2: onset: \"x\" is not a time in Unix seconds");
  EXPECT_EQ(ParseLabels("machine,onset,kind,end\nn1,10,hang,5\n", "l.csv").status().message(),
            "l.csv:2: end: \"5\" is not a time at or after the onset");
  EXPECT_EQ(ParseLabels("machine,onset\n", "l.csv").status().message(),
            "l.csv:1: header: no kind column");
  EXPECT_EQ(ParseLabels("machine,onset,kind\n,1,hang\n", "l.csv").status().message(),
            "l.csv:2: machine: empty");
}

TEST(ScoreTest, PrecisionRecallAndLatency) {
  const std::vector<FaultLabel> labels = {
      {"n1", 100, "hang", 0}, {"n2", 200, "straggler", 300}, {"n3", 50, "hang", 0}};
  const std::vector<Alert> alerts = {
      At("n1", 112),   // true, 12 s
      At("n1", 130),   // a second true alert on the same fault
      At("n2", 150),   // before the onset: false
      At("n2", 350),   // after the end: false
      At("n9", 10),    // a healthy machine: false
      At("n3", 49.5),  // inside the slack of one step: true
  };
  const Score s = ScoreAlerts(alerts, labels);
  EXPECT_EQ(s.alerts, 6);
  EXPECT_EQ(s.true_alerts, 3);
  EXPECT_EQ(s.detected, 2);
  EXPECT_DOUBLE_EQ(s.precision(), 0.5);
  EXPECT_DOUBLE_EQ(s.recall(), 2.0 / 3);
  EXPECT_EQ(s.by_kind.at("hang").detected, 2);
  EXPECT_EQ(s.by_kind.at("straggler").detected, 0);
  EXPECT_EQ(s.false_by_rule.at("divergence/peers"), 3);
  EXPECT_DOUBLE_EQ(stats::Median(s.by_kind.at("hang").latencies), 6);
  const Json j = ScoreToJson(s);
  EXPECT_EQ(j["detected"], 2);
  EXPECT_TRUE(j["by_kind"]["straggler"]["latency"].is_null());
}

TEST(ScoreTest, NothingToFindAndNothingFound) {
  const Score s = ScoreAlerts({}, {});
  EXPECT_DOUBLE_EQ(s.precision(), 1);
  EXPECT_DOUBLE_EQ(s.recall(), 1);
  EXPECT_DOUBLE_EQ(s.f1(), 1);
}

TEST(LabelsTest, TimesOutsideTheUnixRangeAreRefused) {
  EXPECT_EQ(ParseLabels("machine,onset,kind\nn1,9.2e18,hang\n", "l.csv").status().message(),
            "l.csv:2: onset: 9.2e18 is outside [0, 7258118400] (Unix seconds, years 1970 to 2200)");
  EXPECT_EQ(ParseLabels("machine,onset,kind,end\nn1,1,hang,1e19\n", "l.csv").status().message(),
            "l.csv:2: end: 1e19 is outside [0, 7258118400] (Unix seconds, years 1970 to 2200)");
}

}  // namespace
}  // namespace vigil::detect
