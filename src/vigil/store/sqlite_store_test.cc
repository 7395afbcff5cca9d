#include "vigil/store/sqlite_store.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "vigil/testing/store_uploads.h"
#include "vigil/testing/temp_dir.h"

namespace vigil::store {
namespace {

using testing::MakeUpload;
using Values = std::vector<std::pair<std::string, double>>;

std::unique_ptr<Store> MustOpen(const std::string& path, const SqliteOptions& options = {}) {
  Result<std::unique_ptr<Store>> s = OpenSqliteStore(path, options);
  if (!s.ok()) ADD_FAILURE() << s.status().message();
  return s.ok() ? std::move(s).value() : nullptr;
}

// The first page of a table's b-tree.
int64_t RootPage(const std::string& path, const std::string& table) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, "SELECT rootpage FROM sqlite_master WHERE name = ?1", -1, &st,
                               nullptr),
            SQLITE_OK);
  sqlite3_bind_text(st, 1, table.c_str(), -1, SQLITE_TRANSIENT);
  const int64_t page = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
  sqlite3_finalize(st);
  sqlite3_close(db);
  return page;
}

// Runs one statement on the file with a connection of its own (outside the store).
void ExecRaw(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
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
  EXPECT_EQ(SqliteSchemaVersion(), 6);
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

  // The file as version 1 left it: no codec column, the document as plain text, the row as a
  // summary line (and none of version 3's keys and retirements, version 4's typed rows or version
  // 5's remediation records).
  ExecRaw(path,
          "DROP TABLE remediation; DROP TABLE incidents; DROP INDEX uploads_by_key; ALTER TABLE "
          "uploads DROP COLUMN "
          "idempotency_key; ALTER "
          "TABLE nodes DROP COLUMN retired; ALTER TABLE uploads DROP COLUMN document_codec; "
          "ALTER TABLE uploads DROP COLUMN row_values; UPDATE uploads SET document = 'plain "
          "text', row = '{\"node\": \"n1\", \"cpu-stream/triad_gbps\": 1}'; PRAGMA "
          "user_version=1");
  auto store = MustOpen(path);
  EXPECT_EQ(store->History("n1", 1, true)->at(0).document, "plain text");
  std::vector<Upload> u = {MakeUpload("n1", "healthy", 2)};
  u[0].key = "k";  // the migrated file takes keys
  ASSERT_TRUE(store->PutUploads(u).ok());
  const std::vector<Upload> history = *store->History("n1", 2, true);
  EXPECT_EQ(history[0].document, u[0].document);
  EXPECT_EQ(history[1].document, "plain text");
}

// Version 3 kept each upload's row as its summary line; version 4 stores rows typed. A version 3
// file opens migrated, its rows read from their lines (a rename renames them there too), beside
// the typed rows written since.
TEST(SqliteStoreTest, VersionThreeRowsStillReadAndNewRowsAreTyped) {
  testing::TempDir dir;
  const std::string path = dir.File("fleet.db");
  {
    auto store = MustOpen(path);
    std::vector<Upload> u = {MakeUpload("old", "healthy", 1)};
    ASSERT_TRUE(store->PutUploads(u).ok());
  }
  ExecRaw(path,
          "UPDATE uploads SET row = '{\"node\":\"old\",\"hardware\":\"8x H100\","
          "\"cpu-stream/triad_gbps\":1.5,\"gpu/x:0\":null}'; "
          "ALTER TABLE uploads DROP COLUMN row_values; DROP TABLE remediation; DROP TABLE "
          "incidents; PRAGMA "
          "user_version=3");
  auto store = MustOpen(path);
  std::vector<Upload> u = {MakeUpload("new", "healthy", 2)};
  ASSERT_TRUE(store->PutUploads(u).ok());
  ASSERT_TRUE(store->RenameNode("old", "older").ok());
  const std::vector<Upload> latest = *store->LatestUploads();
  ASSERT_EQ(latest.size(), 2u);
  EXPECT_EQ(latest[0].row.node, "new");
  EXPECT_EQ(latest[0].row.hardware, "8x H100");
  EXPECT_EQ(latest[0].row.values, (Values{{"cpu-stream/triad_gbps", 2}}));
  EXPECT_EQ(latest[1].row.node, "older");
  EXPECT_EQ(latest[1].row.values, (Values{{"cpu-stream/triad_gbps", 1.5}}));  // null: no value
  EXPECT_EQ(store->History("older", 1, false)->at(0).row.values, latest[1].row.values);

  // A typed row that does not read is the database's damage, named, not a crash.
  ExecRaw(path, "UPDATE uploads SET row_values = x'0500' WHERE node = 'new'");
  const Result<std::vector<Upload>> damaged = store->LatestUploads();
  ASSERT_FALSE(damaged.ok());
  EXPECT_EQ(damaged.status().code(), StatusCode::kIoError);
  EXPECT_NE(damaged.status().message().find("damaged stored row"), std::string::npos);
}

// Version 5 had no incidents. A version 5 file opens migrated: its uploads as they were, and
// incidents stored and read beside them.
TEST(SqliteStoreTest, VersionFiveOpensMigratedAndStoresIncidents) {
  testing::TempDir dir;
  const std::string path = dir.File("fleet.db");
  {
    auto store = MustOpen(path);
    std::vector<Upload> u = {MakeUpload("n1", "healthy", 1)};
    ASSERT_TRUE(store->PutUploads(u).ok());
  }
  ExecRaw(path, "DROP TABLE incidents; PRAGMA user_version=5");
  auto store = MustOpen(path);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->Counts()->uploads, 1);
  std::vector<StoredIncident> incidents = {{0, 5, "n1", 4, "GPU", 3, "j1", ""}};
  ASSERT_TRUE(store->PutIncidents(incidents).ok());
  store.reset();
  store = MustOpen(path);
  const std::vector<StoredIncident> read = *store->Incidents({"n1", 10});
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0].job, "j1");
  EXPECT_EQ(read[0].cost_node_hours, 3);
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

// A file's size in bytes; 0 when there is none.
off_t FileSize(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 ? st.st_size : 0;
}

// Text that zstd cannot shrink much, so that each upload adds pages to the WAL.
std::string Noise(size_t bytes, uint64_t seed) {
  std::string out;
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  while (out.size() < bytes) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    out += fmt::format("{:016x}", x);
  }
  return out;
}

// The issue's bug: the checkpoint connection never read the database, so its checkpoints did
// nothing, and the WAL grew by every upload (778 MB after 30,000). Constant writes from four
// threads must keep the -wal file under the bound, the database must receive the pages, and a
// stop must be quick.
TEST(SqliteStoreTest, TheWalStaysUnderItsBoundUnderConstantWrites) {
  testing::TempDir dir;
  const std::string path = dir.File("fleet.db");
  constexpr int64_t kLimit = 1 << 20;
  auto store = MustOpen(path, {.sync_full = false, .wal_limit_bytes = kLimit});
  constexpr int kThreads = 4, kEach = 600;
  std::atomic<off_t> max_wal{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        std::vector<Upload> u = {MakeUpload(fmt::format("n{}", i % 50), "healthy", i)};
        u[0].document = Noise(8000, t * kEach + i);
        ASSERT_TRUE(store->PutUploads(u).ok());
        off_t seen = max_wal.load();
        const off_t now = FileSize(path + "-wal");
        while (now > seen && !max_wal.compare_exchange_weak(seen, now)) {
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_LT(max_wal.load(), kLimit);
  EXPECT_GT(FileSize(path), 8 << 20);  // the pages reached the database (about 4 KB per upload)
  store.reset();  // closing checkpoints what is left: the bounded log above, nothing more
  EXPECT_EQ(FileSize(path + "-wal"), 0);
  EXPECT_EQ(MustOpen(path)->Counts()->uploads, kThreads * kEach);
}

// A learn judges every node again: 10,000 verdicts in one transaction wrote 94 MB of WAL
// (each rewrites its upload's row, document included), past the 64 MB bound that holds only
// between commits. PutVerdicts commits in steps, so the bound holds through it.
TEST(SqliteStoreTest, TheWalStaysUnderItsBoundWhileManyVerdictsChange) {
  testing::TempDir dir;
  const std::string path = dir.File("fleet.db");
  constexpr int64_t kLimit = 4 << 20;
  auto store = MustOpen(path, {.sync_full = false, .wal_limit_bytes = kLimit});
  constexpr int kUploads = 2000;
  std::vector<VerdictUpdate> verdicts;
  for (int i = 0; i < kUploads; i += 100) {
    std::vector<Upload> batch;
    for (int j = i; j < i + 100; ++j) {
      batch.push_back(MakeUpload(fmt::format("n{}", j), "healthy", j));
      batch.back().document = Noise(8000, j);
    }
    ASSERT_TRUE(store->PutUploads(batch).ok());
    for (const Upload& u : batch)
      verdicts.push_back({u.id, Verdict::kDefective, 2, {ParseComponent("GPU 1")}, "[]"});
  }
  std::atomic<bool> done{false};
  off_t max_wal = 0;
  std::thread watch([&] {
    while (!done.load()) max_wal = std::max(max_wal, FileSize(path + "-wal"));
  });
  const Status put = store->PutVerdicts(verdicts);
  done = true;
  watch.join();
  ASSERT_TRUE(put.ok()) << put.message();
  // 2,000 rows of 8 KB documents: about 18 MB of WAL in one transaction.
  EXPECT_LT(std::max(max_wal, FileSize(path + "-wal")), kLimit);
  EXPECT_EQ(VerdictName(store->History("n1999", 1, false)->at(0).verdict), "defective");
  EXPECT_EQ(store->PutVerdicts({{99999, Verdict::kHealthy, 4, {}, "[]"}}).code(),
            StatusCode::kNotFound);
}

// Overwrites `pages` pages of the file from page `first` (1-based) with a pattern.
void DamagePages(const std::string& path, int64_t first, int pages) {
  const int fd = open(path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  const std::string junk(4096, '\x5a');
  for (int p = 0; p < pages; ++p) {
    ASSERT_EQ(pwrite(fd, junk.data(), junk.size(), (first - 1 + p) * 4096),
              static_cast<ssize_t>(junk.size()));
  }
  close(fd);
}

TEST(SqliteStoreTest, ADatabaseDamagedInTheMiddleIsRefusedAtOpen) {
  testing::TempDir dir;
  const std::string path = dir.File("fleet.db");
  {
    auto store = MustOpen(path, {.sync_full = false});
    for (int i = 0; i < 1000; ++i) {
      std::vector<Upload> u = {MakeUpload(fmt::format("n{}", i), "healthy", i)};
      u[0].document = Noise(3000, i);
      ASSERT_TRUE(store->PutUploads(u).ok());
    }
  }
  const int64_t pages = FileSize(path) / 4096;
  ASSERT_GT(pages, 200);
  DamagePages(path, pages / 2, 8);
  Result<std::unique_ptr<Store>> s = OpenSqliteStore(path);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kIoError);
  EXPECT_EQ(s.status().message().rfind(path + ": ", 0), 0u) << s.status().message();
  EXPECT_NE(s.status().message().find("damaged"), std::string::npos) << s.status().message();
}

// A page damaged while the server runs: the write that reads it fails as the server's trouble
// (IoError: HTTP 500, which agents retry), never as the client's (InvalidArgument: 400).
TEST(SqliteStoreTest, AWriteOverADamagedPageIsAnIoError) {
  testing::TempDir dir;
  const std::string path = dir.File("fleet.db");
  {
    auto store = MustOpen(path);
    std::vector<Upload> u = {MakeUpload("n1", "healthy", 1)};
    ASSERT_TRUE(store->PutUploads(u).ok());
  }
  auto store = MustOpen(path);
  DamagePages(path, RootPage(path, "nodes"), 1);
  std::vector<Upload> u = {MakeUpload("n1", "healthy", 2)};
  const Status s = store->PutUploads(u);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kIoError) << s.message();
  EXPECT_NE(s.message().find(path), std::string::npos) << s.message();
}

TEST(SqliteStoreTest, ADeletedReplacedOrTruncatedFileStopsWritesAndFailsHealth) {
  testing::TempDir dir;
  const auto fresh = [&](const std::string& name) {
    const std::string path = dir.File(name);
    {
      auto store = MustOpen(path);
      std::vector<Upload> u = {MakeUpload("n1", "healthy", 1)};
      EXPECT_TRUE(store->PutUploads(u).ok());
    }
    return path;
  };
  const auto expect_lost = [](Store& store, std::string_view why) {
    const Status health = store.Health();
    EXPECT_EQ(health.code(), StatusCode::kUnavailable) << health.message();
    EXPECT_NE(health.message().find(why), std::string::npos) << health.message();
    std::vector<Upload> u = {MakeUpload("n2", "healthy", 2)};
    EXPECT_EQ(store.PutUploads(u).code(), StatusCode::kUnavailable);
  };

  const std::string deleted = fresh("deleted.db");
  auto store = MustOpen(deleted);
  EXPECT_TRUE(store->Health().ok());
  ASSERT_EQ(unlink(deleted.c_str()), 0);
  expect_lost(*store, "was deleted");

  const std::string replaced = fresh("replaced.db");
  store = MustOpen(replaced);
  dir.Write("impostor.db", "");
  ASSERT_EQ(rename(dir.File("impostor.db").c_str(), replaced.c_str()), 0);
  expect_lost(*store, "was replaced");

  const std::string truncated = fresh("truncated.db");
  store = MustOpen(truncated);
  ASSERT_EQ(truncate(truncated.c_str(), 4096), 0);
  expect_lost(*store, "was truncated to 4096 bytes");
}

TEST(SqliteStoreTest, BadOptionsNameTheField) {
  testing::TempDir dir;
  Result<std::unique_ptr<Store>> s = OpenSqliteStore(dir.File("f.db"), {.wal_limit_bytes = 1000});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.status().message().rfind("wal_limit_bytes: expected at least", 0), 0u);
  EXPECT_EQ(OpenSqliteStore(dir.File("f.db"), {.readers = 0}).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace vigil::store
