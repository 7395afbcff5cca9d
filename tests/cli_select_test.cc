// End-to-end tests of `vigil select` through the built binary, on a history the fleet simulator
// emits (docs/select.md).
#include <gtest/gtest.h>

#include "vigil/core/file.h"
#include "vigil/core/json.h"
#include "vigil/select/fleet_sim.h"
#include "vigil/testing/temp_dir.h"
#include "vigil_process.h"

namespace vigil::testing {
namespace {

// 150 nodes for 90 days under the weekly full suite, written once.
const std::string& HistoryFile() {
  static TempDir dir;
  static const std::string path = [] {
    select::FleetSimParams params;
    params.nodes = 150;
    params.days = 90;
    params.seed = 3;
    select::PolicyOptions weekly;
    weekly.kind = select::PolicyKind::kWeekly;
    const std::string p = dir.path() + "/history.jsonl";
    const auto outcome = select::SimulateFleet(params, weekly);
    EXPECT_TRUE(outcome.ok());
    EXPECT_TRUE(WriteFileAtomic(p, select::HistoryToJsonl(outcome->history)).ok());
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

}  // namespace
}  // namespace vigil::testing
