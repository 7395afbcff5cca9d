#include "vigil/store/sqlite_store.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <set>
#include <thread>

#include "vigil/testing/temp_dir.h"

namespace vigil::store {
namespace {

Upload MakeUpload(const std::string& node, const std::string& verdict, double received) {
  Upload u;
  u.node = node;
  u.hardware = "8x H100";
  u.received = received;
  u.start_time = "2026-11-22T10:00:00Z";
  u.verdict = verdict;
  u.criteria_version = 1;
  if (verdict == "defective") u.failing = {"GPU 3", "NIC 5"};
  u.findings = "[]";
  u.row = fmt::format(R"({{"node": "{}", "cpu-stream/triad_gbps": {}}})", node, received);
  u.document = R"({"schema": "vigil.results/1"})";
  return u;
}

std::unique_ptr<Store> MustOpen(const std::string& path, const SqliteOptions& options = {}) {
  Result<std::unique_ptr<Store>> s = OpenSqliteStore(path, options);
  if (!s.ok()) ADD_FAILURE() << s.status().message();
  return s.ok() ? std::move(s).value() : nullptr;
}

// Runs one statement on the file with a connection of its own (outside the store).
void ExecRaw(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
}

TEST(SqliteStoreTest, UploadsUpdateTheLatestStateAndTheHistory) {
  testing::TempDir dir;
  auto store = MustOpen(dir.File("fleet.db"));
  std::vector<Upload> first = {MakeUpload("n1", "healthy", 100), MakeUpload("n2", "healthy", 101)};
  ASSERT_TRUE(store->PutUploads(first).ok());
  EXPECT_EQ(first[0].id, 1);
  EXPECT_EQ(first[1].id, 2);
  std::vector<Upload> second = {MakeUpload("n1", "defective", 200)};
  ASSERT_TRUE(store->PutUploads(second).ok());

  const std::vector<NodeState> all = *store->Nodes({});
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].node, "n1");
  EXPECT_EQ(all[0].verdict, "defective");
  EXPECT_EQ(all[0].uploads, 2);
  EXPECT_EQ(all[0].last_upload, 3);
  EXPECT_EQ(all[0].failing, (std::vector<std::string>{"GPU 3", "NIC 5"}));
  EXPECT_DOUBLE_EQ(all[0].received, 200);

  EXPECT_EQ(store->Nodes({"healthy", ""})->size(), 1u);
  EXPECT_EQ(store->Nodes({"", "8x A100"})->size(), 0u);
  EXPECT_EQ(store->Node("n2")->uploads, 1);
  EXPECT_EQ(store->Node("n9").status().code(), StatusCode::kNotFound);

  const std::vector<Upload> history = *store->History("n1", 10, false);
  ASSERT_EQ(history.size(), 2u);
  EXPECT_EQ(history[0].verdict, "defective");  // newest first
  EXPECT_EQ(history[1].verdict, "healthy");
  EXPECT_EQ(history[0].document, "");
  EXPECT_EQ(store->History("n1", 1, true)->at(0).document, R"({"schema": "vigil.results/1"})");

  const std::vector<std::string> rows = *store->LatestRows();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_NE(rows[0].find("200"), std::string::npos);  // n1's latest row
  const StoreCounts counts = *store->Counts();
  EXPECT_EQ(counts.uploads, 3);
  EXPECT_EQ(counts.nodes, 2);
}

TEST(SqliteStoreTest, CriteriaAreVersioned) {
  testing::TempDir dir;
  auto store = MustOpen(dir.File("fleet.db"));
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

TEST(SqliteStoreTest, AlertsNewestFirstAndFiltered) {
  testing::TempDir dir;
  auto store = MustOpen(dir.File("fleet.db"));
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

TEST(SqliteStoreTest, DataSurvivesReopeningAndMigrationsRunOnce) {
  testing::TempDir dir;
  const std::string path = dir.File("fleet.db");
  {
    auto store = MustOpen(path);
    std::vector<Upload> u = {MakeUpload("n1", "healthy", 1)};
    ASSERT_TRUE(store->PutUploads(u).ok());
  }
  auto store = MustOpen(path);
  EXPECT_EQ(store->Counts()->uploads, 1);
  EXPECT_EQ(SqliteSchemaVersion(), 2);
}

TEST(SqliteStoreTest, DocumentsAreStoredCompressedAndVersionOnePlainDocumentsStillRead) {
  testing::TempDir dir;
  const std::string path = dir.File("fleet.db");
  const std::string document = R"({"schema": "vigil.results/1", "node": "n1"})" +
                               std::string(10000, ' ');  // compresses well
  {
    auto store = MustOpen(path);
    std::vector<Upload> u = {MakeUpload("n1", "healthy", 1)};
    u[0].document = document;
    ASSERT_TRUE(store->PutUploads(u).ok());
    EXPECT_EQ(store->History("n1", 1, true)->at(0).document, document);
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT length(document), typeof(document) FROM uploads", -1,
                               &st, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_LT(sqlite3_column_int(st, 0), 200);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 1)), "blob");
  sqlite3_finalize(st);
  sqlite3_close(db);

  // The file as version 1 left it: no codec column, the document as plain text.
  ExecRaw(path,
          "ALTER TABLE uploads DROP COLUMN document_codec; UPDATE uploads SET document = 'plain "
          "text'; PRAGMA user_version=1");
  auto store = MustOpen(path);
  EXPECT_EQ(store->History("n1", 1, true)->at(0).document, "plain text");
  std::vector<Upload> u = {MakeUpload("n1", "healthy", 2)};
  ASSERT_TRUE(store->PutUploads(u).ok());
  const std::vector<Upload> history = *store->History("n1", 2, true);
  EXPECT_EQ(history[0].document, u[0].document);
  EXPECT_EQ(history[1].document, "plain text");
}

TEST(SqliteStoreTest, ADamagedCompressedDocumentIsAnErrorNotACrash) {
  testing::TempDir dir;
  const std::string path = dir.File("fleet.db");
  auto store = MustOpen(path);
  std::vector<Upload> u = {MakeUpload("n1", "healthy", 1)};
  ASSERT_TRUE(store->PutUploads(u).ok());
  ExecRaw(path, "UPDATE uploads SET document = x'28b52ffd00ff'");
  Result<std::vector<Upload>> history = store->History("n1", 1, true);
  ASSERT_FALSE(history.ok());
  EXPECT_NE(history.status().message().find("upload 1: damaged compressed document"),
            std::string::npos)
      << history.status().message();
  EXPECT_TRUE(store->History("n1", 1, false).ok());  // the rest of the row still reads
}

TEST(SqliteStoreTest, ConcurrentWritersAreAllCommittedWithDistinctIds) {
  testing::TempDir dir;
  auto store = MustOpen(dir.File("fleet.db"), {.sync_full = false});
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

TEST(SqliteStoreTest, ASecondServerOnTheSameFileIsRefused) {
  testing::TempDir dir;
  const std::string path = dir.File("fleet.db");
  auto first = MustOpen(path);
  Result<std::unique_ptr<Store>> second = OpenSqliteStore(path);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(second.status().message().find("locked"), std::string::npos);
}

TEST(SqliteStoreTest, ADatabaseWrittenByAnotherProcessIsReportedBusy) {
  testing::TempDir dir;
  const std::string path = dir.File("fleet.db");
  { ASSERT_TRUE(OpenSqliteStore(path).ok()); }
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  Result<std::unique_ptr<Store>> s = OpenSqliteStore(path, {.busy_timeout_s = 0.1});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kUnavailable) << s.status().message();
  EXPECT_NE(s.status().message().find(path), std::string::npos);
  sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(other);
}

TEST(SqliteStoreTest, BadFilesAreClearErrors) {
  testing::TempDir dir;
  dir.Write("garbage.db", std::string(8192, 'x'));
  Result<std::unique_ptr<Store>> garbage = OpenSqliteStore(dir.File("garbage.db"));
  ASSERT_FALSE(garbage.ok());
  EXPECT_EQ(garbage.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(garbage.status().message().find("garbage.db"), std::string::npos);

  const std::string newer = dir.File("newer.db");
  { ASSERT_TRUE(OpenSqliteStore(newer).ok()); }
  ExecRaw(newer, "PRAGMA user_version=99");
  Result<std::unique_ptr<Store>> n = OpenSqliteStore(newer);
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.status().message().find("schema version 99 is newer"), std::string::npos)
      << n.status().message();

  const std::string foreign = dir.File("foreign.db");
  ExecRaw(foreign, "CREATE TABLE t(x)");
  Result<std::unique_ptr<Store>> f = OpenSqliteStore(foreign);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("another application"), std::string::npos);

  Result<std::unique_ptr<Store>> nodir = OpenSqliteStore(dir.File("no/such/dir.db"));
  ASSERT_FALSE(nodir.ok());
  EXPECT_EQ(nodir.status().code(), StatusCode::kIoError);
}

}  // namespace
}  // namespace vigil::store
