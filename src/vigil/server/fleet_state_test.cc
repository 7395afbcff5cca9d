#include "vigil/server/fleet_state.h"

#include <gtest/gtest.h>

#include <cmath>

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

namespace vigil::server {
namespace {

store::NodeState StateOf(std::string name, Verdict verdict) {
  store::NodeState n;
  n.node = std::move(name);
  n.verdict = verdict;
  return n;
}

std::vector<std::string> Names(const FleetRanking& r) {
  std::vector<std::string> out;
  for (const RankedNode& n : r.nodes) out.push_back(n.node.node);
  return out;
}

// Six nodes: two defective, one unjudged, three healthy at different distances from their limits.
void AddRankedFleet(FleetState& state) {
  const auto add = [&](std::string node, int64_t id, Verdict v, double used,
                       std::vector<std::string> failing = {}) {
    state.Uploaded(UploadOf(node, id, v, std::move(failing)));
    if (!std::isnan(used))
      state.Nearest(node, id, NearestLimit{"gemm-flops/fp16_flops:0", used, 1});
  };
  add("healthy-far", 1, Verdict::kHealthy, 0.1);
  add("healthy-near", 2, Verdict::kHealthy, 0.9);
  add("healthy-unranked", 3, Verdict::kHealthy, std::nan(""));
  add("new-node", 4, Verdict::kUnjudged, std::nan(""));
  add("broken-a", 5, Verdict::kDefective, 1.5, {"GPU 3"});
  add("broken-b", 6, Verdict::kDefective, INFINITY, {"NIC 1"});
}

TEST(FleetRankingTest, TheWorstNodesComeFirst) {
  FleetState state;
  AddRankedFleet(state);
  const FleetRanking r = state.Ranked({});
  EXPECT_EQ(Names(r), (std::vector<std::string>{"broken-b", "broken-a", "new-node", "healthy-near",
                                                "healthy-far", "healthy-unranked"}));
  EXPECT_EQ(r.matched, 6u);
  EXPECT_EQ(r.pages, 1u);
  EXPECT_EQ(r.nodes[3].nearest.used, 0.9);
  EXPECT_EQ(r.gauges.Nodes(Verdict::kDefective), 2);
}

TEST(FleetRankingTest, EqualNodesAreOrderedByName) {
  RankedNode a{StateOf("a", Verdict::kHealthy), {"m", 0.5, 1}};
  RankedNode b = a;
  b.node.node = "b";
  EXPECT_TRUE(WorseFirst(a, b));
  EXPECT_FALSE(WorseFirst(b, a));
  EXPECT_FALSE(WorseFirst(a, a));
}

TEST(FleetRankingTest, PagesSplitTheRankingAndAPagePastTheLastShowsTheLast) {
  FleetState state;
  AddRankedFleet(state);
  FleetQuery q;
  q.per_page = 4;
  FleetRanking r = state.Ranked(q);
  EXPECT_EQ(r.pages, 2u);
  EXPECT_EQ(r.page, 0u);
  EXPECT_EQ(Names(r),
            (std::vector<std::string>{"broken-b", "broken-a", "new-node", "healthy-near"}));
  q.page = 1;
  r = state.Ranked(q);
  EXPECT_EQ(Names(r), (std::vector<std::string>{"healthy-far", "healthy-unranked"}));
  q.page = 7;
  r = state.Ranked(q);
  EXPECT_EQ(r.page, 1u);
  EXPECT_EQ(r.matched, 6u);
  EXPECT_EQ(Names(r), (std::vector<std::string>{"healthy-far", "healthy-unranked"}));
}

TEST(FleetRankingTest, SearchMatchesNamesHardwareAndComponentsIgnoringCase) {
  FleetState state;
  AddRankedFleet(state);
  FleetQuery q;
  q.search = "HEALTHY-N";
  EXPECT_EQ(Names(state.Ranked(q)), (std::vector<std::string>{"healthy-near"}));
  q.search = "nic";
  EXPECT_EQ(Names(state.Ranked(q)), (std::vector<std::string>{"broken-b"}));
  q.search = "h100";
  EXPECT_EQ(state.Ranked(q).matched, 6u);
  q.search = "nothing like it";
  const FleetRanking none = state.Ranked(q);
  EXPECT_EQ(none.matched, 0u);
  EXPECT_EQ(none.pages, 0u);
  EXPECT_TRUE(none.nodes.empty());
  // The filter and the search together.
  q.search = "broken";
  q.filter.verdict = Verdict::kHealthy;
  EXPECT_EQ(state.Ranked(q).matched, 0u);
}

TEST(FleetRankingTest, TheNearestLimitFollowsTheLatestUploadOnly) {
  FleetState state;
  state.Uploaded(UploadOf("a", 1, Verdict::kHealthy));
  state.Nearest("a", 1, NearestLimit{"m", 0.5, 1});
  state.Nearest("a", 7, NearestLimit{"m", 0.9, 1});  // not its latest upload: ignored
  EXPECT_EQ(state.Ranked({}).nodes[0].nearest.used, 0.5);
  state.Uploaded(UploadOf("a", 2, Verdict::kHealthy));  // the old figure goes with its upload
  EXPECT_FALSE(state.Ranked({}).nodes[0].nearest.known());
  state.Renamed("a", "b");
  state.Nearest("b", 2, NearestLimit{"m", 0.25, 1});
  EXPECT_EQ(state.Ranked({}).nodes[0].nearest.used, 0.25);
}

}  // namespace
}  // namespace vigil::server
