#include "vigil/reliability/fleet_stats.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

#include "vigil/core/clock.h"
#include "vigil/core/duration.h"

namespace vigil::reliability {
namespace {

constexpr int64_t kT0 = 1767225600;  // 2026-01-01T00:00:00

// Appends one sacct line for a job on `nodes` from kT0 + start_h to kT0 + end_h.
void AddJob(std::string& text, int id, std::string_view state, int nnodes, std::string_view nodes,
            double start_h, double end_h, int gpus_per_node = 8) {
  fmt::format_to(std::back_inserter(text), "{}|{}|{}|gres/gpu={}|{}|{}|{}|0:0\n", id, state, nnodes,
                 nnodes * gpus_per_node,
                 FormatIsoSeconds(kT0 + static_cast<int64_t>(start_h * 3600)),
                 FormatIsoSeconds(kT0 + static_cast<int64_t>(end_h * 3600)), nodes);
}

SacctLog ParseOrDie(const std::string& text) {
  auto log = ParseSacct(text, "t.sacct", {});
  EXPECT_TRUE(log.ok()) << log.status().message();
  return std::move(log).value();
}

const std::string kHeader = "JobID|State|NNodes|AllocTRES|Start|End|NodeList|ExitCode\n";

TEST(FleetStatsTest, OutcomesRateAttributionAndProjection) {
  std::string text = kHeader;
  AddJob(text, 1, "COMPLETED", 2, "n[1-2]", 0, 24);  // 2 node-days
  AddJob(text, 2, "NODE_FAIL", 1, "n3", 0, 24);      // infrastructure by state
  AddJob(text, 3, "FAILED", 1, "n4", 0, 24);         // infrastructure by an event
  AddJob(text, 4, "FAILED", 1, "n5", 0, 24);         // the user's: no event
  text += "6|RUNNING|1|gres/gpu=8|2026-01-01T00:00:00|Unknown|n6|0:0\n";
  const SacctLog log = ParseOrDie(text);
  const std::vector<NodeEvent> events = {
      {kT0 + 24 * 3600 - 300, "n4", "xid", "79"},  // 5 min before job 3 ended
      {kT0 + 12 * 3600, "n5", "xid", "13"},        // long before job 4 ended
      {kT0, "elsewhere", "xid", ""},
  };
  const FleetStats s = *ComputeFleetStats(log, events, FleetStatsOptions{});
  EXPECT_EQ(s.jobs_finished, 4);
  EXPECT_EQ(s.jobs_unfinished, 1);
  EXPECT_EQ(s.gpus_per_node, 8);
  ASSERT_EQ(s.states.size(), 3u);
  EXPECT_EQ(s.states[0].state, JobState::kFailed);
  EXPECT_EQ(s.states[0].jobs, 2);
  EXPECT_DOUBLE_EQ(s.gpu_hours, 8 * 24 * 5);
  EXPECT_EQ(s.infra_by_state, 1);
  EXPECT_EQ(s.infra_by_event, 1);
  EXPECT_EQ(s.events_unmatched, 1);
  EXPECT_DOUBLE_EQ(s.rate.node_days, 5);
  EXPECT_NEAR(s.rate.per_1000_node_days, 2000.0 / 5, 1e-9);
  // The exact 95% Poisson interval for 2 events is [0.2422, 7.2247].
  EXPECT_NEAR(s.rate.lower, 0.24221 * 1000 / 5, 0.01);
  EXPECT_NEAR(s.rate.upper, 7.22469 * 1000 / 5, 0.01);
  ASSERT_FALSE(s.projections.empty());
  EXPECT_EQ(s.projections[0].gpus, 8);
  EXPECT_NEAR(s.projections[0].mttf_s, kSecondsPerDay * 5 / 2, 1e-6);
  EXPECT_LT(s.projections[0].lower_s, s.projections[0].mttf_s);
  EXPECT_GT(s.projections[0].upper_s, s.projections[0].mttf_s);
  ASSERT_EQ(s.size_classes.size(), 2u);  // 1 node, and 2-3 nodes
  EXPECT_EQ(s.size_classes[0].jobs, 3);
  EXPECT_EQ(s.size_classes[0].infra_failures, 2);
  EXPECT_NEAR(s.size_classes[0].observed_mttf_s, 1.5 * kSecondsPerDay, 1e-6);
  EXPECT_TRUE(std::isnan(s.size_classes[1].observed_mttf_s));
  // Each class's own rate: 2 failures in 3 node-days of single-node jobs, none in the 2 node-days
  // of the two-node job (its interval then starts at 0).
  EXPECT_EQ(s.size_classes[0].rate.failures, 2);
  EXPECT_DOUBLE_EQ(s.size_classes[0].rate.node_days, 3);
  EXPECT_NEAR(s.size_classes[0].rate.per_1000_node_days, 2000.0 / 3, 1e-9);
  EXPECT_NEAR(s.size_classes[0].rate.upper, 7.22469 * 1000 / 3, 0.01);
  EXPECT_DOUBLE_EQ(s.size_classes[1].rate.node_days, 2);
  EXPECT_DOUBLE_EQ(s.size_classes[1].rate.per_1000_node_days, 0);
  EXPECT_DOUBLE_EQ(s.size_classes[1].rate.lower, 0);
  EXPECT_NEAR(s.size_classes[1].rate.upper, 3.68888 * 1000 / 2, 0.01);
}

TEST(FleetStatsTest, AttributionWindowIsConfigurable) {
  std::string text = kHeader;
  AddJob(text, 1, "FAILED", 1, "n1", 0, 24);
  const SacctLog log = ParseOrDie(text);
  const std::vector<NodeEvent> events = {{kT0 + 23 * 3600, "n1", "health_check", ""}};
  FleetStatsOptions options;
  EXPECT_EQ(ComputeFleetStats(log, events, options)->infra_failures, 0);
  options.attribution_window_s = 2 * kSecondsPerHour;
  EXPECT_EQ(ComputeFleetStats(log, events, options)->infra_failures, 1);
}

TEST(FleetStatsTest, FindsTheLemonAndOnlyIt) {
  // 40 nodes, each running 40 one-hour single-node jobs; one job in 20 fails on a healthy node,
  // and half of them on n07.
  std::string text = kHeader;
  int id = 0;
  for (int node = 1; node <= 40; ++node) {
    for (int k = 0; k < 40; ++k) {
      const bool fails = node == 7 ? k % 2 == 0 : (k + node) % 20 == 0;
      AddJob(text, ++id, fails ? "FAILED" : "COMPLETED", 1, fmt::format("n{:02}", node), k, k + 1);
    }
  }
  const FleetStats s = *ComputeFleetStats(ParseOrDie(text), {}, FleetStatsOptions{});
  ASSERT_EQ(s.lemons.size(), 1u);
  EXPECT_EQ(s.lemons[0].node, "n07");
  EXPECT_EQ(s.lemons[0].jobs, 40);
  EXPECT_EQ(s.lemons[0].failed_jobs, 20);
  EXPECT_LT(s.lemons[0].q_value, 0.05);
  EXPECT_EQ(s.lemons[0].single_failures, 20);
  EXPECT_EQ(s.lemons[0].event_failures, 0);
  EXPECT_GT(s.lemons[0].expected_single_failures, 1);
  EXPECT_LT(s.lemons[0].expected_single_failures, 4);
  EXPECT_EQ(s.nodes, 40);
}

TEST(FleetStatsTest, NoLemonsInAHomogeneousFleet) {
  std::string text = kHeader;
  int id = 0;
  for (int node = 1; node <= 40; ++node) {
    for (int k = 0; k < 40; ++k) {
      AddJob(text, ++id, (k + node) % 10 == 0 ? "FAILED" : "COMPLETED", 1,
             fmt::format("n{:02}", node), k, k + 1);
    }
  }
  EXPECT_TRUE(ComputeFleetStats(ParseOrDie(text), {}, FleetStatsOptions{})->lemons.empty());
}

TEST(FleetStatsTest, EmptyLogAndBadOptions) {
  const FleetStats s = *ComputeFleetStats(ParseOrDie(kHeader), {}, FleetStatsOptions{});
  EXPECT_EQ(s.jobs_finished, 0);
  EXPECT_TRUE(std::isnan(s.rate.per_1000_node_days));
  EXPECT_TRUE(s.projections.empty());
  FleetStatsOptions bad;
  bad.fdr = 0;
  EXPECT_FALSE(ComputeFleetStats(ParseOrDie(kHeader), {}, bad).ok());
  bad = FleetStatsOptions();
  bad.projection_gpus = {0};
  EXPECT_FALSE(Validate(bad).ok());
}

TEST(FleetStatsTest, EachRejectedOptionIsNamedByItsFlag) {
  const struct {
    void (*set)(FleetStatsOptions&);
    const char* message;
  } cases[] = {
      {[](FleetStatsOptions& o) { o.attribution_window_s = -1; }, "--window must be zero or more"},
      {[](FleetStatsOptions& o) { o.fdr = 1; }, "--fdr must be in (0, 1)"},
      {[](FleetStatsOptions& o) { o.confidence = 0; }, "--confidence must be in (0, 1)"},
      {[](FleetStatsOptions& o) { o.gpus_per_node = -1; }, "--gpus-per-node must be zero or more"},
      {[](FleetStatsOptions& o) {
         o.projection_gpus = {8, -1};
       },
       "projection sizes must be positive GPU counts"},
  };
  for (const auto& c : cases) {
    FleetStatsOptions o;
    c.set(o);
    EXPECT_EQ(Validate(o).message(), c.message);
    EXPECT_EQ(ComputeFleetStats(ParseOrDie(kHeader), {}, o).status().message(), c.message);
  }
}

TEST(LemonTruthTest, ParsesAndScores) {
  const auto truth = ParseLemonTruth(
      "node,kind,failure_factor\nn1,lemon,100\nn2,healthy,1\nn3,lemon\n", "truth.csv");
  ASSERT_TRUE(truth.ok()) << truth.status().message();
  EXPECT_EQ(*truth, (std::vector<std::string>{"n1", "n3"}));
  std::vector<LemonNode> found(2);
  found[0].node = "n1";
  found[1].node = "n9";
  const LemonScore s = ScoreLemons(found, *truth);
  EXPECT_EQ(s.true_positives, 1);
  EXPECT_EQ(s.false_positives, 1);
  EXPECT_EQ(s.false_negatives, 1);
  EXPECT_DOUBLE_EQ(s.precision, 0.5);
  EXPECT_DOUBLE_EQ(s.recall, 0.5);
  EXPECT_NE(ParseLemonTruth("host\n", "t.csv").status().message().find("t.csv:1"),
            std::string::npos);
  EXPECT_NE(ParseLemonTruth("node,kind\nlonely\n", "t.csv").status().message().find("t.csv:2"),
            std::string::npos);
}

}  // namespace
}  // namespace vigil::reliability
