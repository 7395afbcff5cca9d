// Whole-file reads and crash-safe writes. Every error names the path and the system's reason.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "vigil/core/status.h"

namespace vigil {

// An IoError "<what>: <strerror(errno)>", for a system call that just failed.
Status ErrnoError(std::string_view what);

// Writes all of `content` to `fd`, retrying short writes and EINTR. `what` names the file in
// errors.
Status WriteAll(int fd, std::string_view content, std::string_view what);

// Reads a whole file. NotFound if it does not exist, InvalidArgument for a directory, IoError
// otherwise.
Result<std::string> ReadFile(const std::string& path);

// A file written in pieces that is either complete or untouched: the pieces go to a temporary
// file in the same directory; Commit() syncs it, renames it over `path` and syncs the directory.
// Destroyed uncommitted (an error, an early return), it removes the temporary file.
class AtomicFile {
 public:
  static Result<AtomicFile> Create(const std::string& path);
  AtomicFile(AtomicFile&& other) noexcept;
  AtomicFile& operator=(AtomicFile&&) = delete;
  ~AtomicFile();

  Status Append(std::string_view data);
  Status Commit();

 private:
  AtomicFile(std::string path, std::string tmp, int fd)
      : path_(std::move(path)), tmp_(std::move(tmp)), fd_(fd) {}
  std::string path_, tmp_;
  int fd_ = -1;
};

// Writes `content` to `path` so that the file is either complete or untouched (AtomicFile).
Status WriteFileAtomic(const std::string& path, std::string_view content);

// Checks, without leaving anything behind, that WriteFileAtomic(path, ...) can succeed: the
// directory exists and accepts a new file, and `path` is not a directory. InvalidArgument if not.
Status CheckWritable(const std::string& path);

// Appends `content` (usually one line) to `path`, creating it, with a single write so that
// concurrent appenders never interleave within it; on a short write the file is cut back to its
// former length, so that no partial line is left.
Status AppendToFile(const std::string& path, std::string_view content);

}  // namespace vigil
