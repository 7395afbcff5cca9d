#include "vigil/agent/fleet_run.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fmt/format.h>
#include <fstream>

#include "vigil/testing/temp_dir.h"

namespace vigil::agent {
namespace {

Status RunWith(const FleetCommandOptions& o) {
  std::atomic<bool> interrupted{false};
  return RunFleetCommand(o, {}, interrupted).status();
}

TEST(FleetCommandTest, BadOptionsAreRefusedBeforeAnythingStarts) {
  testing::TempDir dir;
  std::ofstream(dir.File("hosts")) << "localhost\n";
  FleetCommandOptions o;
  o.hosts = dir.File("hosts");
  o.launcher_program = "/nonexistent/launcher";  // never reached
  o.pattern = "all-nodes";
  EXPECT_EQ(RunWith(o).message(),
            "--pattern: all-nodes runs collectives over groups of nodes; the network test "
            "measures pairs (pair-wise, ring, topology)");
  o.pattern = "star";
  EXPECT_EQ(RunWith(o).code(), StatusCode::kInvalidArgument);
  o.pattern = "pair-wise";
  o.measure = "jitter";
  EXPECT_EQ(RunWith(o).message(), "--measure: \"jitter\" is not one of bandwidth, latency, both");
  o.measure = "both";
  o.transfer_s = 0;
  EXPECT_EQ(RunWith(o).message(), "--transfer: must be a positive duration");
  o.transfer_s = 1;
  o.launcher = "ssh";
  EXPECT_EQ(RunWith(o).message(), "--launcher: \"ssh\" is not one of mpirun, srun");
  o.launcher = "mpirun";
  o.collective_pattern = "pair-wise";
  EXPECT_EQ(RunWith(o).message(),
            "--collective-pattern: pair-wise measures pairs; collectives run over groups "
            "(all-nodes, k-batch) or none");
  o.collective_pattern = "k-batch";
  o.collectives = {"all-reduce", "all-sum"};
  EXPECT_EQ(RunWith(o).message(),
            "--collective: \"all-sum\" is not a collective: all-reduce, all-gather, "
            "reduce-scatter, all-to-all");
  o.collectives = {"all-reduce"};
  o.collective_size = "lots";
  EXPECT_EQ(RunWith(o).message(),
            "--collective-size: \"lots\" is not a size of 4 bytes or more (e.g. 1G)");
  o.collective_size = "1G";
  o.group_size = 1;
  EXPECT_EQ(RunWith(o).message(), "--group-size: must be at least 2");
}

TEST(FleetNcclTest, ThePrepareCountsAndTheRunJoinsThroughNcclCommId) {
  Result<cluster::CommandSpec> prepare =
      FleetNcclCommand("/opt/vigil", {{"kind", "collective-prepare"}, {"timeout_s", 30}});
  ASSERT_TRUE(prepare.ok());
  EXPECT_EQ(prepare->argv, (std::vector<std::string>{"/opt/vigil", "fleet", "nccl", "--count"}));
  EXPECT_EQ(prepare->timeout_s, 30);
  EXPECT_TRUE(prepare->env.empty());

  const nlohmann::json task = {{"kind", "collective"},
                               {"comm_id", "10.0.0.1:41000"},
                               {"ranks", 8},
                               {"first_rank", 8},
                               {"world", 16},
                               {"ops", {"allreduce", "alltoall"}},
                               {"bytes", 1073741824.0},
                               {"warmup", 5},
                               {"iterations", 20},
                               {"samples", 5},
                               {"timeout_s", 300}};
  Result<cluster::CommandSpec> run = FleetNcclCommand("/opt/vigil", task);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->argv,
            (std::vector<std::string>{
                "/opt/vigil", "fleet",        "nccl",    "--ranks",   "8",          "--first-rank",
                "8",          "--world",      "16",      "--size",    "1073741824", "--warmup",
                "5",          "--iterations", "20",      "--samples", "5",          "--op",
                "allreduce",  "--op",         "alltoall"}));
  EXPECT_EQ(run->env, (std::vector<std::string>{"NCCL_COMM_ID=10.0.0.1:41000"}));
  EXPECT_EQ(run->timeout_s, 300);

  EXPECT_EQ(FleetNcclCommand("/opt/vigil", {{"kind", "collective"}}).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(FleetNcclTest, TheAnswerIsTheLastJsonLineAfterNcclsOwn) {
  const std::string out =
      "gpu-001:1234:1234 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
      "{\"ranks\":8,\"busbw_gbs\":[181.5]}\n"
      "gpu-001:1234:1240 [0] NCCL INFO comm 0x55 rank 0 nranks 16 - Destroy COMPLETE\n\n";
  Result<nlohmann::json> j = LastJsonLine(out);
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_EQ((*j)["ranks"], 8);
  EXPECT_EQ(LastJsonLine("NCCL INFO only\n[1,2]\n").status().code(), StatusCode::kInternal);
  EXPECT_FALSE(LastJsonLine("").ok());
  EXPECT_FALSE(LastJsonLine("\n\n").ok());
}

TEST(FleetNcclTest, BadOpsAndRanksAreRefusedBeforeAnyGpuIsTouched) {
  FleetNcclOptions o;
  o.world = 16;
  o.first_rank = 8;
  o.ranks = 8;
  o.ops = {"broadcast"};
  EXPECT_EQ(RunFleetNccl(o).status().code(), StatusCode::kInvalidArgument);
  o.ops = {"all-reduce"};
  o.first_rank = 9;  // 9 + 8 ranks > 16
  EXPECT_EQ(RunFleetNccl(o).status().code(), StatusCode::kInvalidArgument);
  o.first_rank = 8;
  o.ranks = 0;
  EXPECT_EQ(RunFleetNccl(o).status().code(), StatusCode::kInvalidArgument);
  o.ranks = 8;
  o.first_rank = 0;
  o.size = "0";
  EXPECT_EQ(RunFleetNccl(o).status().code(), StatusCode::kInvalidArgument);
}

TEST(FleetCommandTest, AHostListLineThatDoesNotResolveIsNamed) {
  testing::TempDir dir;
  std::ofstream(dir.File("hosts")) << "localhost rack=a\n\nno-such-host.invalid rack=b\n";
  FleetCommandOptions o;
  o.hosts = dir.File("hosts");
  const Status s = RunWith(o);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message().rfind(dir.File("hosts") + ":3: host: \"no-such-host.invalid\"", 0), 0u)
      << s.message();
}

TEST(FleetCommandTest, SrunOutsideAnAllocationNeedsToKnowHowManyNodes) {
  unsetenv("SLURM_JOB_NUM_NODES");
  FleetCommandOptions o;
  o.launcher = "srun";
  EXPECT_EQ(RunWith(o).message(),
            "--launcher srun outside a Slurm allocation needs --nodes or --hosts (no "
            "$SLURM_JOB_NUM_NODES)");
}

TEST(FleetCommandTest, AnOutDirectoryThatCannotBeMadeIsRefusedFirst) {
  testing::TempDir dir;
  std::ofstream(dir.File("hosts")) << "localhost\n";
  std::ofstream(dir.File("file")) << "x";
  FleetCommandOptions o;
  o.hosts = dir.File("hosts");
  o.out = dir.File("file") + "/out";
  EXPECT_FALSE(RunWith(o).ok());
}

FleetCommandResult TwoNodesOneSlow() {
  FleetCommandResult r;
  r.run.nodes = {{{"a", "", 1}, true, "", "{}"}, {{"b", "", 2}, false, "did not register", ""}};
  r.run.pairs = {{"a", "c", 9.5, 12, "", {}}, {"c", "a", 0.4, 12, "", {}}};
  r.run.rounds = 1;
  cluster::Culprit c;
  c.kind = cluster::CulpritKind::kLink;
  c.subject = "c-a";
  c.direction = "c->a";
  c.ratio = 0.04;
  c.slow_pairs = 1;
  c.pairs = 1;
  c.evidence = "slow from c to a";
  r.culprits = {{"bandwidth", c}};
  r.exit_code = 1;
  return r;
}

TEST(FleetCommandTest, TheTextSaysEachNodeThenTheCulpritsThenTheCount) {
  const std::string text = FleetResultText(TwoNodesOneSlow());
  EXPECT_NE(text.find("a                        answered   9.5 Gbit/s       suite done"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("b                        no answer  -                did not register"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("culprit: link c-a (c->a, bandwidth): slow from c to a"), std::string::npos);
  EXPECT_NE(text.find("1 of 2 nodes answered, 2 pairs in 1 rounds, 1 culprit\n"), std::string::npos)
      << text;
}

TEST(FleetCommandTest, EachGroupsCollectiveIsALineAndAJsonEntry) {
  FleetCommandResult r;
  r.run.collectives = {{1, {"a", "b"}, 16, "allreduce", 1 << 30, 181.25, ""},
                       {1, {"c", "d"}, 0, "allreduce", 1 << 30, -1, "d: no NVIDIA driver"}};
  r.exit_code = 1;
  const std::string text = FleetResultText(r);
  EXPECT_NE(text.find("collective allreduce round 1 on a,b (16 GPUs): 181.2 GB/s bus bandwidth\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("collective allreduce round 1 on c,d (0 GPUs): d: no NVIDIA driver\n"),
            std::string::npos)
      << text;
  const Json j = FleetResultJson(r);
  ASSERT_EQ(j["collectives"].size(), 2u);
  EXPECT_EQ(j["collectives"][0]["members"], Json({"a", "b"}));
  EXPECT_EQ(j["collectives"][0]["busbw_gbs"], 181.25);
  EXPECT_EQ(j["collectives"][0]["gpus"], 16);
  EXPECT_TRUE(j["collectives"][1]["busbw_gbs"].is_null());
  EXPECT_EQ(j["collectives"][1]["error"], "d: no NVIDIA driver");
}

TEST(FleetCommandTest, ANodesSlowRdmaNicIsNamedOnItsRailAndMeasureAndNothingElse) {
  cluster::FleetRunOutcome run;
  const std::vector<std::string> nodes = {"a", "b", "c", "d", "e", "f"};
  for (const std::string& n : nodes) run.nodes.push_back({{n, "", 0}, true, "", ""});
  for (const std::string& from : nodes) {
    for (const std::string& to : nodes) {
      if (from == to) continue;
      cluster::FleetPairOutcome p{from, to, 9.5, -1, "", {}};
      // c's NIC 3 trained at half speed: slow whichever way, on that rail only; e's NIC 1 has
      // four times the latency of the others (its bandwidth is fine).
      for (int i = 0; i < 4; ++i) {
        const bool slow = i == 3 && (from == "c" || to == "c");
        const bool late = i == 1 && (from == "e" || to == "e");
        p.rdma.push_back({i, fmt::format("mlx5_{}", i), slow ? 98.0 : 196.0 + i, "",
                          late ? 8.0 : 2.0 + 0.01 * i});
      }
      run.pairs.push_back(std::move(p));
    }
  }
  Result<std::vector<cluster::NamedCulprit>> named = LocateCulprits(run);
  ASSERT_TRUE(named.ok()) << named.status().ToString();
  ASSERT_EQ(named->size(), 2u);
  EXPECT_EQ((*named)[0].measure, "rdma latency NIC 1");
  EXPECT_EQ((*named)[0].culprit.subject, "e");
  EXPECT_EQ((*named)[1].measure, "rdma NIC 3");
  EXPECT_EQ((*named)[1].culprit.kind, cluster::CulpritKind::kNode);
  EXPECT_EQ((*named)[1].culprit.subject, "c");
  EXPECT_EQ((*named)[1].culprit.direction, "both");
}

TEST(FleetCommandTest, TheJsonHoldsNodesCulpritsAndTheExitCode) {
  const Json j = FleetResultJson(TwoNodesOneSlow());
  EXPECT_EQ(j["nodes"][1]["error"], "did not register");
  EXPECT_EQ(j["culprits"][0]["measure"], "bandwidth");
  EXPECT_EQ(j["culprits"][0]["kind"], "link");
  EXPECT_EQ(j["culprits"][0]["direction"], "c->a");
  EXPECT_EQ(j["exit_code"], 1);
  EXPECT_EQ(j["pairs"], 2);
}

}  // namespace
}  // namespace vigil::agent
