#include "vigil/store/sqlite_store.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <deque>
#include <functional>
#include <span>
#include <thread>
#include <utility>

#include "vigil/core/file.h"
#include "vigil/core/json.h"
#include "vigil/core/mutex.h"
#include "vigil/core/text.h"
#include "vigil/store/row_codec.h"

namespace vigil::store {
namespace {

// 'VGIL': marks the file as Vigil's, so that another application's database is not migrated.
constexpr int kApplicationId = 0x5647494C;

// Migration i takes the schema from version i to i + 1. Append only: a released migration
// never changes, a new version adds one.
constexpr std::array<std::string_view, 6> kMigrations = {
    R"sql(
CREATE TABLE uploads(
  id INTEGER PRIMARY KEY,
  node TEXT NOT NULL,
  hardware TEXT NOT NULL,
  received REAL NOT NULL,
  start_time TEXT NOT NULL,
  verdict TEXT NOT NULL,
  criteria_version INTEGER NOT NULL,
  failing TEXT NOT NULL,
  findings TEXT NOT NULL,
  row TEXT NOT NULL,
  document TEXT NOT NULL);
CREATE INDEX uploads_by_node ON uploads(node, id);
CREATE TABLE nodes(
  node TEXT PRIMARY KEY,
  hardware TEXT NOT NULL,
  last_upload INTEGER NOT NULL,
  received REAL NOT NULL,
  start_time TEXT NOT NULL,
  verdict TEXT NOT NULL,
  failing TEXT NOT NULL,
  uploads INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE criteria(
  version INTEGER PRIMARY KEY,
  created REAL NOT NULL,
  nodes INTEGER NOT NULL,
  body TEXT NOT NULL);
CREATE TABLE alerts(
  id INTEGER PRIMARY KEY,
  received REAL NOT NULL,
  machine TEXT NOT NULL,
  kind TEXT NOT NULL,
  detected REAL NOT NULL,
  body TEXT NOT NULL);
CREATE INDEX alerts_by_machine ON alerts(machine, id);
)sql",
    // Version 2: documents are stored compressed (codec 1: zstd); version 1's stay plain text.
    R"sql(
ALTER TABLE uploads ADD COLUMN document_codec INTEGER NOT NULL DEFAULT 0;
)sql",
    // Version 3: idempotency keys (an upload retried after its answer was lost is stored once;
    // earlier rows have none) and retired nodes (0: in the fleet).
    R"sql(
ALTER TABLE uploads ADD COLUMN idempotency_key BLOB;
CREATE UNIQUE INDEX uploads_by_key ON uploads(idempotency_key) WHERE idempotency_key IS NOT NULL;
ALTER TABLE nodes ADD COLUMN retired REAL NOT NULL DEFAULT 0;
)sql",
    // Version 4: rows stored typed (row_codec.h), so that learning reads them without parsing;
    // their summary line (row) is ''. Earlier versions' rows keep their line and no row_values.
    R"sql(
ALTER TABLE uploads ADD COLUMN row_values BLOB;
)sql",
    // Version 5: remediation's audit log (remediate/audit.h), every decision and attempt.
    R"sql(
CREATE TABLE remediation(
  id INTEGER PRIMARY KEY,
  time REAL NOT NULL,
  node TEXT NOT NULL,
  action TEXT NOT NULL,
  cause TEXT NOT NULL,
  outcome TEXT NOT NULL,
  reason TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  command TEXT NOT NULL,
  output TEXT NOT NULL);
CREATE INDEX remediation_by_node ON remediation(node, id);
)sql",
    // Version 6: incidents (jobs a node failed or slowed), what the Selector learns risk from.
    R"sql(
CREATE TABLE incidents(
  id INTEGER PRIMARY KEY,
  received REAL NOT NULL,
  node TEXT NOT NULL,
  time REAL NOT NULL,
  kind TEXT NOT NULL,
  cost_node_hours REAL NOT NULL,
  job TEXT NOT NULL,
  note TEXT NOT NULL);
CREATE INDEX incidents_by_node ON incidents(node, id);
)sql",
};

// "<column> = ?1", or "?1 = ?1" (every row, ?1 still bound) when `value` is "": SQLite searches
// an index (column, id) for the first, and scans the whole table for `?1 = '' OR column = ?1`.
std::string EqualsOrAny(std::string_view column, std::string_view value) {
  return value.empty() ? "?1 = ?1" : fmt::format("{} = ?1", column);
}

// uploads.document_codec of a document that zstd compressed; 0 (version 1's rows) is plain text.
constexpr int64_t kCodecZstd = 1;

// zstd's fastest levels: a pretty-printed 8-GPU document (66 KB) shrinks about tenfold in a
// fraction of the time SQLite would spend writing it whole, twice (WAL, then checkpoint).
constexpr int kZstdLevel = 1;

Result<std::string> Compress(std::string_view text) {
  // One context per thread: making one per call costs more than compressing 66 KB.
  thread_local const std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx*)> ctx(ZSTD_createCCtx(),
                                                                            ZSTD_freeCCtx);
  if (ctx == nullptr) return Status::Internal("cannot compress a document: out of memory");
  std::string out(ZSTD_compressBound(text.size()), '\0');
  const size_t n =
      ZSTD_compressCCtx(ctx.get(), out.data(), out.size(), text.data(), text.size(), kZstdLevel);
  if (ZSTD_isError(n)) {
    return Status::Internal(fmt::format("cannot compress a document: {}", ZSTD_getErrorName(n)));
  }
  out.resize(n);
  return out;
}

Result<std::string> Decompress(std::string_view blob, std::string_view what) {
  const unsigned long long size = ZSTD_getFrameContentSize(blob.data(), blob.size());
  // Documents are bounded by the server's request limit; a larger size is a damaged frame.
  constexpr unsigned long long kMax = 1ull << 30;
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN || size > kMax) {
    return Status::IoError(fmt::format("{}: damaged compressed document", what));
  }
  std::string out(size, '\0');
  const size_t n = ZSTD_decompress(out.data(), out.size(), blob.data(), blob.size());
  if (ZSTD_isError(n) || n != size) {
    return Status::IoError(
        fmt::format("{}: damaged compressed document ({})", what, ZSTD_getErrorName(n)));
  }
  return out;
}

// The failing column: a JSON array of the components' names.
std::string JoinFailing(const std::vector<ComponentId>& failing) {
  Json names = Json::array();
  for (const ComponentId& c : failing) names.push_back(ComponentName(c));
  return DumpJson(names);
}

std::vector<ComponentId> SplitFailing(std::string_view text) {
  std::vector<ComponentId> out;
  Result<Json> j = ParseJson(text, "failing");
  if (!j.ok() || !j->is_array()) return out;
  for (const Json& s : *j) {
    if (s.is_string()) out.push_back(ParseComponent(s.get<std::string>()));
  }
  return out;
}

// The verdict column, written by VerdictName; text this Vigil never writes reads as unjudged.
Verdict StoredVerdict(std::string_view text) {
  const Result<Verdict> v = ParseVerdict(text);
  return v.ok() ? *v : Verdict::kUnjudged;
}

// One prepared statement, reset after each use.
class Statement {
 public:
  Statement() = default;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement() { sqlite3_finalize(stmt_); }

  int Prepare(sqlite3* db, std::string_view sql) {
    sqlite3_finalize(stmt_);
    stmt_ = nullptr;
    return sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()),
                              SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr);
  }
  Statement& Bind(int i, std::string_view text) {
    sqlite3_bind_text(stmt_, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Statement& BindBlob(int i, std::string_view bytes) {
    sqlite3_bind_blob(stmt_, i, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
    return *this;
  }
  // A blob, or NULL when `bytes` is empty.
  Statement& BindBlobOrNull(int i, std::string_view bytes) {
    if (bytes.empty()) {
      sqlite3_bind_null(stmt_, i);
      return *this;
    }
    return BindBlob(i, bytes);
  }
  Statement& Bind(int i, double v) {
    sqlite3_bind_double(stmt_, i, v);
    return *this;
  }
  Statement& Bind(int i, int64_t v) {
    sqlite3_bind_int64(stmt_, i, v);
    return *this;
  }
  int Step() { return sqlite3_step(stmt_); }
  void Reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  // The column's bytes, text or blob.
  std::string Text(int col) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
    return p == nullptr ? std::string() : std::string(p, sqlite3_column_bytes(stmt_, col));
  }
  double Double(int col) const { return sqlite3_column_double(stmt_, col); }
  bool IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

// An upload's row from its columns: row_values (version 4 on) or, for an earlier version's
// upload, its summary line. IoError naming the upload when neither reads.
Status ReadRow(const Statement& st, int line_col, int values_col, std::string_view what,
               Upload& u) {
  u.row.node = u.node;
  u.row.hardware = u.hardware;
  if (!st.IsNull(values_col)) return DecodeRowValues(st.Text(values_col), what, &u.row);
  Result<FleetTable> line = ParseFleetTable(st.Text(line_col), what, 1);
  if (!line.ok() || line->node_count() != 1) {
    return Status::IoError(fmt::format("{}: damaged stored row", what));
  }
  u.row.values = line->Row(0).values;
  return Status::Ok();
}

class Connection {
 public:
  Connection(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection() { sqlite3_close_v2(db_); }

  sqlite3* db() const { return db_; }

  // "<path>: <what>: <SQLite's message>", with the code that fits the failure: a damaged
  // database is the server's trouble (IoError), never the client's.
  Status Error(std::string_view what, int rc) const {
    std::string msg = fmt::format("{}: {}: {}", path_, what, sqlite3_errmsg(db_));
    switch (rc & 0xff) {
      case SQLITE_NOTADB:
      case SQLITE_CORRUPT:
        return Status::IoError(msg + " (the database is damaged)");
      case SQLITE_BUSY:
      case SQLITE_LOCKED:
        return Status::Unavailable(msg + " (another process holds the database)");
      default:
        return Status::IoError(std::move(msg));
    }
  }

  Status Exec(std::string_view sql) const {
    const std::string s(sql);
    const int rc = sqlite3_exec(db_, s.c_str(), nullptr, nullptr, nullptr);
    return rc == SQLITE_OK ? Status::Ok() : Error(s.substr(0, s.find_first_of("(\n")), rc);
  }

  Result<int64_t> PragmaInt(std::string_view name) const {
    Statement st;
    const std::string sql = fmt::format("PRAGMA {}", name);
    int rc = st.Prepare(db_, sql);
    if (rc == SQLITE_OK) rc = st.Step();
    if (rc != SQLITE_ROW) return Error(sql, rc);
    return st.Int(0);
  }

  Status Prepare(Statement& st, std::string_view sql) const {
    const int rc = st.Prepare(db_, sql);
    return rc == SQLITE_OK ? Status::Ok() : Error(sql, rc);
  }

  // Steps a statement that returns no rows, then resets it.
  Status Run(Statement& st, std::string_view what) const {
    const int rc = st.Step();
    st.Reset();
    return rc == SQLITE_DONE ? Status::Ok() : Error(what, rc);
  }

  // Steps a statement that returns at most one row, calls `row` with it if there is one, then
  // resets it. Whether there was one.
  Result<bool> RunOne(Statement& st, std::string_view what,
                      const std::function<void(const Statement&)>& row) const {
    const int rc = st.Step();
    if (rc == SQLITE_ROW) row(st);
    st.Reset();
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return Error(what, rc);
    return rc == SQLITE_ROW;
  }

  // Rows changed by the last statement that ran.
  int64_t Changes() const { return sqlite3_changes64(db_); }

 private:
  std::string path_;
  sqlite3* db_;
};

Result<std::unique_ptr<Connection>> OpenConnection(const std::string& path, bool read_only,
                                                   double busy_timeout_s) {
  sqlite3* db = nullptr;
  const int flags =
      (read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
      SQLITE_OPEN_NOMUTEX;
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  auto conn = std::make_unique<Connection>(path, db);
  if (rc != SQLITE_OK) return conn->Error("open", rc);
  sqlite3_busy_timeout(db, static_cast<int>(busy_timeout_s * 1000));
  return conn;
}

class SqliteStore final : public Store {
 public:
  SqliteStore(std::string path, int lock_fd) : path_(std::move(path)), lock_fd_(lock_fd) {}
  ~SqliteStore() override {
    if (checkpointer_.joinable()) {
      {
        MutexLock lock(checkpoint_mu_);
        stopping_ = true;
      }
      checkpoint_cv_.NotifyOne();
      checkpointer_.join();
      // The last checkpoint runs here rather than in sqlite3_close, where a failure goes unseen.
      // The background ones kept the WAL short, so this copies little: a stop stays quick.
      (void)Checkpoint(*writer_, SQLITE_CHECKPOINT_TRUNCATE);
    }
    checkpoint_conn_.reset();
    readers_.clear();
    writer_.reset();
    close(lock_fd_);
  }

  Status Open(const SqliteOptions& o) {
    VIGIL_ASSIGN_OR_RETURN(writer_, OpenConnection(path_, false, o.busy_timeout_s));
    const Connection& w = *writer_;
    VIGIL_ASSIGN_OR_RETURN(const int64_t app, ApplicationId());
    VIGIL_ASSIGN_OR_RETURN(const int64_t tables, CountTables());
    if (tables > 0 && app != kApplicationId) {
      return Status::InvalidArgument(
          fmt::format("{}: a SQLite database of another application (application_id {}), "
                      "not Vigil's",
                      path_, app));
    }
    // Checked on the checkpoint connection, which has no other use before the thread starts.
    VIGIL_ASSIGN_OR_RETURN(checkpoint_conn_, OpenConnection(path_, false, o.busy_timeout_s));
    VIGIL_RETURN_IF_ERROR(QuickCheck(*checkpoint_conn_));
    VIGIL_RETURN_IF_ERROR(w.Exec("PRAGMA journal_mode=WAL"));
    VIGIL_RETURN_IF_ERROR(
        w.Exec(o.sync_full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL"));
    // A WAL that restarts (after a checkpoint copied all of it) is cut back to this size.
    VIGIL_RETURN_IF_ERROR(
        w.Exec(fmt::format("PRAGMA journal_size_limit={}", o.wal_limit_bytes / 4)));
    VIGIL_RETURN_IF_ERROR(Migrate());
    VIGIL_RETURN_IF_ERROR(PrepareWrites());
    // A connection opens the WAL at its first read, and until then its checkpoints do nothing
    // and return OK (pnLog -1, which Checkpoint reports). The database is in WAL mode now.
    VIGIL_RETURN_IF_ERROR(checkpoint_conn_->Exec("SELECT COUNT(*) FROM sqlite_master"));
    VIGIL_ASSIGN_OR_RETURN(const int64_t page, w.PragmaInt("page_size"));
    const int64_t frame = page + kWalFrameHeader;
    restart_frames_ = std::max<int64_t>(1, o.wal_limit_bytes / 2 / frame);
    passive_frames_ = std::clamp<int64_t>(restart_frames_ / 4, 1, kPassiveFrames);
    sqlite3_wal_hook(writer_->db(), &SqliteStore::WalHook, this);  // ends auto-checkpoints
    checkpointer_ = std::thread([this] { CheckpointLoop(); });
    for (int i = 0; i < o.readers; ++i) {
      VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<Connection> r,
                             OpenConnection(path_, true, o.busy_timeout_s));
      MutexLock lock(readers_mu_);
      free_readers_.push_back(r.get());
      readers_.push_back(std::move(r));
    }
    return CheckFile();
  }

  Status PutUploads(std::vector<Upload>& uploads) override {
    // Compressed before joining the group commit, so that callers compress in parallel.
    std::vector<std::string> documents, rows;
    documents.reserve(uploads.size());
    rows.reserve(uploads.size());
    for (const Upload& u : uploads) {
      VIGIL_ASSIGN_OR_RETURN(std::string blob, Compress(u.document));
      documents.push_back(std::move(blob));
      rows.push_back(EncodeRowValues(u.row));
    }
    return Write([&]() -> Status {
      for (size_t i = 0; i < uploads.size(); ++i) {
        Upload& u = uploads[i];
        if (!u.key.empty()) {
          find_upload_.BindBlob(1, u.key);
          VIGIL_ASSIGN_OR_RETURN(u.repeated,
                                 writer_->RunOne(find_upload_, "find upload", [&](const auto& st) {
                                   u.id = st.Int(0);
                                   u.received = st.Double(1);
                                   u.verdict = StoredVerdict(st.Text(2));
                                   u.criteria_version = st.Int(3);
                                   u.failing = SplitFailing(st.Text(4));
                                   u.findings = st.Text(5);
                                 }));
          if (u.repeated) continue;
        }
        const std::string failing = JoinFailing(u.failing);
        insert_upload_.Bind(1, u.node)
            .Bind(2, u.hardware)
            .Bind(3, u.received)
            .Bind(4, u.start_time)
            .Bind(5, VerdictName(u.verdict))
            .Bind(6, u.criteria_version)
            .Bind(7, failing)
            .Bind(8, u.findings)
            .Bind(9, std::string_view(""))  // the summary line of earlier versions
            .BindBlob(10, documents[i])
            .Bind(11, kCodecZstd)
            .BindBlobOrNull(12, u.key)
            .BindBlob(13, rows[i]);
        VIGIL_RETURN_IF_ERROR(writer_->Run(insert_upload_, "insert upload"));
        u.id = sqlite3_last_insert_rowid(writer_->db());
        upsert_node_.Bind(1, u.node)
            .Bind(2, u.hardware)
            .Bind(3, u.id)
            .Bind(4, u.received)
            .Bind(5, u.start_time)
            .Bind(6, VerdictName(u.verdict))
            .Bind(7, failing);
        VIGIL_RETURN_IF_ERROR(writer_->Run(upsert_node_, "update node"));
      }
      return Status::Ok();
    });
  }

  Result<std::vector<NodeState>> Nodes(const NodeFilter& filter) override {
    std::vector<NodeState> out;
    VIGIL_RETURN_IF_ERROR(Query(
        std::string(kNodeColumns) +
            " WHERE (?1 = '' OR verdict = ?1) AND (?2 = '' OR hardware = ?2) AND (retired > 0) = "
            "?3 ORDER BY node",
        "list nodes",
        [&](Statement& st) {
          st.Bind(1, filter.verdict ? VerdictName(*filter.verdict) : std::string_view(""))
              .Bind(2, filter.hardware)
              .Bind(3, int64_t{filter.retired});
        },
        [&](const Statement& st) { out.push_back(NodeOf(st)); }));
    return out;
  }
  Result<NodeState> Node(std::string_view node) override {
    std::optional<NodeState> out;
    VIGIL_RETURN_IF_ERROR(Query(
        std::string(kNodeColumns) + " WHERE node = ?1", "read node",
        [&](Statement& st) { st.Bind(1, node); }, [&](const Statement& st) { out = NodeOf(st); }));
    if (!out) return Status::NotFound(fmt::format("no node {}", Quote(node)));
    return *std::move(out);
  }

  Result<std::vector<Upload>> History(std::string_view node, size_t limit,
                                      bool with_documents) override {
    std::vector<Upload> out;
    Status damaged = Status::Ok();
    VIGIL_RETURN_IF_ERROR(Query(
        "SELECT id, node, hardware, received, start_time, verdict, criteria_version, failing, "
        "findings, row, CASE WHEN ?3 THEN document ELSE '' END, document_codec, row_values FROM "
        "uploads WHERE node = ?1 ORDER BY id DESC LIMIT ?2",
        "read history",
        [&](Statement& st) {
          st.Bind(1, node).Bind(2, static_cast<int64_t>(limit)).Bind(3, int64_t{with_documents});
        },
        [&](const Statement& st) {
          Upload u;
          u.id = st.Int(0);
          u.node = st.Text(1);
          u.hardware = st.Text(2);
          u.received = st.Double(3);
          u.start_time = st.Text(4);
          u.verdict = StoredVerdict(st.Text(5));
          u.criteria_version = st.Int(6);
          u.failing = SplitFailing(st.Text(7));
          u.findings = st.Text(8);
          const std::string what = fmt::format("{}: upload {}", path_, u.id);
          if (Status row = ReadRow(st, 9, 12, what, u); !row.ok() && damaged.ok()) damaged = row;
          u.document = st.Text(10);
          if (with_documents && st.Int(11) == kCodecZstd) {
            Result<std::string> text = Decompress(u.document, what);
            if (text.ok()) {
              u.document = std::move(text).value();
            } else if (damaged.ok()) {
              damaged = text.status();
            }
          }
          out.push_back(std::move(u));
        }));
    if (!damaged.ok()) return damaged;
    return out;
  }

  Result<std::vector<Upload>> LatestUploads() override {
    std::vector<Upload> out;
    Status damaged = Status::Ok();
    VIGIL_RETURN_IF_ERROR(
        Query("SELECT u.id, u.node, u.hardware, u.start_time, u.verdict, u.row, u.row_values FROM "
              "nodes n JOIN uploads u ON u.id = n.last_upload WHERE n.retired = 0 ORDER BY n.node",
              "read latest uploads", kNoBindings, [&](const Statement& st) {
                Upload& u = out.emplace_back();
                u.id = st.Int(0);
                u.node = st.Text(1);
                u.hardware = st.Text(2);
                u.start_time = st.Text(3);
                u.verdict = StoredVerdict(st.Text(4));
                const Status row = ReadRow(st, 5, 6, fmt::format("{}: upload {}", path_, u.id), u);
                if (!row.ok() && damaged.ok()) damaged = row;
              }));
    if (!damaged.ok()) return damaged;
    return out;
  }

  // In commits of at most kVerdictsPerCommit: a verdict rewrites its upload's row, document
  // included (about 9 KB of WAL each), and the WAL's bound holds only between commits (a learn
  // judging 10,000 nodes again in one transaction wrote 94 MB of WAL).
  Status PutVerdicts(const std::vector<VerdictUpdate>& verdicts) override {
    constexpr size_t kVerdictsPerCommit = 200;
    for (size_t first = 0; first < verdicts.size(); first += kVerdictsPerCommit) {
      const std::span<const VerdictUpdate> some(
          verdicts.data() + first, std::min(kVerdictsPerCommit, verdicts.size() - first));
      VIGIL_RETURN_IF_ERROR(Write([&]() -> Status { return UpdateVerdicts(some); }));
    }
    return Status::Ok();
  }

  Status RetireNode(std::string_view node, double when) override {
    return Write([&]() -> Status {
      Statement st;
      VIGIL_RETURN_IF_ERROR(writer_->Prepare(
          st,
          "UPDATE nodes SET retired = CASE WHEN retired > 0 THEN retired ELSE ?2 END WHERE "
          "node = ?1"));
      st.Bind(1, node).Bind(2, when);
      VIGIL_RETURN_IF_ERROR(writer_->Run(st, "retire node"));
      if (writer_->Changes() == 0) return Status::NotFound(fmt::format("no node {}", Quote(node)));
      return Status::Ok();
    });
  }

  Status RenameNode(std::string_view from, std::string_view to) override {
    return Write([&]() -> Status {
      Statement exists;
      VIGIL_RETURN_IF_ERROR(writer_->Prepare(exists, "SELECT 1 FROM nodes WHERE node = ?1"));
      const auto is_node = [&](std::string_view name) {
        exists.Bind(1, name);
        return writer_->RunOne(exists, "find node", [](const Statement&) {});
      };
      VIGIL_ASSIGN_OR_RETURN(const bool from_exists, is_node(from));
      if (!from_exists) return Status::NotFound(fmt::format("no node {}", Quote(from)));
      VIGIL_ASSIGN_OR_RETURN(const bool to_exists, is_node(to));
      if (to_exists) {
        return Status::InvalidArgument(
            fmt::format("a node {} exists already (retired or not)", Quote(to)));
      }
      Statement node, uploads, incidents, alerts;
      VIGIL_RETURN_IF_ERROR(writer_->Prepare(node, "UPDATE nodes SET node = ?2 WHERE node = ?1"));
      VIGIL_RETURN_IF_ERROR(
          writer_->Prepare(incidents, "UPDATE incidents SET node = ?2 WHERE node = ?1"));
      // The alerts' machine, so that the node's history keeps them (their bodies stay as sent).
      VIGIL_RETURN_IF_ERROR(
          writer_->Prepare(alerts, "UPDATE alerts SET machine = ?2 WHERE machine = ?1"));
      // An earlier version's summary line names the node too (learning reads it); typed rows do
      // not (their line is ''). The document stays as it came.
      VIGIL_RETURN_IF_ERROR(
          writer_->Prepare(uploads,
                           "UPDATE uploads SET node = ?2, row = CASE WHEN row = '' THEN row ELSE "
                           "json_set(row, '$.node', ?2) END WHERE node = ?1"));
      node.Bind(1, from).Bind(2, to);
      VIGIL_RETURN_IF_ERROR(writer_->Run(node, "rename node"));
      uploads.Bind(1, from).Bind(2, to);
      VIGIL_RETURN_IF_ERROR(writer_->Run(uploads, "rename node's uploads"));
      incidents.Bind(1, from).Bind(2, to);
      VIGIL_RETURN_IF_ERROR(writer_->Run(incidents, "rename node's incidents"));
      alerts.Bind(1, from).Bind(2, to);
      return writer_->Run(alerts, "rename node's alerts");
    });
  }

  Result<int64_t> PutCriteria(const CriteriaVersion& criteria) override {
    int64_t version = 0;
    const Status s = Write([&]() -> Status {
      insert_criteria_.Bind(1, criteria.created).Bind(2, criteria.nodes).Bind(3, criteria.body);
      VIGIL_RETURN_IF_ERROR(writer_->Run(insert_criteria_, "insert criteria"));
      version = sqlite3_last_insert_rowid(writer_->db());
      return Status::Ok();
    });
    if (!s.ok()) return s;
    return version;
  }

  Result<std::optional<CriteriaVersion>> Criteria(int64_t version) override {
    std::optional<CriteriaVersion> out;
    VIGIL_RETURN_IF_ERROR(Query(
        "SELECT version, created, nodes, body FROM criteria WHERE ?1 = 0 OR version = ?1 "
        "ORDER BY version DESC LIMIT 1",
        "read criteria", [&](Statement& st) { st.Bind(1, version); },
        [&](const Statement& st) {
          out = CriteriaVersion{st.Int(0), st.Double(1), st.Int(2), st.Text(3)};
        }));
    return out;
  }

  Result<std::vector<CriteriaVersion>> CriteriaVersions() override {
    std::vector<CriteriaVersion> out;
    VIGIL_RETURN_IF_ERROR(
        Query("SELECT version, created, nodes FROM criteria ORDER BY version", "list criteria",
              kNoBindings, [&](const Statement& st) {
                out.push_back(CriteriaVersion{st.Int(0), st.Double(1), st.Int(2), ""});
              }));
    return out;
  }

  Status PutAlerts(std::vector<StoredAlert>& alerts) override {
    return Write([&]() -> Status {
      for (StoredAlert& a : alerts) {
        insert_alert_.Bind(1, a.received)
            .Bind(2, a.machine)
            .Bind(3, a.kind)
            .Bind(4, a.detected)
            .Bind(5, a.body);
        VIGIL_RETURN_IF_ERROR(writer_->Run(insert_alert_, "insert alert"));
        a.id = sqlite3_last_insert_rowid(writer_->db());
      }
      return Status::Ok();
    });
  }

  Result<std::vector<StoredAlert>> Alerts(const AlertFilter& filter) override {
    std::vector<StoredAlert> out;
    VIGIL_RETURN_IF_ERROR(Query(
        fmt::format("SELECT id, received, machine, kind, detected, body FROM alerts WHERE {} "
                    "ORDER BY id DESC LIMIT ?2",
                    EqualsOrAny("machine", filter.machine)),
        "list alerts",
        [&](Statement& st) {
          st.Bind(1, filter.machine).Bind(2, static_cast<int64_t>(filter.limit));
        },
        [&](const Statement& st) {
          out.push_back(StoredAlert{st.Int(0), st.Double(1), st.Text(2), st.Text(3), st.Double(4),
                                    st.Text(5)});
        }));
    return out;
  }

  Status PutIncidents(std::vector<StoredIncident>& incidents) override {
    return Write([&]() -> Status {
      for (StoredIncident& i : incidents) {
        find_incident_.Bind(1, i.node).Bind(2, i.time).Bind(3, i.kind).Bind(4, i.job);
        VIGIL_ASSIGN_OR_RETURN(
            i.repeated, writer_->RunOne(find_incident_, "find incident", [&](const auto& st) {
              i.id = st.Int(0);
              i.received = st.Double(1);
            }));
        if (i.repeated) continue;
        insert_incident_.Bind(1, i.received)
            .Bind(2, i.node)
            .Bind(3, i.time)
            .Bind(4, i.kind)
            .Bind(5, i.cost_node_hours)
            .Bind(6, i.job)
            .Bind(7, i.note);
        VIGIL_RETURN_IF_ERROR(writer_->Run(insert_incident_, "insert incident"));
        i.id = sqlite3_last_insert_rowid(writer_->db());
      }
      return Status::Ok();
    });
  }

  Result<std::vector<StoredIncident>> Incidents(const IncidentFilter& filter) override {
    std::vector<StoredIncident> out;
    VIGIL_RETURN_IF_ERROR(Query(
        fmt::format("SELECT id, received, node, time, kind, cost_node_hours, job, note FROM "
                    "incidents WHERE {} ORDER BY id DESC LIMIT ?2",
                    EqualsOrAny("node", filter.node)),
        "list incidents",
        [&](Statement& st) { st.Bind(1, filter.node).Bind(2, static_cast<int64_t>(filter.limit)); },
        [&](const Statement& st) {
          out.push_back(StoredIncident{st.Int(0), st.Double(1), st.Text(2), st.Double(3),
                                       st.Text(4), st.Double(5), st.Text(6), st.Text(7)});
        }));
    return out;
  }

  Status PutRemediation(remediate::AuditRecord& r) override {
    return Write([&]() -> Status {
      insert_remediation_.Bind(1, r.time)
          .Bind(2, r.node)
          .Bind(3, remediate::ActionName(r.action))
          .Bind(4, remediate::TriggerName(r.trigger))
          .Bind(5, remediate::OutcomeName(r.outcome))
          .Bind(6, r.reason)
          .Bind(7, static_cast<int64_t>(r.attempt))
          .Bind(8, r.command)
          .Bind(9, r.output);
      VIGIL_RETURN_IF_ERROR(writer_->Run(insert_remediation_, "insert remediation record"));
      r.id = sqlite3_last_insert_rowid(writer_->db());
      return Status::Ok();
    });
  }

  Result<std::vector<remediate::AuditRecord>> Remediations(
      const remediate::AuditFilter& filter) override {
    std::vector<remediate::AuditRecord> out;
    Status bad = Status::Ok();
    VIGIL_RETURN_IF_ERROR(Query(
        fmt::format("SELECT id, time, node, action, cause, outcome, reason, attempt, command, "
                    "output FROM remediation WHERE {} AND (?2 = 0 OR id < ?2) ORDER BY id DESC "
                    "LIMIT ?3",
                    EqualsOrAny("node", filter.node)),
        "list remediation records",
        [&](Statement& st) {
          st.Bind(1, filter.node)
              .Bind(2, filter.before)
              .Bind(3, static_cast<int64_t>(filter.limit));
        },
        [&](const Statement& st) {
          remediate::AuditRecord r;
          r.id = st.Int(0);
          r.time = st.Double(1);
          r.node = st.Text(2);
          Result<remediate::Action> action = remediate::ParseAction(st.Text(3));
          Result<remediate::Trigger> trigger = remediate::ParseTrigger(st.Text(4));
          Result<remediate::Outcome> outcome = remediate::ParseOutcome(st.Text(5));
          if (!action.ok() || !trigger.ok() || !outcome.ok()) {
            const Status& s = !action.ok() ? action.status()
                                           : (!trigger.ok() ? trigger.status() : outcome.status());
            bad = Status::IoError(
                fmt::format("{}: remediation record {} is damaged: {}", path_, r.id, s.message()));
            return;
          }
          r.action = *action;
          r.trigger = *trigger;
          r.outcome = *outcome;
          r.reason = st.Text(6);
          r.attempt = static_cast<int>(st.Int(7));
          r.command = st.Text(8);
          r.output = st.Text(9);
          out.push_back(std::move(r));
        }));
    VIGIL_RETURN_IF_ERROR(bad);
    return out;
  }

  Result<StoreCounts> Counts() override {
    StoreCounts out;
    VIGIL_RETURN_IF_ERROR(Query(
        "SELECT (SELECT COALESCE(MAX(id), 0) FROM uploads), (SELECT COUNT(*) FROM nodes WHERE "
        "retired = 0), (SELECT COALESCE(MAX(id), 0) FROM alerts), (SELECT COUNT(*) FROM criteria)",
        "count", kNoBindings, [&](const Statement& st) {
          out = StoreCounts{st.Int(0), st.Int(1), st.Int(2), st.Int(3)};
        }));
    return out;
  }

  Status Health() override { return CheckFile(); }

 private:
  static constexpr std::string_view kNodeColumns =
      "SELECT node, hardware, last_upload, received, start_time, verdict, failing, uploads, "
      "retired FROM nodes";

  static NodeState NodeOf(const Statement& st) {
    return NodeState{st.Text(0),
                     st.Text(1),
                     st.Int(2),
                     st.Double(3),
                     st.Text(4),
                     StoredVerdict(st.Text(5)),
                     SplitFailing(st.Text(6)),
                     st.Int(7),
                     st.Double(8)};
  }

  // The first read of the file's header: a file that is not SQLite at all fails here, and is
  // the user's mistake (another file named by --db) rather than a damaged database.
  Result<int64_t> ApplicationId() {
    Statement st;
    int rc = st.Prepare(writer_->db(), "PRAGMA application_id");
    if (rc == SQLITE_OK) rc = st.Step();
    if ((rc & 0xff) == SQLITE_NOTADB) {
      return Status::InvalidArgument(fmt::format("{}: not a SQLite database", path_));
    }
    if (rc != SQLITE_ROW) return writer_->Error("read the header", rc);
    return st.Int(0);
  }

  // PRAGMA quick_check: every page of every b-tree read and its structure checked (not whether
  // indexes agree with their tables, which integrity_check adds at O(N log N)).
  Status QuickCheck(const Connection& c) const {
    constexpr int kShown = 5;  // problems named in the message
    Statement st;
    VIGIL_RETURN_IF_ERROR(c.Prepare(st, fmt::format("PRAGMA quick_check({})", kShown)));
    std::vector<std::string> problems;
    int rc;
    while ((rc = st.Step()) == SQLITE_ROW) {
      if (st.Text(0) != "ok") problems.push_back(st.Text(0));
    }
    if (rc != SQLITE_DONE) return c.Error("PRAGMA quick_check", rc);
    if (problems.empty()) return Status::Ok();
    return Status::IoError(fmt::format(
        "{}: the database is damaged (PRAGMA quick_check: {}): restore it from a backup, or "
        "move it aside to start with an empty one",
        path_, fmt::join(problems, "; ")));
  }

  Result<int64_t> CountTables() {
    Statement st;
    VIGIL_RETURN_IF_ERROR(writer_->Prepare(st, "SELECT COUNT(*) FROM sqlite_master"));
    const int rc = st.Step();
    if (rc != SQLITE_ROW) return writer_->Error("read schema", rc);
    return st.Int(0);
  }

  // Runs the migrations from the file's version to ours in one transaction, holding the write
  // lock from the start (BEGIN IMMEDIATE), so that a database another process writes to is
  // reported as busy rather than half-migrated.
  Status Migrate() {
    const Connection& w = *writer_;
    VIGIL_RETURN_IF_ERROR(w.Exec("BEGIN IMMEDIATE"));
    auto fail = [&](Status s) {
      (void)w.Exec("ROLLBACK");
      return s;
    };
    Result<int64_t> version = w.PragmaInt("user_version");
    if (!version.ok()) return fail(version.status());
    const auto latest = static_cast<int64_t>(kMigrations.size());
    if (*version > latest) {
      return fail(Status::InvalidArgument(fmt::format(
          "{}: schema version {} is newer than this Vigil's ({}): upgrade Vigil to open it", path_,
          *version, latest)));
    }
    for (int64_t v = *version; v < latest; ++v) {
      Status s = w.Exec(kMigrations[static_cast<size_t>(v)]);
      if (!s.ok()) return fail(s.WithContext(fmt::format("migration to version {}", v + 1)));
    }
    if (*version < latest) {
      Status s = w.Exec(fmt::format("PRAGMA user_version={}", latest));
      if (s.ok()) s = w.Exec(fmt::format("PRAGMA application_id={}", kApplicationId));
      if (!s.ok()) return fail(s);
    }
    return w.Exec("COMMIT");
  }

  Status PrepareWrites() {
    const Connection& w = *writer_;
    VIGIL_RETURN_IF_ERROR(w.Prepare(
        find_upload_,
        "SELECT id, received, verdict, criteria_version, failing, findings FROM uploads WHERE "
        "idempotency_key = ?1"));
    VIGIL_RETURN_IF_ERROR(w.Prepare(
        insert_upload_,
        "INSERT INTO uploads(node, hardware, received, start_time, verdict, criteria_version, "
        "failing, findings, row, document, document_codec, idempotency_key, row_values) "
        "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"));
    VIGIL_RETURN_IF_ERROR(w.Prepare(
        upsert_node_,
        "INSERT INTO nodes(node, hardware, last_upload, received, start_time, verdict, failing, "
        "uploads) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, 1) ON CONFLICT(node) DO UPDATE SET "
        "hardware = excluded.hardware, last_upload = excluded.last_upload, received = "
        "excluded.received, start_time = excluded.start_time, verdict = excluded.verdict, "
        "failing = excluded.failing, uploads = uploads + 1, retired = 0"));
    VIGIL_RETURN_IF_ERROR(w.Prepare(
        insert_criteria_, "INSERT INTO criteria(created, nodes, body) VALUES(?1, ?2, ?3)"));
    VIGIL_RETURN_IF_ERROR(w.Prepare(
        insert_alert_,
        "INSERT INTO alerts(received, machine, kind, detected, body) VALUES(?1, ?2, ?3, ?4, ?5)"));
    // incidents_by_node (node, id) narrows it to the node's incidents.
    VIGIL_RETURN_IF_ERROR(w.Prepare(find_incident_,
                                    "SELECT id, received FROM incidents WHERE node = ?1 AND time = "
                                    "?2 AND kind = ?3 AND job = ?4 LIMIT 1"));
    VIGIL_RETURN_IF_ERROR(
        w.Prepare(insert_incident_,
                  "INSERT INTO incidents(received, node, time, kind, cost_node_hours, job, note) "
                  "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)"));
    VIGIL_RETURN_IF_ERROR(w.Prepare(
        insert_remediation_,
        "INSERT INTO remediation(time, node, action, cause, outcome, reason, attempt, command, "
        "output) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"));
    return Status::Ok();
  }

  Status UpdateVerdicts(std::span<const VerdictUpdate> verdicts) {
    Statement upload, node;
    VIGIL_RETURN_IF_ERROR(writer_->Prepare(
        upload,
        "UPDATE uploads SET verdict = ?2, criteria_version = ?3, failing = ?4, findings = ?5 "
        "WHERE id = ?1"));
    // The node's state follows only while this upload is its latest.
    VIGIL_RETURN_IF_ERROR(writer_->Prepare(
        node,
        "UPDATE nodes SET verdict = ?2, failing = ?3 WHERE node = (SELECT node FROM uploads "
        "WHERE id = ?1) AND last_upload = ?1"));
    for (const VerdictUpdate& v : verdicts) {
      const std::string failing = JoinFailing(v.failing);
      upload.Bind(1, v.upload)
          .Bind(2, VerdictName(v.verdict))
          .Bind(3, v.criteria_version)
          .Bind(4, failing)
          .Bind(5, v.findings);
      VIGIL_RETURN_IF_ERROR(writer_->Run(upload, "update verdict"));
      if (writer_->Changes() == 0) {
        return Status::NotFound(fmt::format("{}: no upload {}", path_, v.upload));
      }
      node.Bind(1, v.upload).Bind(2, VerdictName(v.verdict)).Bind(3, failing);
      VIGIL_RETURN_IF_ERROR(writer_->Run(node, "update node verdict"));
    }
    return Status::Ok();
  }

  // Group commit. The caller's `work` runs inside a savepoint of a transaction that may carry
  // other callers' work; Write returns once that transaction committed (or failed). A Writer's
  // `done` is read and written with mu_ held; its `status` is written by the leader of its group
  // before `done`, and read by its caller after.
  struct Writer {
    const std::function<Status()>* work;
    Status status;
    bool done = false;
    CondVar cv;
  };

  Status Write(const std::function<Status()>& work) EXCLUDES(mu_) {
    Writer me{&work, Status::Ok(), false, {}};
    mu_.Lock();
    queue_.push_back(&me);
    while (!me.done && &me != queue_.front()) me.cv.Wait(mu_);
    if (me.done) {
      mu_.Unlock();
      return me.status;
    }
    // This caller leads: it commits everything queued so far.
    const std::vector<Writer*> group(queue_.begin(), queue_.end());
    mu_.Unlock();
    const Connection& w = *writer_;
    Status tx = CheckFile();
    // Past the bound, the WAL is copied into the database and restarted before this group
    // commits: a stall of one checkpoint, most of whose pages the background ones copied
    // already. PASSIVE checkpoints alone can fall behind for good under constant writes, since
    // the WAL only restarts once a checkpoint has copied all of it.
    if (tx.ok() && wal_frames_.load() >= restart_frames_ &&
        Checkpoint(w, SQLITE_CHECKPOINT_RESTART).ok()) {
      wal_frames_ = 0;
    }
    if (tx.ok()) tx = w.Exec("BEGIN IMMEDIATE");
    for (Writer* g : group) {
      if (!tx.ok()) {
        g->status = tx;
        continue;
      }
      g->status = w.Exec("SAVEPOINT one");
      if (g->status.ok()) g->status = (*g->work)();
      // A failed caller's statements are undone; the others' stay.
      if (!g->status.ok()) (void)w.Exec("ROLLBACK TO one");
      (void)w.Exec("RELEASE one");
    }
    if (tx.ok()) tx = w.Exec("COMMIT");
    if (!tx.ok()) {
      (void)w.Exec("ROLLBACK");
      for (Writer* g : group) {
        if (g->status.ok()) g->status = tx;
      }
    }
    mu_.Lock();
    for (Writer* g : group) {
      queue_.pop_front();
      g->done = true;
      if (g != &me) g->cv.NotifyOne();
    }
    if (!queue_.empty()) queue_.front()->cv.NotifyOne();
    mu_.Unlock();
    return me.status;
  }

  static constexpr auto kNoBindings = [](Statement&) {};

  // Runs `sql` on a free read connection (waiting for one when all are busy) with `bind`
  // applied, calling `row` for each row of the answer.
  Status Query(std::string_view sql, std::string_view what,
               const std::function<void(Statement&)>& bind,
               const std::function<void(const Statement&)>& row) EXCLUDES(readers_mu_) {
    Connection* c;
    {
      MutexLock lock(readers_mu_);
      while (free_readers_.empty()) readers_cv_.Wait(readers_mu_);
      c = free_readers_.back();
      free_readers_.pop_back();
    }
    Status s = [&] {
      Statement st;
      VIGIL_RETURN_IF_ERROR(c->Prepare(st, sql));
      bind(st);
      int rc;
      while ((rc = st.Step()) == SQLITE_ROW) row(st);
      return rc == SQLITE_DONE ? Status::Ok() : c->Error(what, rc);
    }();
    {
      MutexLock lock(readers_mu_);
      free_readers_.push_back(c);
    }
    readers_cv_.NotifyOne();
    return s;
  }

  // Checkpoints (copying the WAL into the database file, then fsync) run on a thread and
  // connection of their own, PASSIVE (never blocking writers or readers), whenever a commit
  // leaves the WAL past passive_frames_. SQLite's default runs them in the writer that commits
  // past 1,000 WAL pages, and every upload queued behind that commit waited for the copy and the
  // fsync: at 1,000 uploads/s that was most of the p99 latency.
  static int WalHook(void* self, sqlite3*, const char*, int frames) {
    auto* store = static_cast<SqliteStore*>(self);
    store->wal_frames_ = frames;
    if (frames >= store->passive_frames_) {
      {
        MutexLock lock(store->checkpoint_mu_);
        store->checkpoint_wanted_ = true;
      }
      store->checkpoint_cv_.NotifyOne();
    }
    return SQLITE_OK;
  }

  void CheckpointLoop() EXCLUDES(checkpoint_mu_) {
    checkpoint_mu_.Lock();
    while (true) {
      while (!stopping_ && !checkpoint_wanted_) checkpoint_cv_.Wait(checkpoint_mu_);
      if (stopping_) break;
      checkpoint_wanted_ = false;
      checkpoint_mu_.Unlock();
      (void)Checkpoint(*checkpoint_conn_, SQLITE_CHECKPOINT_PASSIVE);
      checkpoint_mu_.Lock();
    }
    checkpoint_mu_.Unlock();
  }

  // One checkpoint of `mode` on `c`, one at a time. A failure (the disk, readers holding the
  // WAL past the busy timeout) is logged and returned; the pages stay in the WAL, where they are
  // safe, and the next checkpoint tries again. A PASSIVE one that meets a commit updating the
  // WAL's index returns SQLITE_BUSY: that is routine, and logged at debug level only.
  Status Checkpoint(const Connection& c, int mode) EXCLUDES(checkpoint_run_mu_) {
    const std::string_view name = mode == SQLITE_CHECKPOINT_PASSIVE   ? "PASSIVE"
                                  : mode == SQLITE_CHECKPOINT_RESTART ? "RESTART"
                                                                      : "TRUNCATE";
    MutexLock lock(checkpoint_run_mu_);
    int log = -1, copied = -1;
    const int rc = sqlite3_wal_checkpoint_v2(c.db(), nullptr, mode, &log, &copied);
    Status s;
    if (rc != SQLITE_OK) {
      s = c.Error(fmt::format("{} checkpoint", name), rc);
    } else if (log < 0) {
      s = Status::Internal(fmt::format(
          "{}: {} checkpoint did nothing: the connection has not opened the WAL", path_, name));
    }
    if (s.ok()) return s;
    if (mode == SQLITE_CHECKPOINT_PASSIVE && (rc & 0xff) == SQLITE_BUSY) {
      spdlog::debug("{}", s.message());
    } else {
      spdlog::warn("{}", s.message());
    }
    return s;
  }

  // OK while the file at path_ is still the database this store opened, and whole. Once it is
  // not (deleted, replaced, truncated, its header gone), that is remembered: every later write
  // and health check fails the same way, since what the store writes would be lost at exit.
  Status CheckFile() EXCLUDES(file_mu_) {
    MutexLock lock(file_mu_);
    if (!lost_.ok()) return lost_;
    struct stat opened {};
    if (fstat(lock_fd_, &opened) != 0) return ErrnoError(fmt::format("{}: cannot stat", path_));
    struct stat named {};
    std::string problem;
    if (stat(path_.c_str(), &named) != 0) {
      if (errno != ENOENT) return ErrnoError(fmt::format("{}: cannot stat", path_));
      problem = "was deleted";
    } else if (named.st_dev != opened.st_dev || named.st_ino != opened.st_ino) {
      problem = "was replaced by another file";
    } else if (opened.st_size < size_seen_) {
      // Checkpoints only ever grow it: nothing here deletes rows and VACUUMs.
      problem = fmt::format("was truncated to {} bytes (it had {})", opened.st_size, size_seen_);
    } else if (opened.st_size > 0 && !HasHeader()) {
      problem = "lost its SQLite header";
    }
    if (problem.empty()) {
      size_seen_ = opened.st_size;
      return Status::Ok();
    }
    lost_ = Status::Unavailable(
        fmt::format("{}: the database file {} while this server had it open; nothing more is "
                    "written until vigil serve restarts",
                    path_, problem));
    spdlog::error("{}", lost_.message());
    return lost_;
  }

  bool HasHeader() const {
    constexpr std::string_view kMagic("SQLite format 3\0", 16);
    std::array<char, kMagic.size()> head{};
    return pread(lock_fd_, head.data(), head.size(), 0) == static_cast<ssize_t>(head.size()) &&
           std::string_view(head.data(), head.size()) == kMagic;
  }

  static constexpr int64_t kPassiveFrames = 1000;  // SQLite's default threshold (4 MB)
  static constexpr int64_t kWalFrameHeader = 24;   // bytes before each page in the WAL

  const std::string path_;
  const int lock_fd_;
  std::unique_ptr<Connection> writer_;
  Statement find_upload_, insert_upload_, upsert_node_, insert_criteria_, insert_alert_,
      insert_remediation_, find_incident_, insert_incident_;
  Mutex mu_;
  std::deque<Writer*> queue_ GUARDED_BY(mu_);  // callers of Write, the group's leader first

  std::vector<std::unique_ptr<Connection>> readers_;
  Mutex readers_mu_;
  CondVar readers_cv_;  // a reader was freed
  std::vector<Connection*> free_readers_ GUARDED_BY(readers_mu_);

  std::unique_ptr<Connection> checkpoint_conn_;
  int64_t passive_frames_ = kPassiveFrames;  // a commit past this wakes the checkpoint thread
  int64_t restart_frames_ = 0;  // past this the writer checkpoints (RESTART) before committing
  std::atomic<int64_t> wal_frames_{0};  // the WAL's frames after the latest commit
  Mutex checkpoint_run_mu_;             // held through each checkpoint
  Mutex checkpoint_mu_;
  CondVar checkpoint_cv_;  // a checkpoint is wanted, or the store stops
  bool checkpoint_wanted_ GUARDED_BY(checkpoint_mu_) = false;
  bool stopping_ GUARDED_BY(checkpoint_mu_) = false;
  std::thread checkpointer_;

  Mutex file_mu_;
  Status lost_ GUARDED_BY(file_mu_);          // why the file is no longer the database
  off_t size_seen_ GUARDED_BY(file_mu_) = 0;  // the file's largest size so far
};

}  // namespace

int SqliteSchemaVersion() { return static_cast<int>(kMigrations.size()); }

Status CheckSqliteOptions(const SqliteOptions& o) {
  if (o.readers < 1) {
    return Status::InvalidArgument(fmt::format("readers: expected at least 1, got {}", o.readers));
  }
  if (!(o.busy_timeout_s >= 0)) {
    return Status::InvalidArgument(
        fmt::format("busy_timeout_s: expected 0 or more seconds, got {}", o.busy_timeout_s));
  }
  if (o.wal_limit_bytes < kMinWalLimit) {
    return Status::InvalidArgument(fmt::format(
        "wal_limit_bytes: expected at least {} (1 MiB), got {}", kMinWalLimit, o.wal_limit_bytes));
  }
  return Status::Ok();
}

Result<std::unique_ptr<Store>> OpenSqliteStore(const std::string& path,
                                               const SqliteOptions& options) {
  VIGIL_RETURN_IF_ERROR(CheckSqliteOptions(options));
  // One serving process per file: SQLite would let two share it, but two servers would each
  // cache criteria the other changes. The lock is the open file's (flock), released at exit
  // however the process ends.
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Status::IoError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    close(fd);
    if (err == EWOULDBLOCK) {
      return Status::Unavailable(
          fmt::format("{}: in use by another vigil serve (the file is locked)", path));
    }
    return Status::IoError(fmt::format("{}: cannot lock: {}", path, std::strerror(err)));
  }
  auto store = std::make_unique<SqliteStore>(path, fd);
  VIGIL_RETURN_IF_ERROR(store->Open(options));
  return std::unique_ptr<Store>(std::move(store));
}

}  // namespace vigil::store
