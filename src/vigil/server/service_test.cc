#include "vigil/server/service.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <tuple>

#include "vigil/core/json.h"
#include "vigil/eval/fleet_gen.h"
#include "vigil/learned/criteria.h"
#include "vigil/learned/judge.h"
#include "vigil/learned/learn.h"
#include "vigil/store/sqlite_store.h"
#include "vigil/testing/healthy_fleet.h"
#include "vigil/testing/temp_dir.h"

namespace vigil::server {
namespace {

learned::LearnedCriteria TwoBenchmarks() {
  learned::LearnedCriteria c;
  learned::ClassModel& m = c.classes.emplace_back();
  m.hardware = "8xH100";
  for (const auto& [family, index, centre] :
       {std::tuple{"cpu-stream/triad_gbps", "", 100.0}, {"gpu-gemm/bf16_tflops", "0", 900.0}}) {
    learned::FamilyModel& f = m.families.emplace_back();
    f.family = family;
    f.direction = Direction::kHigher;
    f.modes.push_back(learned::Mode{centre, centre / 100, centre, centre / 100, 100});
    f.limit = 6;
    f.samples = 100;
    f.members = {*index == '\0' ? std::string(family) : fmt::format("{}:{}", family, index)};
  }
  return c;
}

// One node of 8xH100 that ran gpu-gemm only, at the fleet's centre.
FleetTable GemmOnly() {
  return TableOfRows({FleetRow{"n1", {{"gpu-gemm/bf16_tflops:0", 900.0}}, "8xH100"}}, "test");
}

TEST(ActiveCriteriaTest, PreparesOncePerSetOfBenchmarksAndKeys) {
  const ActiveCriteria active(3, TwoBenchmarks());
  const FleetTable gemm = GemmOnly();
  const auto prepared = active.For({"gpu-gemm"}, gemm.metrics());
  // Judged by gpu-gemm's criteria alone: the stream family it did not run is not missing.
  const std::vector<learned::NodeFindings> v = prepared->Judge(gemm, 1);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_FALSE(v[0].defective);
  // By the whole criteria it would be (the check that the restriction matters).
  EXPECT_TRUE(learned::Judge(gemm, active.criteria, 1)[0].defective);
  // The same set in any order with the same keys is the same preparation, made once; other
  // keys or another set are another.
  const auto both = active.For({"gpu-gemm", "cpu-stream"}, gemm.metrics());
  EXPECT_EQ(active.For({"cpu-stream", "gpu-gemm"}, gemm.metrics()), both);
  EXPECT_NE(both, prepared);
  EXPECT_EQ(active.For({"gpu-gemm"}, gemm.metrics()), prepared);
  EXPECT_NE(active.For({"gpu-gemm"}, {"gpu-gemm/bf16_tflops:1"}), prepared);
  // The criteria themselves are untouched.
  EXPECT_EQ(active.criteria.classes[0].families.size(), 2u);
}

class FleetServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<store::Store>> s =
        store::OpenSqliteStore(dir_.File("fleet.db"), {.sync_full = false});
    ASSERT_TRUE(s.ok()) << s.status().message();
    store_ = std::move(s).value();
    service_ = std::make_unique<FleetService>(*store_, clock_, learned::LearnOptions{});
    ASSERT_TRUE(service_->Start().ok());
  }

  testing::TempDir dir_;
  FakeClock clock_{1.8e9};
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<FleetService> service_;
};

// Criteria an older vigil learned (another schema) do not stop the service: it learns them again
// from the uploads it holds; with nothing to learn from it starts without criteria.
TEST_F(FleetServiceTest, CriteriaOfAnOlderSchemaAreLearnedAgainAtStart) {
  ASSERT_TRUE(store_->PutCriteria({0, 1.7e9, 3, "{\"schema\": \"vigil.criteria/2\"}"}).ok());
  FleetService empty(*store_, clock_, learned::LearnOptions{});
  ASSERT_TRUE(empty.Start().ok());
  EXPECT_EQ(empty.criteria(), nullptr);  // no upload to learn from

  ASSERT_TRUE(service_->Ingest(testing::SummaryLines(testing::HealthyFleet(8)), "upload").ok());
  ASSERT_TRUE(store_->PutCriteria({0, 1.7e9, 8, "{\"schema\": \"vigil.criteria/2\"}"}).ok());
  FleetService restarted(*store_, clock_, learned::LearnOptions{});
  ASSERT_TRUE(restarted.Start().ok());
  ASSERT_NE(restarted.criteria(), nullptr);
  EXPECT_EQ(restarted.criteria()->version, 3);  // learned after the two stored ones
  EXPECT_EQ(restarted.criteria()->criteria.classes.size(), 1u);
}

// An upload whose answer was lost is sent again: the same document, or the same summary line,
// is acknowledged with the first answer and stored once; another run of the node is new.
TEST_F(FleetServiceTest, AnUploadSentTwiceIsStoredOnce) {
  const std::vector<FleetRow> rows = testing::HealthyFleet(3);
  const std::string doc = DumpJson(ToJson(eval::NodeDocumentOf(rows[0], 3, 1)), 2);
  const std::vector<store::Upload> first = *service_->Ingest(doc, "upload");
  clock_.Advance(60);
  const std::vector<store::Upload> again = *service_->Ingest(doc, "upload");
  ASSERT_EQ(again.size(), 1u);
  EXPECT_TRUE(again[0].repeated);
  EXPECT_FALSE(first[0].repeated);
  EXPECT_EQ(again[0].id, first[0].id);
  EXPECT_EQ(again[0].verdict, first[0].verdict);
  EXPECT_DOUBLE_EQ(again[0].received, first[0].received);

  // Summary lines: the repeated one is recognised beside a new one.
  ASSERT_TRUE(service_->Ingest(testing::SummaryLines({rows[1]}), "upload").ok());
  const std::vector<store::Upload> lines =
      *service_->Ingest(testing::SummaryLines({rows[1], rows[2]}), "upload");
  EXPECT_TRUE(lines[0].repeated);
  EXPECT_FALSE(lines[1].repeated);

  // The same node's next run (another start time) is another upload.
  NodeResults next = eval::NodeDocumentOf(rows[0], 3, 1);
  next.start_time = "2027-01-01T00:00:00Z";
  EXPECT_FALSE(service_->Ingest(DumpJson(ToJson(next), 2), "upload")->at(0).repeated);

  EXPECT_EQ(store_->Node(rows[0].node)->uploads, 2);
  EXPECT_EQ(store_->Node(rows[1].node)->uploads, 1);
  EXPECT_EQ(service_->counters().uploads.load(), 4);
  EXPECT_EQ(service_->counters().repeated.load(), 2);
}

// A node that lost a GPU reports a class of its own ("7x ..."): a class of one, which cannot be
// learned from. The fleet learns from the rest, the answer names it, and every stored node's
// latest upload is judged by the new criteria.
TEST_F(FleetServiceTest, LearnLeavesOutAClassTooSmallAndJudgesStoredNodesAgain) {
  // Two classes, so that the odd node's is not judged by the only class learned (ClassFor).
  std::vector<FleetRow> rows = testing::HealthyFleet(30, 0.5);
  FleetRow slow = rows[7];
  for (auto& [key, value] : slow.values) {
    if (key.find("gemm") != std::string::npos && key.ends_with(":2")) value *= 0.6;
  }
  rows[7] = slow;
  FleetRow lost = rows[3];
  lost.node = "lost-a-gpu";
  lost.hardware = "7x " + lost.hardware;
  rows.push_back(lost);
  const std::vector<store::Upload> stored =
      *service_->Ingest(testing::SummaryLines(rows), "upload");
  EXPECT_EQ(VerdictName(stored[0].verdict), "unjudged");

  const Result<LearnReport> report = service_->Learn();
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->criteria.version, 1);
  EXPECT_EQ(report->criteria.nodes, 30);
  ASSERT_EQ(report->left_out.size(), 1u);
  EXPECT_EQ(report->left_out[0].hardware, lost.hardware);
  EXPECT_EQ(report->left_out[0].nodes, std::vector<std::string>{"lost-a-gpu"});
  EXPECT_EQ(report->rejudged, 31);
  EXPECT_EQ(report->changed, 30);  // the node of its own class stays unjudged

  const store::NodeState judged = *store_->Node(rows[0].node);
  EXPECT_EQ(VerdictName(judged.verdict), "healthy");
  const store::NodeState bad = *store_->Node(slow.node);
  EXPECT_EQ(VerdictName(bad.verdict), "defective");
  EXPECT_EQ(bad.failing, std::vector<ComponentId>{ParseComponent("GPU 2")});
  EXPECT_EQ(store_->History(slow.node, 1, false)->at(0).criteria_version, 1);
  EXPECT_EQ(VerdictName(store_->Node("lost-a-gpu")->verdict), "unjudged");

  // Retired, it is left out of learning altogether.
  ASSERT_TRUE(service_->Retire("lost-a-gpu").ok());
  const Result<LearnReport> second = service_->Learn();
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_TRUE(second->left_out.empty());
  EXPECT_EQ(second->rejudged, 30);
}

TEST_F(FleetServiceTest, LearnFailsOnlyWhenNothingCanBeLearned) {
  EXPECT_EQ(service_->Learn().status().code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(service_->Ingest(testing::SummaryLines(testing::HealthyFleet(2)), "upload").ok());
  const Result<LearnReport> r = service_->Learn();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("no hardware class has the 5 nodes needed"),
            std::string::npos)
      << r.status().message();
  EXPECT_EQ(service_->criteria(), nullptr);
}

}  // namespace
}  // namespace vigil::server
