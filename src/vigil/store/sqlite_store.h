// The SQLite store: one database file in WAL mode, its schema versioned (PRAGMA user_version)
// with migrations that run at start-up, one process at a time (an flock on the file).
//
// Writes go through one connection with group commit, as LevelDB's writers do: concurrent
// callers queue, the first one commits everybody's work in one transaction (each caller's
// statements in a savepoint of their own, so that one failure does not undo the others), then
// wakes them. Reads use a pool of read-only connections, which WAL lets run beside the writer.
//
// The WAL stays under SqliteOptions::wal_limit_bytes (plus one group commit): a thread copies it
// into the database (PASSIVE checkpoints) as it grows, and past half the limit the writer
// checkpoints and restarts it before its next commit. Before each group commit, and in Health(),
// the store checks that the file at its path is still the one it opened, and whole.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "vigil/core/status.h"
#include "vigil/store/store.h"

namespace vigil::store {

// The schema version this Vigil writes; a newer database is refused.
int SqliteSchemaVersion();

struct SqliteOptions {
  // FULL (fsync at every commit: an acknowledged write survives power loss) or NORMAL (fsync
  // at checkpoints: it survives a crash of the process, not of the machine).
  bool sync_full = true;
  int readers = 4;            // read connections; at least 1
  double busy_timeout_s = 2;  // how long to wait for a lock held by another process
  // The -wal file's bound, at least 1 MiB. Past half of it the writer checkpoints (a stall of
  // one checkpoint); a WAL that restarts is cut back to a quarter of it.
  int64_t wal_limit_bytes = int64_t{64} << 20;
};

inline constexpr int64_t kMinWalLimit = int64_t{1} << 20;

// InvalidArgument naming the field that is out of range.
Status CheckSqliteOptions(const SqliteOptions& options);

// Opens (creating it if absent), checks (PRAGMA quick_check: every page is read, seconds for a
// database of gigabytes) and migrates the database. Errors, all naming the file:
// InvalidArgument for bad options, a file that is not a SQLite database, is another
// application's, or has a newer schema than this Vigil; IoError for a damaged database (the
// problems quick_check found) and for anything the system refuses; Unavailable when another
// process holds it.
Result<std::unique_ptr<Store>> OpenSqliteStore(const std::string& path,
                                               const SqliteOptions& options = {});

}  // namespace vigil::store
