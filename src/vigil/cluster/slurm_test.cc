#include "vigil/cluster/slurm.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <thread>

#include "vigil/cluster/scripted_runner.h"
#include "vigil/testing/scoped_env.h"
#include "vigil/testing/slurm_cluster.h"
#include "vigil/testing/temp_dir.h"

namespace vigil::cluster {
namespace {

testing::SlurmClusterOptions Shape(int nodes, int idle_nodes) {
  testing::SlurmClusterOptions o;
  o.nodes = nodes;
  o.idle_nodes = idle_nodes;
  return o;
}

SlurmOptions WithScontrol(std::string scontrol) {
  SlurmOptions o;
  o.scontrol = std::move(scontrol);
  return o;
}

SlurmOptions WithConf(std::string conf) {
  SlurmOptions o;
  o.conf = std::move(conf);
  return o;
}

// A line of Slurm 22.05's `scontrol show node --oneliner`, as Debian's slurmctld printed it.
constexpr std::string_view kDrainedLine =
    "NodeName=fake2 CoresPerSocket=1  CPUAlloc=0 CPUEfctv=1 CPUTot=1 CPULoad=N/A "
    "AvailableFeatures=(null) ActiveFeatures=(null) Gres=(null) NodeAddr=127.0.0.2 "
    "NodeHostName=fake2  RealMemory=1 AllocMem=0 FreeMem=N/A Sockets=1 Boards=1 "
    "State=UNKNOWN+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A "
    "Partitions=debug  BootTime=None SlurmdStartTime=None LastBusyTime=Unknown "
    "CfgTRES=cpu=1,mem=1M,billing=1 AllocTRES= CapWatts=n/a CurrentWatts=0 AveWatts=0 "
    "ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s "
    "Reason=vigil: GPU 3 hbm | x=y [root@2026-11-24T04:12:22]\n";

TEST(SlurmTest, ANodeLineIsReadWithItsWholeReason) {
  const Result<SlurmNode> n = ParseScontrolNode(kDrainedLine);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(n->name, "fake2");
  EXPECT_EQ(n->state, (std::vector<std::string>{"UNKNOWN", "DRAIN"}));
  EXPECT_EQ(n->reason, "vigil: GPU 3 hbm | x=y");
  EXPECT_TRUE(n->Drained());
  EXPECT_TRUE(n->DrainedByVigil());

  const Result<SlurmNode> idle = ParseScontrolNode("NodeName=n1 Arch=x86_64 State=IDLE Weight=1");
  ASSERT_TRUE(idle.ok());
  EXPECT_FALSE(idle->Drained());
  EXPECT_EQ(idle->reason, "");
  const Result<SlurmNode> admin = ParseScontrolNode(
      "NodeName=n1 State=IDLE+DRAIN Reason=fan noise [admin@2026-01-01T00:00:00]");
  ASSERT_TRUE(admin.ok());
  EXPECT_TRUE(admin->Drained());
  EXPECT_FALSE(admin->DrainedByVigil());
  // A key inside another word is not the key: "ActiveState=" is no "State=".
  EXPECT_EQ(ParseScontrolNode("NodeName=n1 ActiveState=IDLE").status().message(),
            "scontrol show node n1: no State= field");
  EXPECT_FALSE(ParseScontrolNode("").ok());
}

CommandOutput Printed(std::string out, int exit_code = 0, std::string err = "") {
  return CommandOutput{exit_code, std::move(out), std::move(err)};
}

TEST(SlurmTest, ADrainGivesTheReasonAndTheConfigurationAsTheyAre) {
  ScriptedRunner runner;
  runner.answers.push_back(Printed("NodeName=n1 State=IDLE Reason=(null)\n"));
  runner.answers.push_back(Printed(""));
  SlurmOptions options = WithConf("/etc/x.conf");
  options.scontrol = "/opt/slurm/bin/scontrol";
  Slurm slurm(runner, options);
  const Result<SlurmAction> a = slurm.Drain("n1", "vigil: GPU 3 gemm 9% below the fleet");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(*a, SlurmAction::kDone);
  ASSERT_EQ(runner.calls.size(), 2u);
  EXPECT_EQ(
      runner.calls[1].argv,
      (std::vector<std::string>{"/opt/slurm/bin/scontrol", "update", "NodeName=n1", "State=DRAIN",
                                "Reason=vigil: GPU 3 gemm 9% below the fleet"}));
  EXPECT_EQ(runner.calls[1].env, (std::vector<std::string>{"SLURM_CONF=/etc/x.conf"}));
}

TEST(SlurmTest, SomeoneElsesDrainIsNeitherOverwrittenNorResumed) {
  ScriptedRunner runner;
  const std::string admin = "NodeName=n1 State=IDLE+DRAIN Reason=fan [admin@2026-01-01T00:00:00]";
  runner.answers.push_back(Printed(admin));
  runner.answers.push_back(Printed(admin));
  Slurm slurm(runner, SlurmOptions{});
  EXPECT_EQ(*slurm.Drain("n1", "vigil: NIC 2 down"), SlurmAction::kAlready);
  EXPECT_EQ(*slurm.Resume("n1"), SlurmAction::kNotVigils);
  EXPECT_EQ(runner.calls.size(), 2u);  // two reads, no update
}

TEST(SlurmTest, AReasonThatIsNotVigilsIsRefusedBeforeAnyCall) {
  ScriptedRunner runner;
  Slurm slurm(runner, SlurmOptions{});
  EXPECT_EQ(slurm.Drain("n1", "GPU 3").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(slurm.Drain("n1", "vigil: a\nb").status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(runner.calls.empty());
}

TEST(SlurmTest, WhatScontrolSaysOnFailureIsInTheError) {
  ScriptedRunner runner;
  runner.answers.push_back(Printed("", 1, "Node nosuch not found\n"));
  runner.answers.push_back(Printed("NodeName=n1 State=IDLE\n"));
  runner.answers.push_back(Printed("", 1, "slurm_update error: Invalid node state specified\n"));
  runner.answers.push_back(Status::NotFound("scontrol: cannot run \"scontrol\": No such file"));
  Slurm slurm(runner, SlurmOptions{});
  const Result<SlurmNode> missing = slurm.Node("nosuch");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("Node nosuch not found"), std::string::npos);
  const Result<SlurmAction> refused = slurm.Drain("n1", "vigil: x");
  EXPECT_EQ(refused.status().code(), StatusCode::kIoError);
  EXPECT_EQ(refused.status().message(),
            "scontrol update NodeName=n1 State=DRAIN \"Reason=vigil: x\": exit 1: "
            "slurm_update error: Invalid node state specified");
  EXPECT_EQ(slurm.Resume("n1").status().code(), StatusCode::kNotFound);
}

TEST(SlurmTest, TheBreakerAllowsAShareOfTheNodesAndAtLeastOne) {
  EXPECT_EQ(DrainLimit(0.05, 1000), 50u);
  EXPECT_EQ(DrainLimit(0.05, 10), 1u);
  EXPECT_EQ(DrainLimit(0.2, 12), 2u);
  EXPECT_EQ(DrainLimit(3, 4), 4u);
  EXPECT_EQ(DrainLimit(0, 100), 0u);
}

TEST(SlurmTest, AnOpenBreakerDrainsNothing) {
  ScriptedRunner runner;
  runner.answers.push_back(
      Printed("NodeName=a State=IDLE+DRAIN Reason=vigil: NIC 1 down\nNodeName=b State=IDLE\n"
              "NodeName=c State=IDLE+DRAIN Reason=admin: fan\nNodeName=d State=IDLE\n"));
  Slurm slurm(runner, SlurmOptions{});
  EXPECT_EQ(*slurm.DrainWithinLimit("b", "vigil: GPU 0 gone", 0.25), SlurmAction::kBreakerOpen);
  EXPECT_EQ(runner.calls.size(), 1u);  // one listing, no update
}

TEST(SlurmTest, ANodeDrainedAlreadyIsAlreadyDrainedEvenWithTheBreakerOpen) {
  // A failed re-validation of a node Vigil drained: it is one of the drains that fill the limit.
  ScriptedRunner runner;
  runner.answers.push_back(
      Printed("NodeName=a State=IDLE+DRAIN Reason=vigil: NIC 1 down\nNodeName=b State=IDLE\n"));
  Slurm slurm(runner, SlurmOptions{});
  EXPECT_EQ(*slurm.DrainWithinLimit("a", "vigil: NIC 1 down", 0.5), SlurmAction::kAlready);
  EXPECT_EQ(runner.calls.size(), 1u);
}

TEST(SlurmTest, ADrainThatRacedPastTheLimitIsUndone) {
  // Room for one: "c" drains, then finds that "b" drained at the same time.
  ScriptedRunner runner;
  runner.answers.push_back(Printed("NodeName=b State=IDLE\nNodeName=c State=IDLE\n"));
  runner.answers.push_back(Printed("NodeName=c State=IDLE\n"));
  runner.answers.push_back(Printed(""));
  runner.answers.push_back(
      Printed("NodeName=b State=IDLE+DRAIN Reason=vigil: x\nNodeName=c State=IDLE+DRAIN "
              "Reason=vigil: y\n"));
  runner.answers.push_back(Printed(""));
  Slurm slurm(runner, SlurmOptions{});
  EXPECT_EQ(*slurm.DrainWithinLimit("c", "vigil: y", 0.5), SlurmAction::kBreakerOpen);
  ASSERT_EQ(runner.calls.size(), 5u);
  EXPECT_EQ(runner.calls[4].argv,
            (std::vector<std::string>{"scontrol", "update", "NodeName=c", "State=UNDRAIN"}));

  // Alone within the limit, it stays.
  ScriptedRunner alone;
  alone.answers.push_back(Printed("NodeName=b State=IDLE\nNodeName=c State=IDLE\n"));
  alone.answers.push_back(Printed("NodeName=b State=IDLE\n"));
  alone.answers.push_back(Printed(""));
  alone.answers.push_back(
      Printed("NodeName=b State=IDLE+DRAIN Reason=vigil: x\nNodeName=c State=IDLE\n"));
  Slurm slurm_b(alone, SlurmOptions{});
  EXPECT_EQ(*slurm_b.DrainWithinLimit("b", "vigil: x", 0.5), SlurmAction::kDone);
  EXPECT_EQ(alone.calls.size(), 4u);
}

// The real thing: Debian's slurmctld and slurmd on loopback (testing/slurm_cluster.h).
TEST(SlurmTest, DrainAndResumeOnARealSlurm) {
  testing::TempDir dir;
  Result<std::unique_ptr<testing::SlurmCluster>> cluster =
      testing::SlurmCluster::Start(dir.path(), Shape(1, 1));
  if (!cluster.ok()) GTEST_SKIP() << "Slurm cannot start here: " << cluster.status().message();
  const std::unique_ptr<CommandRunner> runner = MakeProcessRunner();
  Slurm slurm(*runner, WithConf((*cluster)->conf()));
  const std::string node = (*cluster)->nodes()[0];

  Result<SlurmNode> n = slurm.Node(node);
  ASSERT_TRUE(n.ok()) << n.status().ToString() << (*cluster)->ControllerLog();
  EXPECT_FALSE(n->Drained());
  const std::string reason = "vigil: GPU 3 gpu-gemm/fp16 12% below the fleet";
  EXPECT_EQ(*slurm.Drain(node, reason), SlurmAction::kDone);
  n = slurm.Node(node);
  ASSERT_TRUE(n.ok());
  EXPECT_TRUE(n->DrainedByVigil());
  EXPECT_EQ(n->reason, reason);
  EXPECT_EQ(*slurm.Drain(node, "vigil: something else"), SlurmAction::kAlready);
  EXPECT_EQ(slurm.Node(node)->reason, reason);
  EXPECT_EQ(*slurm.Resume(node), SlurmAction::kDone);
  EXPECT_FALSE(slurm.Node(node)->Drained());
  EXPECT_EQ(*slurm.Resume(node), SlurmAction::kAlready);

  // A node that a person drained stays drained, with the person's reason.
  const std::string other = (*cluster)->idle_nodes()[0];
  CommandSpec by_hand_spec;
  by_hand_spec.argv = {"scontrol", "update", "NodeName=" + other, "State=DRAIN",
                       "Reason=admin: fan"};
  by_hand_spec.env = {"SLURM_CONF=" + (*cluster)->conf()};
  const Result<CommandOutput> by_hand = runner->Run(by_hand_spec);
  ASSERT_TRUE(by_hand.ok());
  ASSERT_EQ(by_hand->exit_code, 0) << by_hand->err;
  EXPECT_EQ(*slurm.Resume(other), SlurmAction::kNotVigils);
  EXPECT_EQ(slurm.Node(other)->reason, "admin: fan");
  EXPECT_TRUE(slurm.Node(other)->Drained());

  EXPECT_EQ(slurm.Node("nosuch").status().code(), StatusCode::kNotFound);
  Slurm missing(*runner, WithScontrol("/nonexistent/scontrol"));
  EXPECT_EQ(missing.Node(node).status().code(), StatusCode::kNotFound);
}

TEST(SlurmTest, ANodesUseComesFromItsStateFlags) {
  const auto use = [](std::string_view state) {
    return ParseScontrolNode(fmt::format("NodeName=n1 State={} Weight=1", state))->Use();
  };
  EXPECT_EQ(use("IDLE"), NodeUse::kIdle);
  EXPECT_EQ(use("ALLOCATED"), NodeUse::kBusy);
  EXPECT_EQ(use("MIXED"), NodeUse::kBusy);
  EXPECT_EQ(use("IDLE+COMPLETING"), NodeUse::kBusy);
  EXPECT_EQ(use("ALLOCATED+RESERVED"), NodeUse::kBusy);
  EXPECT_EQ(use("IDLE+DRAIN"), NodeUse::kUnavailable);
  EXPECT_EQ(use("MIXED+DRAIN"), NodeUse::kUnavailable);
  EXPECT_EQ(use("DOWN+NOT_RESPONDING"), NodeUse::kUnavailable);
  EXPECT_EQ(use("IDLE+NOT_RESPONDING"), NodeUse::kUnavailable);
  EXPECT_EQ(use("IDLE+POWERED_DOWN"), NodeUse::kUnavailable);
  EXPECT_EQ(use("UNKNOWN"), NodeUse::kUnavailable);
  EXPECT_EQ(use("FUTURE"), NodeUse::kUnavailable);
  EXPECT_EQ(use("IDLE+CLOUD"), NodeUse::kIdle);
  EXPECT_EQ(use("IDLE+CLOUD+POWERED_DOWN"), NodeUse::kUnavailable);
  EXPECT_EQ(use("IDLE+MAINTENANCE"), NodeUse::kUnavailable);
  EXPECT_EQ(use("IDLE+RESERVED"), NodeUse::kBusy);
  EXPECT_EQ(use("IDLE+PLANNED"), NodeUse::kBusy);
  EXPECT_EQ(use("MIXED+PLANNED"), NodeUse::kBusy);
  EXPECT_EQ(use("IDLE+REBOOT_REQUESTED"), NodeUse::kUnavailable);
  EXPECT_EQ(use("IDLE+SOMETHING_NEW"), NodeUse::kUnavailable);
  EXPECT_EQ(use("ERROR"), NodeUse::kUnavailable);
  // Slurm before 21.08: the flag as a symbol.
  EXPECT_EQ(use("IDLE*"), NodeUse::kUnavailable);
  EXPECT_EQ(use("DOWN*"), NodeUse::kUnavailable);
  EXPECT_EQ(use("IDLE~"), NodeUse::kUnavailable);
  EXPECT_EQ(use("ALLOCATED#"), NodeUse::kUnavailable);
  EXPECT_EQ(use("IDLE$"), NodeUse::kUnavailable);
  EXPECT_EQ(use("IDLE-"), NodeUse::kBusy);
  EXPECT_EQ(use("MAINT"), NodeUse::kUnavailable);
  EXPECT_EQ(use("REBOOT"), NodeUse::kUnavailable);
  EXPECT_EQ(use("ALLOC"), NodeUse::kBusy);
}

TEST(SlurmTest, AValidationJobIsOneWholeNodeNamedForIt) {
  ValidationJob job;
  job.node = "gpu-017";
  job.command = "vigil run --bench 'gpu-gemm,gpu-membw'";
  job.time_limit_s = 61;
  job.partition = "maint";
  EXPECT_EQ(SbatchArgs(job),
            (std::vector<std::string>{"--parsable", "--job-name=vigil-validate:gpu-017",
                                      "--nodelist=gpu-017", "--nodes=1", "--ntasks=1",
                                      "--exclusive", "--mem=0", "--time=2", "--partition=maint",
                                      "--wrap=vigil run --bench 'gpu-gemm,gpu-membw'"}));
  EXPECT_EQ(ValidationJobNode("vigil-validate:gpu-017"), "gpu-017");
  EXPECT_EQ(ValidationJobNode("train-llama"), "");

  ScriptedRunner runner;
  runner.Add("4242;cluster-a\n");
  Slurm slurm(runner, WithConf("/etc/slurm/x.conf"));
  EXPECT_EQ(*slurm.Submit(job), "4242");
  ASSERT_EQ(runner.calls.size(), 1u);
  EXPECT_EQ(runner.calls[0].argv[0], "sbatch");
  EXPECT_EQ(runner.calls[0].env, (std::vector<std::string>{"SLURM_CONF=/etc/slurm/x.conf"}));

  runner.Add("", 1, "sbatch: error: Batch job submission failed: Invalid account\n");
  const Result<std::string> refused = slurm.Submit(job);
  EXPECT_EQ(refused.status().code(), StatusCode::kIoError);
  EXPECT_NE(refused.status().message().find("Invalid account"), std::string::npos);
  runner.Add("Submitted batch job 12\n");
  EXPECT_EQ(slurm.Submit(job).status().code(), StatusCode::kIoError);  // not --parsable's answer

  // A host-list expression or an empty name is not one node; nothing is called.
  const size_t calls = runner.calls.size();
  job.node = "gpu-[001-004]";
  EXPECT_EQ(slurm.Submit(job).status().code(), StatusCode::kInvalidArgument);
  job.node = "";
  EXPECT_EQ(slurm.Submit(job).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(runner.calls.size(), calls);
}

TEST(SlurmTest, TheQueueIsReadWithNamesThatHoldBars) {
  ScriptedRunner runner;
  runner.Add("17|vigil-validate:n1|PENDING\n18_3|a|b|RUNNING\n\n");
  Slurm slurm(runner, SlurmOptions());
  const Result<std::vector<SlurmJob>> jobs = slurm.Jobs();
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].name, "vigil-validate:n1");
  EXPECT_EQ((*jobs)[1].id, "18_3");
  EXPECT_EQ((*jobs)[1].name, "a|b");
  EXPECT_EQ((*jobs)[1].state, "RUNNING");
  EXPECT_EQ(runner.calls[0].argv,
            (std::vector<std::string>{"squeue", "--noheader", "--all", std::string(kQueuedStates),
                                      "--format=%i|%j|%T"}));
  EXPECT_EQ(runner.calls[0].unset_prefixes, std::vector<std::string>{"SQUEUE_"});
  runner.Add("garbage\n");
  EXPECT_EQ(slurm.Jobs().status().code(), StatusCode::kInvalidArgument);
  runner.Add("", 1, "slurm_load_jobs error: Unable to contact slurm controller\n");
  EXPECT_EQ(slurm.Jobs().status().code(), StatusCode::kIoError);
}

// A validation submitted to a real Slurm runs on its node, and the queue shows it while it waits.
TEST(SlurmTest, AValidationRunsOnItsNodeInARealSlurm) {
  testing::TempDir dir;
  Result<std::unique_ptr<testing::SlurmCluster>> cluster =
      testing::SlurmCluster::Start(dir.path(), Shape(1, 0));
  if (!cluster.ok()) GTEST_SKIP() << "Slurm cannot start here: " << cluster.status().message();
  const std::unique_ptr<CommandRunner> runner = MakeProcessRunner();
  Slurm slurm(*runner, WithConf((*cluster)->conf()));
  ValidationJob job;
  job.node = (*cluster)->nodes()[0];
  const std::string gate = dir.path() + "/go";
  const std::string done = dir.path() + "/done";
  job.command = fmt::format("while [ ! -e {} ]; do sleep 0.1; done; echo \"$SLURMD_NODENAME\" > {}",
                            ShellWord(gate), ShellWord(done));
  job.time_limit_s = 60;
  job.output = dir.path() + "/%j.out";
  const Result<std::string> id = slurm.Submit(job);
  ASSERT_TRUE(id.ok()) << id.status().ToString() << (*cluster)->ControllerLog();
  // A shell that narrows squeue to another user's jobs (or to no partition of this cluster) does
  // not hide this one from the queue Vigil reads.
  const testing::ScopedEnv users("SQUEUE_USERS", "daemon");
  const testing::ScopedEnv partition("SQUEUE_PARTITION", "no-such-partition");
  const Result<std::vector<SlurmJob>> jobs = slurm.Jobs();
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  const auto mine =
      std::find_if(jobs->begin(), jobs->end(), [&](const SlurmJob& j) { return j.id == *id; });
  ASSERT_NE(mine, jobs->end());
  EXPECT_EQ(ValidationJobNode(mine->name), job.node);
  std::ofstream(gate) << "";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!std::ifstream(done) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::string ran_on;
  std::getline(std::ifstream(done), ran_on);
  EXPECT_EQ(ran_on, job.node) << (*cluster)->ControllerLog();
}

// Many nodes failing at once, on a real Slurm: the breaker holds, whether the drains come one
// after another or all at the same time. The nodes run a slurmd each: Slurm cannot undrain a node
// that never registered.
TEST(SlurmTest, TheBreakerHoldsWhenManyNodesFailOnARealSlurm) {
  testing::TempDir dir;
  Result<std::unique_ptr<testing::SlurmCluster>> cluster =
      testing::SlurmCluster::Start(dir.path(), Shape(6, 0));
  if (!cluster.ok()) GTEST_SKIP() << "Slurm cannot start here: " << cluster.status().message();
  const std::unique_ptr<CommandRunner> runner = MakeProcessRunner();
  Slurm slurm(*runner, WithConf((*cluster)->conf()));
  const auto drained = [&]() -> size_t {
    const Result<std::vector<SlurmNode>> all = slurm.Nodes();
    if (!all.ok()) return 99;
    return static_cast<size_t>(std::count_if(
        all->begin(), all->end(), [](const SlurmNode& n) { return n.DrainedByVigil(); }));
  };
  const std::vector<std::string>& nodes = (*cluster)->nodes();
  const Result<std::vector<SlurmNode>> listed = slurm.Nodes();
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  EXPECT_EQ(listed->size(), 6u);
  std::vector<SlurmAction> one_by_one;
  for (size_t i = 0; i < 5; ++i) {
    Result<SlurmAction> a = slurm.DrainWithinLimit(nodes[i], "vigil: test", 0.34);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    one_by_one.push_back(*a);
  }
  EXPECT_EQ(one_by_one, (std::vector<SlurmAction>{
                            SlurmAction::kDone, SlurmAction::kDone, SlurmAction::kBreakerOpen,
                            SlurmAction::kBreakerOpen, SlurmAction::kBreakerOpen}));
  EXPECT_EQ(drained(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const Result<SlurmAction> resumed = slurm.Resume(nodes[i]);
    ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
    EXPECT_EQ(*resumed, SlurmAction::kDone);
  }

  // All at once, each from a thread of its own as health checks on every node would.
  std::vector<std::thread> threads;
  std::atomic<int> errors{0};
  for (const std::string& node : nodes) {
    threads.emplace_back([&, node] {
      Slurm own(*runner, WithConf((*cluster)->conf()));
      errors += own.DrainWithinLimit(node, "vigil: test", 0.34).ok() ? 0 : 1;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_LE(drained(), 2u);
}

}  // namespace
}  // namespace vigil::cluster
