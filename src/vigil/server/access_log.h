// The access log of `vigil serve`: one JSON object per line for every request answered (time,
// client, method, path, status, bytes in and out, seconds taken). It never holds the
// Authorization header or the query string's values beyond the path's own, so that the token
// cannot leak into it. The file is opened for appending (logrotate's copytruncate works) and
// Reopen makes a moved file be written anew (logrotate's create, then SIGHUP).
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "vigil/core/mutex.h"
#include "vigil/core/status.h"

namespace vigil::server {

struct AccessEntry {
  double time = 0;          // Unix seconds when the request's head arrived
  std::string_view client;  // address:port
  std::string_view method;
  std::string_view path;  // decoded, without the query
  int status = 0;
  uint64_t bytes_in = 0;   // the request body
  uint64_t bytes_out = 0;  // the response body
  double seconds = 0;      // from the head's arrival to the last byte written
};

// The line written for one entry, with its '\n'.
std::string FormatAccessEntry(const AccessEntry& e);

class AccessLog {
 public:
  // `path` "-" is standard output. IoError naming the path when it cannot be opened.
  static Result<std::unique_ptr<AccessLog>> Open(std::string path);
  ~AccessLog();

  // Thread-safe; a failing write is reported once in the error log, never to the client.
  void Write(const AccessEntry& e);
  // Opens the path again (after rotation); the old file stays in use when that fails.
  Status Reopen();

 private:
  AccessLog(std::string path, FILE* file) : path_(std::move(path)), file_(file) {}
  const std::string path_;
  Mutex mu_;
  FILE* file_ GUARDED_BY(mu_);
  bool write_failed_ GUARDED_BY(mu_) = false;
};

}  // namespace vigil::server
