#include "vigil/sim/cluster_sim.h"

#include <gtest/gtest.h>

#include "vigil/reliability/fleet_stats.h"
#include "vigil/reliability/node_events.h"
#include "vigil/reliability/sacct.h"

namespace vigil::sim {
namespace {

using reliability::FleetStats;

// The generated logs, parsed, and the fleet statistics of them with their node events.
struct Analysed {
  reliability::SacctLog log;
  FleetStats stats;
};

Analysed Analyse(const ClusterSimOutput& out) {
  Analysed a;
  auto log = reliability::ParseSacct(out.sacct, "sim.sacct", {});
  EXPECT_TRUE(log.ok()) << log.status().message();
  const auto events = reliability::ParseNodeEvents(out.events, "sim.csv", false);
  EXPECT_TRUE(events.ok()) << events.status().message();
  if (!log.ok() || !events.ok()) return a;
  a.log = std::move(log).value();
  a.stats = *reliability::ComputeFleetStats(a.log, events->events, {});
  return a;
}

TEST(ClusterSimTest, LogsParseAndLookLikeAProductionCluster) {
  ClusterSimOptions o;
  o.nodes = 256;
  o.days = 10;
  const ClusterSimOutput out = *SimulateCluster(o);
  const Analysed a = Analyse(out);
  EXPECT_EQ(static_cast<int64_t>(a.log.jobs.size()), out.jobs);
  EXPECT_EQ(out.lemons.size(), 8u);
  // Most jobs are small, most GPU time is in large jobs.
  int64_t single = 0;
  double gpu_s = 0, large_gpu_s = 0;
  for (const auto& job : a.log.jobs) {
    single += job.nnodes == 1;
    gpu_s += job.gpus * job.ElapsedSeconds();
    if (job.nnodes >= 16) large_gpu_s += job.gpus * job.ElapsedSeconds();
  }
  EXPECT_GT(static_cast<double>(single) / out.jobs, 0.6);
  EXPECT_GT(large_gpu_s / gpu_s, 0.5);
  // The fleet rate comes back close to the planted one (lemons raise it).
  EXPECT_GT(a.stats.infra_failures, 0);
  EXPECT_LE(a.stats.infra_failures, out.infra_failures + 20);  // + noise events, - unlogged
  EXPECT_EQ(SimulateCluster(o)->sacct, out.sacct);             // deterministic
}

// The acceptance bar of the lemon detector: precision and recall of at least 0.9.
TEST(ClusterSimTest, LemonDetectionPrecisionAndRecall) {
  double precision = 0, recall = 0;
  constexpr int kSeeds = 3;
  for (int seed = 1; seed <= kSeeds; ++seed) {
    ClusterSimOptions o;
    o.seed = seed;
    const ClusterSimOutput out = *SimulateCluster(o);
    const reliability::LemonScore s =
        reliability::ScoreLemons(Analyse(out).stats.lemons, out.lemons);
    precision += s.precision / kSeeds;
    recall += s.recall / kSeeds;
  }
  EXPECT_GE(precision, 0.9);
  EXPECT_GE(recall, 0.9);
}

TEST(ClusterSimTest, NoLemonsNoFindings) {
  ClusterSimOptions o;
  o.lemons = 0;
  o.nodes = 512;
  const ClusterSimOutput out = *SimulateCluster(o);
  const auto log = reliability::ParseSacct(out.sacct, "sim.sacct", {});
  const FleetStats stats = *reliability::ComputeFleetStats(*log, {}, {});
  EXPECT_LE(stats.lemons.size(), 1u);  // the FDR allows the odd false discovery, no more
}

TEST(ClusterSimTest, RejectsBadOptions) {
  ClusterSimOptions o;
  o.lemons = o.nodes + 1;
  EXPECT_FALSE(SimulateCluster(o).ok());
  o = ClusterSimOptions();
  o.days = 0;
  EXPECT_FALSE(Validate(o).ok());
  o = ClusterSimOptions();
  o.lemon_factor = 0.5;
  EXPECT_FALSE(Validate(o).ok());
}

TEST(ClusterSimTest, EachRejectedOptionIsNamedByItsFlag) {
  const struct {
    void (*set)(ClusterSimOptions&);
    const char* message;
  } cases[] = {
      {[](ClusterSimOptions& o) { o.nodes = 0; }, "--nodes must be from 1 to 1048576"},
      {[](ClusterSimOptions& o) { o.days = 0; }, "--days must be in (0, 3650]"},
      {[](ClusterSimOptions& o) {
         o.nodes = 1048576;
         o.days = 20;
       },
       "--nodes x --days is 2.1e+07 node-days, more than the 1e+07 one log may hold"},
      {[](ClusterSimOptions& o) { o.lemons = o.nodes + 1; }, "--lemons must be from 0 to --nodes"},
      {[](ClusterSimOptions& o) { o.gpus_per_node = 0; }, "--gpus-per-node must be at least 1"},
      {[](ClusterSimOptions& o) { o.failures_per_1000_node_days = 0; }, "--rate must be positive"},
      {[](ClusterSimOptions& o) { o.lemon_factor = 0.5; }, "--lemon-factor must be at least 1"},
      {[](ClusterSimOptions& o) { o.time_limit_s = 0; }, "the time limit must be positive"},
  };
  for (const auto& c : cases) {
    ClusterSimOptions o;
    c.set(o);
    EXPECT_EQ(Validate(o).message(), c.message);
    EXPECT_EQ(SimulateCluster(o).status().message(), c.message);
  }
}

// The log is held in memory: 1048576 nodes over 3650 days would need hundreds of GB.
TEST(ClusterSimTest, RefusesALogLargerThanItsLimit) {
  ClusterSimOptions o;
  o.nodes = 1048576;
  o.days = 3650;
  const Status s = Validate(o);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("node-days, more than the 1e+07"), std::string::npos) << s.message();
  o.days = 9;
  EXPECT_TRUE(Validate(o).ok());
}

}  // namespace
}  // namespace vigil::sim
