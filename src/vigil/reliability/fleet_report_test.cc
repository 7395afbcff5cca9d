#include "vigil/reliability/fleet_report.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "vigil/testing/temp_dir.h"

namespace vigil::reliability {
namespace {

const char kLog[] =
    "JobID|State|NNodes|AllocTRES|Start|End|NodeList|ExitCode\n"
    "1|COMPLETED|2|gres/gpu=16|2026-01-01T00:00:00|2026-01-02T00:00:00|n[1-2]|0:0\n"
    "2|NODE_FAIL|1|gres/gpu=8|2026-01-01T00:00:00|2026-01-02T00:00:00|n3|0:0\n"
    "3|FAILED|1|gres/gpu=8|2026-01-01T00:00:00|2026-01-02T00:00:00|n4|0:0\n"
    "broken\n";
const char kEvents[] =
    "timestamp,node,kind,detail\n"
    "2026-01-01T23:55:00,n4,xid,79\n"
    "soon,n4,xid,79\n";

class FleetReportTest : public ::testing::Test {
 protected:
  FleetReportTest() {
    dir_.Write("log.sacct", kLog);
    dir_.Write("events.csv", kEvents);
    dir_.Write("truth.csv", "node,kind\nn3,lemon\nn9,lemon\n");
  }
  // The log, events and truth above, read leniently and scored.
  FleetReport Scored() {
    const FleetFiles files{.sacct = dir_.File("log.sacct"),
                           .events = dir_.File("events.csv"),
                           .truth = dir_.File("truth.csv"),
                           .lenient = true};
    Result<FleetReport> r = AnalyzeFleetFiles(files, {});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *std::move(r) : FleetReport{};
  }
  vigil::testing::TempDir dir_;
};

TEST_F(FleetReportTest, ReadsComputesAndScores) {
  const FleetReport r = Scored();
  EXPECT_EQ(r.stats.jobs_finished, 3);
  EXPECT_EQ(r.stats.infra_by_state, 1);
  EXPECT_EQ(r.stats.infra_by_event, 1);
  EXPECT_EQ(r.sacct_skipped.count, 1);
  EXPECT_FALSE(r.sacct_skipped.first.empty());
  EXPECT_EQ(r.events_skipped.count, 1);
  ASSERT_TRUE(r.score.has_value());
  EXPECT_EQ(r.planted, 2u);
  EXPECT_EQ(r.score->false_negatives + r.score->true_positives, 2);
}

TEST_F(FleetReportTest, JsonHoldsTheStatisticsAndTheScore) {
  const FleetReport r = Scored();
  const Json j = FleetReportJson(r);
  EXPECT_EQ(j["jobs_finished"], 3);
  EXPECT_EQ(j["infra_failures"]["total"], r.stats.infra_failures);
  EXPECT_EQ(j["infra_failures"]["by_event"], 1);
  EXPECT_EQ(j["states"].size(), r.stats.states.size());
  EXPECT_EQ(j["lemons"].size(), r.stats.lemons.size());
  EXPECT_EQ(
      j["score"]["true_positives"].get<int64_t>() + j["score"]["false_negatives"].get<int64_t>(),
      2);
  FleetReport unscored = r;
  unscored.score.reset();
  EXPECT_FALSE(FleetReportJson(unscored).contains("score"));
}

TEST_F(FleetReportTest, WithoutEventsOrTruthThereIsNoScore) {
  const Result<FleetReport> r = AnalyzeFleetFiles(
      {.sacct = dir_.File("log.sacct"), .events = "", .truth = "", .lenient = true}, {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->stats.infra_by_event, 0);
  EXPECT_FALSE(r->score.has_value());
  EXPECT_EQ(r->events_skipped.count, 0);
}

TEST_F(FleetReportTest, OptionsAreCheckedFirstAndBrokenLinesFailUnlessLenient) {
  FleetStatsOptions bad;
  bad.fdr = 0;
  EXPECT_EQ(AnalyzeFleetFiles({.sacct = dir_.File("none.sacct"), .events = "", .truth = ""}, bad)
                .status()
                .message(),
            "--fdr must be in (0, 1)");
  EXPECT_EQ(AnalyzeFleetFiles({.sacct = dir_.File("log.sacct"), .events = "", .truth = ""}, {})
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_FALSE(
      AnalyzeFleetFiles({.sacct = dir_.File("none.sacct"), .events = "", .truth = ""}, {}).ok());
}

}  // namespace
}  // namespace vigil::reliability
