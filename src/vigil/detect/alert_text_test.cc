#include "vigil/detect/alert_text.h"

#include <gtest/gtest.h>

namespace vigil::detect {
namespace {

TEST(AlertTextTest, DivergenceNamesValuePeersAndDeviation) {
  Alert a;
  a.machine = "node-07";
  a.kind = AlertKind::kDivergence;
  a.rule = "slow";
  a.component = "gpu3";
  a.onset = 1700000000;
  a.detected = 1700000042;
  a.evidence = {
      {.signal = "power",
       .stat = "mean",
       .value = 123.44,
       .peer_median = 301.5,
       .deviation = -7.26},
      {.signal = "sm_util", .stat = "min", .value = 4.56789, .peer_median = 90, .deviation = 3.04}};
  EXPECT_EQ(AlertLine(a),
            "ALERT node-07 divergence slow gpu3 onset 2023-11-14T22:13:20.000Z detected "
            "2023-11-14T22:14:02.000Z (+42 s): power mean 123.4 vs 301.5 (-7.3 sd), sm_util min "
            "4.568 vs 90 (+3.0 sd)");
}

TEST(AlertTextTest, EvidenceAgainstAMachinesOwnPastSaysSo) {
  Alert a;
  a.machine = "node-07";
  a.kind = AlertKind::kDivergence;
  a.rule = "peers";
  a.onset = a.detected = 0;
  a.evidence = {{.signal = "step_time",
                 .stat = "mean",
                 .value = 2.6,
                 .peer_median = 2,
                 .deviation = 9.46,
                 .effect = 0.3,
                 .reference = "own_past"}};
  EXPECT_EQ(AlertLine(a),
            "ALERT node-07 divergence peers onset 1970-01-01T00:00:00.000Z detected "
            "1970-01-01T00:00:00.000Z (+0 s): step_time mean 2.600 vs 2 (its own past, +9.5 sd)");
}

// A job-level stall that names the machine differing from its stalled peers shows how.
TEST(AlertTextTest, AStallsMachineIsShownAgainstItsStalledPeers) {
  Alert a;
  a.machine = "node-12";
  a.kind = AlertKind::kJob;
  a.rule = "stall";
  a.onset = 0;
  a.detected = 300;
  a.evidence = {{.signal = "gpu_power",
                 .stat = "mean",
                 .value = 193.4,
                 .peer_median = 159.5,
                 .deviation = 8.04,
                 .effect = 0.2,
                 .reference = "peers"}};
  EXPECT_EQ(AlertLine(a),
            "ALERT node-12 job stall onset 1970-01-01T00:00:00.000Z detected "
            "1970-01-01T00:05:00.000Z (+300 s): gpu_power mean 193.4 vs 159.5 (+8.0 sd)");
}

// A shared deviation lists each machine (`stat`) against what its peers make expected.
TEST(AlertTextTest, ASharedDeviationShowsEachMachineAgainstItsPeers) {
  Alert a;
  a.machine = "*";
  a.kind = AlertKind::kJob;
  a.rule = "shared";
  a.onset = a.detected = 0;
  a.evidence = {{.signal = "nvlink_tx_bytes mean",
                 .stat = "node-14",
                 .value = 1.1e10,
                 .peer_median = 2.97e10,
                 .deviation = -4.84,
                 .effect = -0.61,
                 .reference = "peers"}};
  EXPECT_EQ(AlertLine(a),
            "ALERT * job shared onset 1970-01-01T00:00:00.000Z detected "
            "1970-01-01T00:00:00.000Z (+0 s): nvlink_tx_bytes mean node-14 1.1e+10 vs 2.97e+10 "
            "(-4.8 sd)");
}

TEST(AlertTextTest, RuleEvidenceIsAValueAndAMachineWideAlertHasNoComponent) {
  Alert a;
  a.machine = "node-01";
  a.kind = AlertKind::kRule;
  a.rule = "xid 79";
  a.onset = a.detected = 0;
  a.evidence = {{.signal = "xid", .stat = "gpu0", .value = 79}};
  EXPECT_EQ(AlertLine(a),
            "ALERT node-01 rule xid 79 onset 1970-01-01T00:00:00.000Z detected "
            "1970-01-01T00:00:00.000Z (+0 s): xid = 79");
}

}  // namespace
}  // namespace vigil::detect
