#include "vigil/sim/job_sim.h"

#include <gtest/gtest.h>

#include <cmath>

#include "vigil/core/duration.h"
#include "vigil/reliability/models.h"

namespace vigil::sim {
namespace {

double Sum(const TimeBreakdown& b) {
  return b.productive + b.recompute + b.detect + b.restart + b.queue + b.checkpoint;
}

JobSimOptions SmallJobSim() {
  JobSimOptions o;
  o.nodes = 512;
  o.runs = 200;
  return o;
}

TEST(JobSimTest, WithoutFailuresOnlyCheckpointsCost) {
  JobSimOptions o = SmallJobSim();
  o.failures_per_1000_node_days = 1e-9;
  o.interval_s = 3600;
  o.write_s = 400;
  o.runs = 3;
  const JobSimResult r = *SimulateJob(o);
  EXPECT_EQ(r.mean_failures, 0);
  EXPECT_NEAR(r.mean, 3600.0 / 4000, 1e-3);
  EXPECT_NEAR(Sum(r.mean_fraction), 1, 1e-9);
  o.async_checkpoint = true;
  EXPECT_DOUBLE_EQ(SimulateJob(o)->mean, 1);
}

TEST(JobSimTest, PartsSumToTheWholeAndFailuresMatchTheRate) {
  JobSimOptions o = SmallJobSim();
  o.queue_s = 900;
  const JobSimResult r = *SimulateJob(o);
  EXPECT_NEAR(Sum(r.mean_fraction), 1, 1e-9);
  for (double x : r.ettr) {
    EXPECT_GT(x, 0);
    EXPECT_LE(x, 1);
  }
  EXPECT_LE(r.p5, r.mean);
  EXPECT_GE(r.p95, r.mean);
  // 512 nodes x 6.5 per 1000 node-days x 30 days = 99.8 failures per run.
  EXPECT_NEAR(r.mean_failures, 512 * 6.5e-3 * 30, 2);
  EXPECT_GT(r.mean_fraction.queue, 0);
  EXPECT_GT(r.mean_fraction.recompute, 0);
}

TEST(JobSimTest, SameSeedSameResult) {
  const JobSimOptions o = SmallJobSim();
  EXPECT_EQ(SimulateJob(o)->ettr, SimulateJob(o)->ettr);
  JobSimOptions other = o;
  other.seed = 2;
  EXPECT_NE(SimulateJob(o)->ettr, SimulateJob(other)->ettr);
}

// Inside its domain the first-order formula and the simulator agree within 2%. The formula's u0
// is the simulator's detection plus restart.
TEST(JobSimTest, MatchesTheAnalyticFormulaInsideItsDomain) {
  struct Point {
    int64_t nodes;
    double restart_s, queue_s, interval_s, write_s;
  };
  // Failure losses from 2% to 7% of the time, 64 to 16,384 nodes.
  const Point grid[] = {
      {128, 600, 0, 3600, 60},      {512, 300, 0, 1800, 30},  {1024, 300, 0, 1200, 20},
      {2048, 120, 60, 600, 10},     {4096, 60, 0, 300, 5},    {16384, 20, 0, 60, 1},
      {128, 1800, 1800, 7200, 600}, {64, 600, 0, 14400, 300},
  };
  for (const Point& p : grid) {
    reliability::EttrParams params;
    params.nodes = static_cast<double>(p.nodes);
    params.restart_s = p.restart_s;
    params.queue_s = p.queue_s;
    params.interval_s = p.interval_s;
    params.write_s = p.write_s;
    const reliability::EttrEstimate formula = *reliability::ExpectedEttr(params);
    ASSERT_TRUE(formula.in_domain) << p.nodes;
    JobSimOptions o;
    o.nodes = p.nodes;
    o.detect_s = p.restart_s / 2;
    o.restart_s = p.restart_s / 2;
    o.queue_s = p.queue_s;
    o.interval_s = p.interval_s;
    o.write_s = p.write_s;
    o.runs = 100;
    const JobSimResult sim = *SimulateJob(o);
    EXPECT_NEAR(sim.mean / formula.ettr, 1, 0.02)
        << "nodes " << p.nodes << " loss " << formula.failure_loss << " sim " << sim.mean
        << " formula " << formula.ettr;
  }
}

TEST(JobSimTest, EachRejectedOptionIsNamedByItsFlag) {
  const struct {
    void (*set)(JobSimOptions&);
    const char* message;
  } cases[] = {
      {[](JobSimOptions& o) { o.nodes = 0; }, "--nodes must be at least 1"},
      {[](JobSimOptions& o) { o.runs = 0; }, "--runs must be at least 1"},
      {[](JobSimOptions& o) { o.failures_per_1000_node_days = 0; },
       "--rate must be positive, got 0"},
      {[](JobSimOptions& o) { o.duration_s = 0; }, "--days must be positive, got 0"},
      {[](JobSimOptions& o) { o.detect_s = -1; }, "--detect must be zero or more, got -1"},
      {[](JobSimOptions& o) { o.restart_s = -1; }, "--restart must be zero or more, got -1"},
      {[](JobSimOptions& o) { o.queue_s = -1; }, "--queue must be zero or more, got -1"},
      {[](JobSimOptions& o) { o.interval_s = 0; }, "--interval must be positive, got 0"},
      {[](JobSimOptions& o) { o.write_s = -1; }, "--write must be zero or more, got -1"},
      {[](JobSimOptions& o) { o.repair_s = -1; }, "--repair must be zero or more, got -1"},
      {[](JobSimOptions& o) { o.spares = -1; }, "--spares must be zero or more"},
      {[](JobSimOptions& o) {
         o.distribution = FailureDistribution::kWeibull;
         o.weibull_shape = 0;
       },
       "--shape must be positive, got 0"},
      {[](JobSimOptions& o) {
         o.distribution = FailureDistribution::kWeibull;
         o.nodes = kMaxWeibullNodes + 1;
         o.runs = 1;
       },
       "--distribution weibull tracks every node: at most 4194304 --nodes"},
  };
  for (const auto& c : cases) {
    JobSimOptions o;
    c.set(o);
    EXPECT_EQ(Validate(o).message(), c.message);
    EXPECT_EQ(SimulateJob(o).status().message(), c.message);
  }
}

// The formula beside the simulation is the formula of the same job, and only where it applies.
TEST(JobSimTest, TheFormulaComesWhereItDescribesTheJob) {
  JobSimOptions o = SmallJobSim();
  o.runs = 20;
  const Result<JobSimComparison> both = SimulateJobAndFormula(o);
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  EXPECT_EQ(both->simulated.ettr, SimulateJob(o)->ettr);
  ASSERT_TRUE(both->formula.has_value());
  reliability::EttrParams p;
  p.nodes = 512;
  p.restart_s = o.detect_s + o.restart_s;
  EXPECT_EQ(both->formula->ettr, reliability::ExpectedEttr(p)->ettr);
  for (void (*other)(JobSimOptions&) : {
           +[](JobSimOptions& x) { x.distribution = FailureDistribution::kWeibull; },
           +[](JobSimOptions& x) { x.async_checkpoint = true; },
           +[](JobSimOptions& x) { x.spares = 2; },
       }) {
    JobSimOptions x = o;
    other(x);
    const Result<JobSimComparison> r = SimulateJobAndFormula(x);
    ASSERT_TRUE(r.ok());
    EXPECT_FALSE(r->formula.has_value());
  }
  o.runs = 0;
  EXPECT_EQ(SimulateJobAndFormula(o).status().message(), "--runs must be at least 1");
}

TEST(JobSimTest, SparesRemoveQueueingAndAsyncRemovesStalls) {
  JobSimOptions o = SmallJobSim();
  o.queue_s = 1800;
  const JobSimResult none = *SimulateJob(o);
  o.spares = 4;
  o.repair_s = 3600;
  const JobSimResult spares = *SimulateJob(o);
  EXPECT_GT(none.mean_fraction.queue, 0.01);
  EXPECT_LT(spares.mean_fraction.queue, none.mean_fraction.queue / 100);
  EXPECT_GT(spares.mean, none.mean);
  o.async_checkpoint = true;
  const JobSimResult async = *SimulateJob(o);
  EXPECT_EQ(async.mean_fraction.checkpoint, 0);
  EXPECT_GT(async.mean, spares.mean);
}

TEST(JobSimTest, WeibullKeepsTheMeanRate) {
  JobSimOptions o = SmallJobSim();
  o.distribution = FailureDistribution::kWeibull;
  o.weibull_shape = 1;
  const JobSimResult w1 = *SimulateJob(o);
  EXPECT_NEAR(w1.mean_failures, 512 * 6.5e-3 * 30, 2);
  // Shape 1 is the exponential: the same job gets the same ETTR within Monte Carlo noise.
  JobSimOptions exponential = SmallJobSim();
  EXPECT_NEAR(w1.mean, SimulateJob(exponential)->mean, 0.003);
  o.weibull_shape = 0.5;  // bursty, same long-run mean
  EXPECT_NEAR(SimulateJob(o)->mean_failures, 512 * 6.5e-3 * 30, 6);
}

TEST(JobSimTest, RejectsBadOptions) {
  JobSimOptions o;
  o.nodes = 0;
  EXPECT_NE(Validate(o).message().find("nodes"), std::string::npos);
  o = JobSimOptions();
  o.interval_s = 0;
  EXPECT_NE(Validate(o).message().find("--interval"), std::string::npos);
  o = JobSimOptions();
  o.failures_per_1000_node_days = -1;
  EXPECT_FALSE(SimulateJob(o).ok());
  o = JobSimOptions();
  o.distribution = FailureDistribution::kWeibull;
  o.weibull_shape = 0;
  EXPECT_FALSE(Validate(o).ok());
  o.weibull_shape = 1;
  o.nodes = kMaxWeibullNodes + 1;
  EXPECT_FALSE(Validate(o).ok());
}

// `simulate job --nodes 1048576 --days 3650d` would draw 1e11 failures: hours of work.
TEST(JobSimTest, RefusesMoreWorkThanItsLimit) {
  JobSimOptions o;
  o.nodes = 1048576;
  o.duration_s = 3650 * 86400.0;
  o.failures_per_1000_node_days = 100;
  const Status s = Validate(o);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("failures, more than the 1e+09"), std::string::npos) << s.message();
  o = JobSimOptions();
  o.nodes = 1048576;  // the largest job, at the defaults: 2e8 failures
  EXPECT_TRUE(Validate(o).ok());
}

}  // namespace
}  // namespace vigil::sim
