// Whole-file reads and crash-safe writes. Every error names the path and the system's reason.
#pragma once

#include <string>
#include <string_view>

#include "vigil/core/status.h"

namespace vigil {

// An IoError "<what>: <strerror(errno)>", for a system call that just failed.
Status ErrnoError(std::string_view what);

// Writes all of `content` to `fd`, retrying short writes and EINTR. `what` names the file in
// errors.
Status WriteAll(int fd, std::string_view content, std::string_view what);

// Reads a whole file. NotFound if it does not exist, IoError otherwise.
Result<std::string> ReadFile(const std::string& path);

// Writes `content` to `path` so that the file is either complete or untouched: a temporary file
// in the same directory, fsync, rename over `path`, fsync of the directory. The temporary file is
// removed on any failure.
Status WriteFileAtomic(const std::string& path, std::string_view content);

// Checks, without leaving anything behind, that WriteFileAtomic(path, ...) can succeed: the
// directory exists and accepts a new file, and `path` is not a directory. InvalidArgument if not.
Status CheckWritable(const std::string& path);

// Appends `content` (usually one line) to `path`, creating it, with a single write so that
// concurrent appenders never interleave within it; on a short write the file is cut back to its
// former length, so that no partial line is left.
Status AppendToFile(const std::string& path, std::string_view content);

}  // namespace vigil
