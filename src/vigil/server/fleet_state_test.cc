#include "vigil/server/fleet_state.h"

#include <gtest/gtest.h>

namespace vigil::server {
namespace {

store::Upload UploadOf(std::string node, int64_t id, Verdict verdict,
                       std::vector<std::string> failing = {}) {
  store::Upload u;
  u.id = id;
  u.node = std::move(node);
  u.hardware = "8x H100";
  u.received = static_cast<double>(id);
  u.verdict = verdict;
  for (const std::string& c : failing) u.failing.push_back(ParseComponent(c));
  return u;
}

std::vector<std::string> Names(const FleetSnapshot& s) {
  std::vector<std::string> out;
  for (const store::NodeState& n : s.nodes) out.push_back(n.node);
  return out;
}

TEST(FleetStateTest, UploadsMakeEachNodesLatestAndTheGaugesFollow) {
  FleetState state;
  state.Uploaded(UploadOf("b", 1, Verdict::kHealthy));
  state.Uploaded(UploadOf("a", 2, Verdict::kDefective, {"GPU 3", "GPU 5", "NIC 1"}));
  state.Uploaded(UploadOf("c", 3, Verdict::kUnjudged));
  FleetSnapshot s = state.Snapshot({});
  EXPECT_EQ(Names(s), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(s.gauges.Nodes(Verdict::kHealthy), 1);
  EXPECT_EQ(s.gauges.Nodes(Verdict::kDefective), 1);
  EXPECT_EQ(s.gauges.Nodes(Verdict::kUnjudged), 1);
  EXPECT_EQ(s.gauges.by_component, (std::map<std::string, int64_t>{{"GPU", 2}, {"NIC", 1}}));

  // a is repaired: its components leave the gauges.
  state.Uploaded(UploadOf("a", 4, Verdict::kHealthy));
  s = state.Snapshot({Verdict::kHealthy, "", false});
  EXPECT_EQ(Names(s), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(s.nodes[0].uploads, 2);
  EXPECT_EQ(s.nodes[0].last_upload, 4);
  EXPECT_TRUE(s.gauges.by_component.empty());
  EXPECT_EQ(s.gauges.Nodes(Verdict::kDefective), 0);
}

TEST(FleetStateTest, AnEarlierUploadReportedLateOnlyCounts) {
  FleetState state;
  state.Uploaded(UploadOf("a", 5, Verdict::kDefective, {"GPU 1"}));
  state.Uploaded(UploadOf("a", 4, Verdict::kHealthy));
  const FleetSnapshot s = state.Snapshot({});
  ASSERT_EQ(s.nodes.size(), 1u);
  EXPECT_EQ(s.nodes[0].verdict, Verdict::kDefective);
  EXPECT_EQ(s.nodes[0].last_upload, 5);
  EXPECT_EQ(s.nodes[0].uploads, 2);
}

TEST(FleetStateTest, NewVerdictsApplyOnlyToTheLatestUpload) {
  FleetState state;
  state.Uploaded(UploadOf("a", 1, Verdict::kUnjudged));
  state.Uploaded(UploadOf("a", 2, Verdict::kUnjudged));
  state.Rejudged("a", {1, Verdict::kDefective, 7, {ParseComponent("GPU 0")}, "[]"});
  EXPECT_EQ(state.Snapshot({}).nodes[0].verdict, Verdict::kUnjudged);
  state.Rejudged("a", {2, Verdict::kDefective, 7, {ParseComponent("GPU 0")}, "[]"});
  const FleetSnapshot s = state.Snapshot({});
  EXPECT_EQ(s.nodes[0].verdict, Verdict::kDefective);
  EXPECT_EQ(s.gauges.Nodes(Verdict::kDefective), 1);
  EXPECT_EQ(s.gauges.Nodes(Verdict::kUnjudged), 0);
  EXPECT_EQ(s.gauges.by_component.at("GPU"), 1);
  state.Rejudged("nobody", {2, Verdict::kHealthy, 7, {}, "[]"});  // ignored
}

TEST(FleetStateTest, RetiredNodesLeaveTheFleetAndComeBackByUploading) {
  FleetState state;
  state.Uploaded(UploadOf("a", 1, Verdict::kDefective, {"NIC 2"}));
  state.Uploaded(UploadOf("b", 2, Verdict::kHealthy));
  state.Retired("a", 100);
  state.Retired("a", 200);  // keeps the first time
  FleetSnapshot s = state.Snapshot({});
  EXPECT_EQ(Names(s), std::vector<std::string>{"b"});
  EXPECT_EQ(s.gauges.Nodes(Verdict::kDefective), 0);
  EXPECT_TRUE(s.gauges.by_component.empty());
  s = state.Snapshot({std::nullopt, "", true});
  ASSERT_EQ(s.nodes.size(), 1u);
  EXPECT_EQ(s.nodes[0].retired, 100);

  state.Uploaded(UploadOf("a", 3, Verdict::kHealthy));
  s = state.Snapshot({});
  EXPECT_EQ(Names(s), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(s.nodes[0].retired, 0);
  EXPECT_EQ(s.nodes[0].uploads, 2);
  EXPECT_EQ(s.gauges.Nodes(Verdict::kHealthy), 2);
}

TEST(FleetStateTest, RenamedNodesKeepTheirPlaceInOrderAndResetReplacesAll) {
  FleetState state;
  state.Uploaded(UploadOf("a", 1, Verdict::kHealthy));
  state.Uploaded(UploadOf("b", 2, Verdict::kHealthy));
  state.Renamed("a", "z");
  FleetSnapshot s = state.Snapshot({});
  EXPECT_EQ(Names(s), (std::vector<std::string>{"b", "z"}));
  EXPECT_EQ(s.gauges.Nodes(Verdict::kHealthy), 2);

  store::NodeState kept;
  kept.node = "k";
  kept.verdict = Verdict::kDefective;
  kept.failing = {ParseComponent("HBM 1")};
  store::NodeState gone = kept;
  gone.node = "g";
  gone.retired = 5;
  state.Reset({kept, gone});
  s = state.Snapshot({});
  EXPECT_EQ(Names(s), std::vector<std::string>{"k"});
  EXPECT_EQ(s.gauges.Nodes(Verdict::kHealthy), 0);
  EXPECT_EQ(s.gauges.Nodes(Verdict::kDefective), 1);
  EXPECT_EQ(s.gauges.by_component, (std::map<std::string, int64_t>{{"HBM", 1}}));
}

}  // namespace
}  // namespace vigil::server
