// The SQLite store: one database file in WAL mode, its schema versioned (PRAGMA user_version)
// with migrations that run at start-up, one process at a time (an flock on the file).
//
// Writes go through one connection with group commit, as LevelDB's writers do: concurrent
// callers queue, the first one commits everybody's work in one transaction (each caller's
// statements in a savepoint of their own, so that one failure does not undo the others), then
// wakes them. Reads use a pool of read-only connections, which WAL lets run beside the writer.
#pragma once

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
  int readers = 4;            // read connections
  double busy_timeout_s = 2;  // how long to wait for a lock held by another process
};

// Opens (creating it if absent) and migrates the database. Errors, all naming the file:
// InvalidArgument for a file that is not a SQLite database, is corrupt, is another
// application's, or has a newer schema than this Vigil; Unavailable when another process holds
// it; IoError for anything the system refuses.
Result<std::unique_ptr<Store>> OpenSqliteStore(const std::string& path,
                                               const SqliteOptions& options = {});

}  // namespace vigil::store
