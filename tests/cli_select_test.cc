// End-to-end tests of `vigil select` through the built binary, on a history the fleet simulator
// emits (docs/select.md); `--submit` against a real Slurm (Debian's slurmctld and slurmd on
// loopback).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <map>
#include <thread>

#include "vigil/core/file.h"
#include "vigil/core/json.h"
#include "vigil/select/fleet_sim.h"
#include "vigil/testing/slurm_cluster.h"
#include "vigil/testing/temp_dir.h"
#include "vigil_process.h"

namespace vigil::testing {
namespace {

// 150 nodes for 90 days under the weekly full suite, written once.
const std::string& HistoryFile() {
  static TempDir dir;
  static const std::string path = [] {
    const std::string p = dir.path() + "/history.jsonl";
    EXPECT_TRUE(
        WriteFileAtomic(p, select::HistoryToJsonl(*select::WeeklyHistory(150, 90, 3))).ok());
    return p;
  }();
  return path;
}

TEST(SelectCliTest, PrintsAPlanAsJsonAndAsATable) {
  const ProcessResult r =
      RunVigil({"select", "--history", HistoryFile(), "--max-share", "0.1", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Result<Json> j = ParseJson(r.out, "stdout");
  ASSERT_TRUE(j.ok()) << r.out;
  EXPECT_EQ((*j)["model"]["kind"], "cox");
  ASSERT_FALSE((*j)["validations"].empty());
  EXPECT_LE((*j)["validations"].size(), 15u);
  const Json& first = (*j)["validations"][0];
  EXPECT_FALSE(first["benchmarks"].empty());
  EXPECT_GT(first["averted_node_hours"].get<double>(), first["cost_node_hours"].get<double>());
  EXPECT_EQ((*j)["suite"].size(), 10u);

  const ProcessResult table = RunVigil({"select", "--history", HistoryFile(), "--budget", "2"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("risk model: cox"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("BENCHMARKS"), std::string::npos);
}

TEST(SelectCliTest, ReadsADirectoryOfHistoryFiles) {
  TempDir dir;
  const Result<std::string> text = ReadFile(HistoryFile());
  ASSERT_TRUE(text.ok());
  ASSERT_TRUE(WriteFileAtomic(dir.path() + "/a.jsonl", *text).ok());
  const ProcessResult r = RunVigil({"select", "--history", dir.path(), "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(SelectCliTest, BadHistoryIsExitTwoNamingFileLineAndField) {
  TempDir dir;
  const std::string path = dir.path() + "/bad.jsonl";
  ASSERT_TRUE(
      WriteFileAtomic(path,
                      "{\"format\":\"vigil-history\",\"version\":1,\"start\":0,\"end\":9}\n"
                      "{\"record\":\"node\",\"node\":\"n1\",\"class\":\"H100\",\"joined\":5}\n"
                      "{\"record\":\"incident\",\"node\":\"n1\",\"time\":1,\"kind\":\"GPU\","
                      "\"cost_node_hours\":1}\n")
          .ok());
  const ProcessResult r = RunVigil({"select", "--history", path});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bad.jsonl:3: time: before node \"n1\" joined the fleet"), std::string::npos)
      << r.err;
  EXPECT_TRUE(r.out.empty());

  ASSERT_TRUE(WriteFileAtomic(path, "{\"format\":\"vigil-history\",\"version\":7}\n").ok());
  const ProcessResult version = RunVigil({"select", "--history", path});
  EXPECT_EQ(version.exit_code, 2);
  EXPECT_NE(version.err.find("version 7 is not supported"), std::string::npos) << version.err;

  // A history without incidents: no rate can be learned, and no plan is made from nothing.
  ASSERT_TRUE(
      WriteFileAtomic(path,
                      "{\"format\":\"vigil-history\",\"version\":1,\"start\":0,\"end\":9}\n"
                      "{\"record\":\"node\",\"node\":\"n1\",\"class\":\"H100\",\"joined\":5}\n"
                      "{\"record\":\"validation\",\"node\":\"n1\",\"time\":6,"
                      "\"benchmarks\":[{\"name\":\"gemm\",\"seconds\":60}],\"findings\":[]}\n")
          .ok());
  const ProcessResult empty = RunVigil({"select", "--history", path});
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_NE(empty.err.find("no incident"), std::string::npos) << empty.err;

  const ProcessResult missing = RunVigil({"select", "--history", dir.path() + "/none.jsonl"});
  EXPECT_NE(missing.exit_code, 0);
  const ProcessResult share = RunVigil({"select", "--history", HistoryFile(), "--max-share", "2"});
  EXPECT_EQ(share.exit_code, 2);
  EXPECT_NE(share.err.find("--max-share"), std::string::npos);
}

// The simulated history with three of its nodes named as a test Slurm's: two with a slurmd, one
// without (not responding); the 147 others are not in Slurm.
std::string SlurmHistory(const std::string& dir) {
  select::History history = select::WeeklyHistory(150, 90, 3).value();
  history.nodes[0].name = "vnode0";
  history.nodes[1].name = "vnode1";
  history.nodes[2].name = "vidle0";
  const std::string path = dir + "/slurm-history.jsonl";
  EXPECT_TRUE(WriteFileAtomic(path, select::HistoryToJsonl(history)).ok());
  return path;
}

TEST(SelectCliTest, SubmitsThePlanToARealSlurmOnceANode) {
  TempDir dir;
  SlurmClusterOptions shape;
  shape.nodes = 2;
  shape.idle_nodes = 1;
  Result<std::unique_ptr<SlurmCluster>> cluster = SlurmCluster::Start(dir.path(), shape);
  if (!cluster.ok()) GTEST_SKIP() << "Slurm cannot start here: " << cluster.status().message();
  const std::string history = SlurmHistory(dir.path());
  const std::string gate = dir.path() + "/go";
  // Each job waits for the gate, then writes the benchmarks it was given to <node>.ran, whole:
  // `echo > <node>.ran` creates the file before it writes the line, and the test, polling for the
  // file, read it empty in between (a CI run).
  const std::string command = fmt::format(
      "while [ ! -e {0} ]; do sleep 0.1; done; echo {{benchmarks}} > {1}/{{node}}.part && "
      "mv {1}/{{node}}.part {1}/{{node}}.ran",
      gate, dir.path());
  const std::vector<std::string> flags = {"select",
                                          "--history",
                                          history,
                                          "--submit",
                                          "--slurm-conf",
                                          (*cluster)->conf(),
                                          "--max-share",
                                          "0.1",
                                          "--cost-weight",
                                          "0.001",
                                          "--job-output",
                                          dir.path() + "/%j.out",
                                          "--submit-command",
                                          command};

  // The default command runs `vigil run --bench`, which does not know the simulator's benchmarks:
  // refused before anything is submitted.
  const ProcessResult unknown =
      RunVigil({"select", "--history", history, "--submit", "--slurm-conf", (*cluster)->conf(),
                "--max-share", "0.1", "--cost-weight", "0.001", "--dry-run"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("--submit-command"), std::string::npos) << unknown.err;

  std::vector<std::string> json_flags = flags;
  json_flags.push_back("--json");
  const ProcessResult r = RunVigil(json_flags);
  ASSERT_EQ(r.exit_code, 0) << r.err << (*cluster)->ControllerLog();
  const Result<Json> j = ParseJson(r.out, "stdout");
  ASSERT_TRUE(j.ok()) << r.out;
  EXPECT_EQ((*j)["slurm"]["idle"], 2);
  EXPECT_EQ((*j)["slurm"]["unavailable"], 1);
  EXPECT_EQ((*j)["slurm"]["not_in_slurm"], 147);
  ASSERT_EQ((*j)["submissions"].size(), 2u) << r.out;
  std::map<std::string, std::string> benchmarks;  // node -> what its job should write
  for (const Json& s : (*j)["submissions"]) {
    ASSERT_TRUE(s.contains("job_id")) << s.dump();
    std::string list;
    for (const Json& b : s["benchmarks"]) list += (list.empty() ? "" : ",") + b.get<std::string>();
    benchmarks[s["node"].get<std::string>()] = list;
  }
  EXPECT_EQ(benchmarks.count("vnode0") + benchmarks.count("vnode1"), 2u);

  // While they are queued or running, a second plan leaves both nodes alone.
  std::vector<std::string> again = flags;
  again.push_back("--dry-run");
  const ProcessResult second = RunVigil(again);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.out.find("2 validating"), std::string::npos) << second.out;
  EXPECT_NE(second.out.find(", 0 planned\n"), std::string::npos) << second.out;

  std::ofstream(gate) << "";
  for (const auto& [node, list] : benchmarks) {
    const std::string ran = dir.path() + "/" + node + ".ran";
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!std::ifstream(ran) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    std::string line;
    std::getline(std::ifstream(ran), line);
    EXPECT_EQ(line, list) << node << (*cluster)->ControllerLog();
  }

  const ProcessResult needs = RunVigil({"select", "--history", history, "--dry-run"});
  EXPECT_EQ(needs.exit_code, 2);
}

}  // namespace
}  // namespace vigil::testing
