// The behaviour every Store promises (store.h), checked on each implementation: the SQLite store
// and the in-memory one that tests of the layers above use. What only SQLite does (files,
// migrations, the WAL, damage) is in sqlite_store_test.cc.
#include "vigil/store/store.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "vigil/store/memory_store.h"
#include "vigil/store/sqlite_store.h"
#include "vigil/testing/store_uploads.h"
#include "vigil/testing/temp_dir.h"

namespace vigil::store {
namespace {

using testing::MakeUpload;
using Values = std::vector<std::pair<std::string, double>>;

// The components' names, to compare with the names written.
std::vector<std::string> Names(const std::vector<ComponentId>& components) {
  std::vector<std::string> out;
  for (const ComponentId& c : components) out.push_back(ComponentName(c));
  return out;
}

struct Implementation {
  std::string name;
  // A new, empty store; `dir` is a temporary directory of the test's own.
  std::function<std::unique_ptr<Store>(const std::string& dir)> open;
};

// Names the implementation in test listings (gtest would print its bytes).
void PrintTo(const Implementation& implementation, std::ostream* os) { *os << implementation.name; }

class StoreTest : public ::testing::TestWithParam<Implementation> {
 protected:
  std::unique_ptr<Store> Open() {
    std::unique_ptr<Store> store = GetParam().open(dir_.path());
    EXPECT_NE(store, nullptr);
    return store;
  }

 private:
  testing::TempDir dir_;
};

INSTANTIATE_TEST_SUITE_P(
    Implementations, StoreTest,
    ::testing::Values(Implementation{"Sqlite",
                                     [](const std::string& dir) -> std::unique_ptr<Store> {
                                       // No fsync at commits: what these tests check does not
                                       // depend on it.
                                       Result<std::unique_ptr<Store>> s =
                                           OpenSqliteStore(dir + "/fleet.db", {.sync_full = false});
                                       if (!s.ok()) ADD_FAILURE() << s.status().message();
                                       return s.ok() ? std::move(s).value() : nullptr;
                                     }},
                      Implementation{"Memory",
                                     [](const std::string&) { return NewMemoryStore(); }}),
    [](const ::testing::TestParamInfo<Implementation>& param) { return param.param.name; });

TEST_P(StoreTest, UploadsUpdateTheLatestStateAndTheHistory) {
  auto store = Open();
  std::vector<Upload> first = {MakeUpload("n1", "healthy", 100), MakeUpload("n2", "healthy", 101)};
  ASSERT_TRUE(store->PutUploads(first).ok());
  EXPECT_EQ(first[0].id, 1);
  EXPECT_EQ(first[1].id, 2);
  std::vector<Upload> second = {MakeUpload("n1", "defective", 200)};
  ASSERT_TRUE(store->PutUploads(second).ok());

  const std::vector<NodeState> all = *store->Nodes({});
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].node, "n1");
  EXPECT_EQ(VerdictName(all[0].verdict), "defective");
  EXPECT_EQ(all[0].uploads, 2);
  EXPECT_EQ(all[0].last_upload, 3);
  EXPECT_EQ(Names(all[0].failing), (std::vector<std::string>{"GPU 3", "NIC 5"}));
  EXPECT_DOUBLE_EQ(all[0].received, 200);

  EXPECT_EQ(store->Nodes({Verdict::kHealthy, ""})->size(), 1u);
  EXPECT_EQ(store->Nodes({std::nullopt, "8x A100"})->size(), 0u);
  EXPECT_EQ(store->Node("n2")->uploads, 1);
  EXPECT_EQ(store->Node("n9").status().code(), StatusCode::kNotFound);

  const std::vector<Upload> history = *store->History("n1", 10, false);
  ASSERT_EQ(history.size(), 2u);
  EXPECT_EQ(VerdictName(history[0].verdict), "defective");  // newest first
  EXPECT_EQ(VerdictName(history[1].verdict), "healthy");
  EXPECT_EQ(history[0].document, "");
  EXPECT_EQ(store->History("n1", 1, true)->at(0).document, R"({"schema": "vigil.results/1"})");

  const std::vector<Upload> latest = *store->LatestUploads();
  ASSERT_EQ(latest.size(), 2u);
  EXPECT_EQ(latest[0].id, 3);
  EXPECT_EQ(VerdictName(latest[0].verdict), "defective");
  EXPECT_EQ(latest[0].row.values, (Values{{"cpu-stream/triad_gbps", 200}}));  // n1's latest row
  EXPECT_EQ(latest[0].document, "");
  const StoreCounts counts = *store->Counts();
  EXPECT_EQ(counts.uploads, 3);
  EXPECT_EQ(counts.nodes, 2);
}

TEST_P(StoreTest, CriteriaAreVersioned) {
  auto store = Open();
  EXPECT_FALSE(store->Criteria(0)->has_value());
  EXPECT_EQ(*store->PutCriteria({0, 10, 5, "{\"a\": 1}"}), 1);
  EXPECT_EQ(*store->PutCriteria({0, 20, 6, "{\"a\": 2}"}), 2);
  EXPECT_EQ((*store->Criteria(0))->body, "{\"a\": 2}");
  EXPECT_EQ((*store->Criteria(1))->nodes, 5);
  EXPECT_FALSE(store->Criteria(3)->has_value());
  const std::vector<CriteriaVersion> versions = *store->CriteriaVersions();
  ASSERT_EQ(versions.size(), 2u);
  EXPECT_EQ(versions[1].version, 2);
  EXPECT_EQ(versions[1].body, "");
}

TEST_P(StoreTest, AlertsNewestFirstAndFiltered) {
  auto store = Open();
  std::vector<StoredAlert> alerts = {{0, 1, "m1", "rule", 10, "{}"},
                                     {0, 2, "m2", "divergence", 20, "{}"},
                                     {0, 3, "m1", "missing", 30, "{}"}};
  ASSERT_TRUE(store->PutAlerts(alerts).ok());
  EXPECT_EQ(alerts[2].id, 3);
  const std::vector<StoredAlert> m1 = *store->Alerts({"m1", 10});
  ASSERT_EQ(m1.size(), 2u);
  EXPECT_EQ(m1[0].kind, "missing");
  EXPECT_EQ(store->Alerts({"", 1})->size(), 1u);
}

TEST_P(StoreTest, AnIncidentReportedTwiceIsStoredOnce) {
  auto store = Open();
  std::vector<StoredIncident> first = {{0, 100, "n1", 50, "GPU", 12.5, "job-7", "Xid 79"},
                                       {0, 100, "n1", 50, "GPU", 12.5, "job-8", ""}};
  ASSERT_TRUE(store->PutIncidents(first).ok());
  // A retried request, an incident repeated in one request, and one that differs in kind only.
  std::vector<StoredIncident> again = {{0, 200, "n1", 50, "GPU", 12.5, "job-7", "Xid 79"},
                                       {0, 200, "n1", 50, "HBM", 12.5, "job-7", ""},
                                       {0, 200, "n1", 50, "HBM", 3, "job-7", "again"}};
  ASSERT_TRUE(store->PutIncidents(again).ok());
  EXPECT_TRUE(again[0].repeated);
  EXPECT_EQ(again[0].id, first[0].id);
  EXPECT_EQ(again[0].received, 100);
  EXPECT_FALSE(again[1].repeated);
  EXPECT_EQ(again[1].id, 3);
  EXPECT_TRUE(again[2].repeated);
  EXPECT_EQ(again[2].id, 3);
  EXPECT_FALSE(first[1].repeated);
  EXPECT_EQ(store->Incidents({"n1", 10})->size(), 3u);
}

TEST_P(StoreTest, IncidentsAndAlertsKeepEveryFieldNewestFirstFilteredAndFollowARename) {
  auto store = Open();
  std::vector<StoredIncident> incidents = {{0, 100, "n1", 50, "GPU", 12.5, "job-7", "Xid 79"},
                                           {0, 101, "n2", 60, "network", 0.25, "", ""},
                                           {0, 102, "n1", 70, "software", 0, "", "OOM"}};
  ASSERT_TRUE(store->PutIncidents(incidents).ok());
  EXPECT_EQ(incidents[0].id, 1);
  EXPECT_EQ(incidents[2].id, 3);
  const std::vector<StoredIncident> n1 = *store->Incidents({"n1", 10});
  ASSERT_EQ(n1.size(), 2u);
  EXPECT_EQ(n1[0].kind, "software");
  const StoredIncident& first = n1[1];
  EXPECT_EQ(first.id, 1);
  EXPECT_EQ(first.received, 100);
  EXPECT_EQ(first.time, 50);
  EXPECT_EQ(first.cost_node_hours, 12.5);
  EXPECT_EQ(first.job, "job-7");
  EXPECT_EQ(first.note, "Xid 79");
  EXPECT_EQ(store->Incidents({"", 1})->at(0).id, 3);
  EXPECT_TRUE(store->Incidents({"n3", 10})->empty());

  std::vector<Upload> u = {MakeUpload("n1", "healthy", 1)};
  ASSERT_TRUE(store->PutUploads(u).ok());
  std::vector<StoredAlert> alerts = {{0, 1, "n1", "rule", 10, "{}"}};
  ASSERT_TRUE(store->PutAlerts(alerts).ok());
  ASSERT_TRUE(store->RenameNode("n1", "n9").ok());
  EXPECT_EQ(store->Incidents({"n9", 10})->size(), 2u);
  EXPECT_TRUE(store->Incidents({"n1", 10})->empty());
  EXPECT_EQ(store->Alerts({"n9", 10})->size(), 1u);  // alerts follow the rename too
  EXPECT_TRUE(store->Alerts({"n1", 10})->empty());
}

TEST_P(StoreTest, RemediationRecordsNewestFirstByNodeAndPaged) {
  auto store = Open();
  using remediate::Action;
  using remediate::Outcome;
  using remediate::Trigger;
  EXPECT_TRUE(store->Remediations({})->empty());
  std::vector<remediate::AuditRecord> records = {
      {0, 1, "n1", Action::kDrain, Trigger::kDefective, Outcome::kQueued, "vigil: GPU 3 hbm", 0, "",
       ""},
      {0, 2, "n1", Action::kDrain, Trigger::kDefective, Outcome::kRetrying, "vigil: GPU 3 hbm", 1,
       "scontrol update NodeName=n1 State=DRAIN 'Reason=vigil: GPU 3 hbm'",
       "exit 1: slurm_update error: Invalid node name specified"},
      {0, 3, "n2", Action::kResume, Trigger::kPassingValidation, Outcome::kNotVigils, "", 1, "",
       ""},
      {0, 4, "", Action::kBreaker, Trigger::kPerson, Outcome::kReset, "reset", 0, "", ""}};
  for (remediate::AuditRecord& r : records) ASSERT_TRUE(store->PutRemediation(r).ok());
  EXPECT_EQ(records[3].id, records[0].id + 3);
  const std::vector<remediate::AuditRecord> all = *store->Remediations({});
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0].action, Action::kBreaker);
  EXPECT_EQ(all[0].trigger, Trigger::kPerson);
  EXPECT_EQ(all[0].outcome, Outcome::kReset);
  EXPECT_EQ(all[2].attempt, 1);
  EXPECT_EQ(all[2].command, records[1].command);
  EXPECT_EQ(all[2].output, records[1].output);
  EXPECT_DOUBLE_EQ(all[2].time, 2);
  const std::vector<remediate::AuditRecord> n1 = *store->Remediations({"n1", 10, 0});
  ASSERT_EQ(n1.size(), 2u);
  EXPECT_EQ(n1[0].outcome, Outcome::kRetrying);
  const std::vector<remediate::AuditRecord> page = *store->Remediations({"", 2, all[1].id});
  ASSERT_EQ(page.size(), 2u);
  EXPECT_EQ(page[0].id, all[2].id);
  EXPECT_EQ(page[1].id, all[3].id);
}

TEST_P(StoreTest, ConcurrentWritersAreAllCommittedWithDistinctIds) {
  auto store = Open();
  constexpr int kThreads = 8, kEach = 50;
  std::vector<std::vector<int64_t>> ids(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        std::vector<Upload> u = {MakeUpload(fmt::format("n{}-{}", t, i), "healthy", i)};
        ASSERT_TRUE(store->PutUploads(u).ok());
        ids[t].push_back(u[0].id);
      }
    });
  }
  for (auto& th : threads) th.join();
  std::set<int64_t> distinct;
  for (const auto& v : ids) distinct.insert(v.begin(), v.end());
  EXPECT_EQ(distinct.size(), size_t{kThreads * kEach});
  EXPECT_EQ(store->Nodes({})->size(), size_t{kThreads * kEach});
}

TEST_P(StoreTest, RepeatedKeysAreStoredOnceAndAnsweredAsTheFirstTime) {
  auto store = Open();
  std::vector<Upload> first = {MakeUpload("n1", "defective", 100)};
  first[0].key = std::string("\x01\x00key", 5);
  ASSERT_TRUE(store->PutUploads(first).ok());
  EXPECT_FALSE(first[0].repeated);

  // The retry: judged again (another verdict, meanwhile) and received later, it is the same.
  std::vector<Upload> retry = {MakeUpload("n1", "healthy", 200), MakeUpload("n2", "healthy", 200)};
  retry[0].key = first[0].key;
  retry[1].key = "other";
  ASSERT_TRUE(store->PutUploads(retry).ok());
  EXPECT_TRUE(retry[0].repeated);
  EXPECT_EQ(retry[0].id, first[0].id);
  EXPECT_EQ(VerdictName(retry[0].verdict), "defective");
  EXPECT_EQ(retry[0].failing, first[0].failing);
  EXPECT_DOUBLE_EQ(retry[0].received, 100);
  EXPECT_FALSE(retry[1].repeated);
  EXPECT_EQ(store->History("n1", 10, false)->size(), 1u);
  EXPECT_EQ(store->Node("n1")->uploads, 1);
  EXPECT_EQ(VerdictName(store->Node("n1")->verdict), "defective");

  // The same key twice in one call, and uploads without a key, which are all stored.
  std::vector<Upload> twice = {MakeUpload("n3", "healthy", 1), MakeUpload("n3", "healthy", 1),
                               MakeUpload("n3", "healthy", 1), MakeUpload("n3", "healthy", 1)};
  twice[0].key = twice[1].key = "twice";
  ASSERT_TRUE(store->PutUploads(twice).ok());
  EXPECT_TRUE(twice[1].repeated);
  EXPECT_EQ(twice[1].id, twice[0].id);
  EXPECT_NE(twice[2].id, twice[3].id);
  EXPECT_EQ(store->Node("n3")->uploads, 3);
}

TEST_P(StoreTest, RetiredNodesLeaveTheFleetKeepTheirHistoryAndComeBackByUploading) {
  auto store = Open();
  std::vector<Upload> u = {MakeUpload("n1", "healthy", 1), MakeUpload("n2", "defective", 2)};
  ASSERT_TRUE(store->PutUploads(u).ok());
  ASSERT_TRUE(store->RetireNode("n2", 50).ok());
  ASSERT_TRUE(store->RetireNode("n2", 60).ok());  // again: the first time stays
  EXPECT_EQ(store->RetireNode("n9", 50).code(), StatusCode::kNotFound);

  ASSERT_EQ(store->Nodes({})->size(), 1u);
  EXPECT_EQ(store->Nodes({})->at(0).node, "n1");
  EXPECT_EQ(store->Nodes({Verdict::kDefective, ""})->size(), 0u);
  const std::vector<NodeState> retired = *store->Nodes({std::nullopt, "", true});
  ASSERT_EQ(retired.size(), 1u);
  EXPECT_DOUBLE_EQ(retired[0].retired, 50);
  EXPECT_DOUBLE_EQ(store->Node("n2")->retired, 50);
  EXPECT_EQ(store->History("n2", 10, true)->size(), 1u);
  ASSERT_EQ(store->LatestUploads()->size(), 1u);
  EXPECT_EQ(store->Counts()->nodes, 1);

  std::vector<Upload> back = {MakeUpload("n2", "healthy", 3)};
  ASSERT_TRUE(store->PutUploads(back).ok());
  EXPECT_DOUBLE_EQ(store->Node("n2")->retired, 0);
  EXPECT_EQ(store->Node("n2")->uploads, 2);
  EXPECT_EQ(store->Nodes({})->size(), 2u);
}

TEST_P(StoreTest, RenamingMovesTheHistoryAndRefusesANameInUse) {
  auto store = Open();
  std::vector<Upload> u = {MakeUpload("old", "healthy", 1), MakeUpload("old", "healthy", 2),
                           MakeUpload("other", "healthy", 3)};
  ASSERT_TRUE(store->PutUploads(u).ok());
  ASSERT_TRUE(store->RenameNode("old", "new").ok());
  EXPECT_EQ(store->Node("old").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store->Node("new")->uploads, 2);
  EXPECT_EQ(store->History("new", 10, false)->size(), 2u);
  EXPECT_TRUE(store->History("old", 10, false)->empty());
  const std::vector<Upload> latest = *store->LatestUploads();
  ASSERT_EQ(latest.size(), 2u);
  EXPECT_EQ(latest[0].node, "new");
  // The summary line learning reads is renamed too, its values as they were.
  EXPECT_EQ(latest[0].row.node, "new");
  EXPECT_EQ(latest[0].row.values, (Values{{"cpu-stream/triad_gbps", 2}}));

  const Status taken = store->RenameNode("new", "other");
  EXPECT_EQ(taken.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(taken.message().find("\"other\" exists already"), std::string::npos) << taken.message();
  EXPECT_EQ(store->RenameNode("nobody", "x").code(), StatusCode::kNotFound);
  EXPECT_EQ(store->History("other", 10, false)->size(), 1u);
}

TEST_P(StoreTest, NewVerdictsUpdateTheNodeOnlyWhileTheUploadIsItsLatest) {
  auto store = Open();
  std::vector<Upload> u = {MakeUpload("n1", "healthy", 1), MakeUpload("n1", "healthy", 2),
                           MakeUpload("n2", "unjudged", 3)};
  ASSERT_TRUE(store->PutUploads(u).ok());
  ASSERT_TRUE(
      store
          ->PutVerdicts({{u[0].id, Verdict::kDefective, 4, {ParseComponent("GPU 1")}, "[]"},
                         {u[2].id, Verdict::kDefective, 4, {ParseComponent("NIC 0")}, "[{}]"}})
          .ok());
  EXPECT_EQ(VerdictName(store->Node("n1")->verdict), "healthy");  // u[0] is not n1's latest
  EXPECT_EQ(VerdictName(store->Node("n2")->verdict), "defective");
  EXPECT_EQ(Names(store->Node("n2")->failing), std::vector<std::string>{"NIC 0"});
  const std::vector<Upload> history = *store->History("n1", 10, false);
  EXPECT_EQ(VerdictName(history[1].verdict), "defective");
  EXPECT_EQ(history[1].criteria_version, 4);
  EXPECT_EQ(store->History("n2", 1, false)->at(0).findings, "[{}]");
  EXPECT_EQ(store->PutVerdicts({{99, Verdict::kHealthy, 4, {}, "[]"}}).code(),
            StatusCode::kNotFound);
}

}  // namespace
}  // namespace vigil::store
