#include "vigil/cluster/node_check.h"

#include <gtest/gtest.h>

#include "vigil/cluster/scripted_runner.h"

namespace vigil::cluster {
namespace {

constexpr std::string_view kTwoIdle = "NodeName=n1 State=IDLE\nNodeName=n2 State=IDLE\n";

TEST(NodeCheckTest, AFaultDrainsWithItsLineAfterItsDelay) {
  ScriptedRunner runner;
  runner.Add(std::string(kTwoIdle));       // the breaker's count
  runner.Add("NodeName=n1 State=IDLE\n");  // Drain's look at the node
  runner.Add("");                          // the update
  runner.Add("NodeName=n1 State=IDLE+DRAIN Reason=vigil: GPU 3 x\nNodeName=n2 State=IDLE\n");
  Slurm slurm(runner, SlurmOptions{});
  FakeClock clock;
  const Result<NodeOutcome> o =
      ApplyNodeCheck(slurm, {"n1", "vigil: GPU 3 x", false, 0}, 0.05, clock);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->change, NodeOutcome::Change::kDrained);
  EXPECT_EQ(o->text, "drained n1: vigil: GPU 3 x");
  EXPECT_EQ(runner.calls[2].argv.back(), "Reason=vigil: GPU 3 x");
  EXPECT_EQ(clock.MonotonicSeconds(), 0);  // no delay asked

  ScriptedRunner later;
  later.Add("NodeName=n1 State=IDLE\nNodeName=n2 State=IDLE+DRAIN Reason=vigil: y\n");
  Slurm slurm_later(later, SlurmOptions{});
  NodeCheck check{"n1", "vigil: GPU 3 x", false, 0};
  check.drain_delay_s = 4.5;
  ASSERT_TRUE(ApplyNodeCheck(slurm_later, check, 0.05, clock).ok());
  EXPECT_EQ(clock.MonotonicSeconds(), 4.5);
}

TEST(NodeCheckTest, AnOpenBreakerIsSaid) {
  ScriptedRunner runner;
  runner.Add("NodeName=n1 State=IDLE\nNodeName=n2 State=IDLE+DRAIN Reason=vigil: y\n");
  Slurm slurm(runner, SlurmOptions{});
  FakeClock clock;
  const Result<NodeOutcome> o =
      ApplyNodeCheck(slurm, {"n1", "vigil: GPU 3 x", false, 0}, 0.05, clock);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->change, NodeOutcome::Change::kNone);
  EXPECT_NE(o->text.find("circuit breaker is open"), std::string::npos);
}

TEST(NodeCheckTest, APassingHealthCheckChangesNothing) {
  ScriptedRunner runner;
  Slurm slurm(runner, SlurmOptions{});
  FakeClock clock;
  const Result<NodeOutcome> o = ApplyNodeCheck(slurm, {"n1", "OK", false, 0}, 0.05, clock);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->change, NodeOutcome::Change::kNone);
  EXPECT_TRUE(runner.calls.empty());
}

TEST(NodeCheckTest, APassedValidationResumesOnlyVigilsDrain) {
  ScriptedRunner runner;
  runner.Add("NodeName=n1 State=IDLE+DRAIN Reason=vigil: GPU 3 x [root@2026-11-24T03:00:00]\n");
  runner.Add("");
  runner.Add("NodeName=n2 State=IDLE+DRAIN Reason=fan [admin@2026-11-24T03:00:00]\n");
  Slurm slurm(runner, SlurmOptions{});
  FakeClock clock;
  const Result<NodeOutcome> mine = ApplyNodeCheck(slurm, {"n1", "OK", true, 0}, 0.05, clock);
  ASSERT_TRUE(mine.ok());
  EXPECT_EQ(mine->change, NodeOutcome::Change::kResumed);
  EXPECT_EQ(runner.calls[1].argv.back(), "State=UNDRAIN");
  const Result<NodeOutcome> theirs = ApplyNodeCheck(slurm, {"n2", "OK", true, 0}, 0.05, clock);
  ASSERT_TRUE(theirs.ok());
  EXPECT_EQ(theirs->change, NodeOutcome::Change::kNone);
  EXPECT_EQ(theirs->text, "n2 was drained by someone else: left drained");
  EXPECT_EQ(runner.calls.size(), 3u);
}

TEST(NodeCheckTest, ALineThatIsNeitherIsRefused) {
  ScriptedRunner runner;
  Slurm slurm(runner, SlurmOptions{});
  FakeClock clock;
  EXPECT_EQ(ApplyNodeCheck(slurm, {"n1", "GPU 3 bad", false, 0}, 0.05, clock).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(runner.calls.empty());
}

}  // namespace
}  // namespace vigil::cluster
