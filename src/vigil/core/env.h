// The files and environment variables that Vigil's library code uses, behind one interface (LevelDB
// include/leveldb/env.h): Env::Default() is the machine's (file.h's functions and getenv), and
// MemEnv (mem_env.h) keeps everything in memory, for tests of logic that only happens to read or
// write files. Code that takes an Env& (a constructor argument or an options field, defaulting to
// Env::Default()) can be tested without temporary directories.
//
// Paths are strings as the POSIX calls take them. Errors name the path: NotFound when a file or
// directory that must exist does not, InvalidArgument for a directory where a file must be (or a
// file where a directory must be), IoError for anything else the system refuses. The writes
// (WriteFileAtomic, WriteNewFile, AppendToFile) fail with IoError when the file's directory does
// not exist: they make no directories.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vigil/core/status.h"

namespace vigil {

enum class FileType { kRegular, kDirectory, kOther };

struct FileInfo {
  FileType type = FileType::kRegular;  // after symbolic links (stat, not lstat)
  uint64_t size = 0;                   // bytes; 0 for a directory
};

class Env {
 public:
  virtual ~Env() = default;

  // The machine's files and the process's environment variables. Lives as long as the process;
  // thread-safe.
  static Env& Default();

  // A whole file's contents (core's ReadFile).
  virtual Result<std::string> ReadFile(const std::string& path) = 0;
  // Writes `content` so that `path` is either complete or untouched (core's WriteFileAtomic).
  virtual Status WriteFileAtomic(const std::string& path, std::string_view content) = 0;
  // Checks, without leaving anything behind, that WriteFileAtomic(path, ...) can succeed (core's
  // CheckWritable): the directory exists and `path` is not a directory. InvalidArgument naming the
  // path otherwise, so that a command refuses before its work rather than after it.
  virtual Status CheckWritable(const std::string& path) = 0;
  // Creates `path` holding `content`, complete or absent, unless the name is taken: then it
  // writes nothing and returns false. An existing file is never replaced, even by a caller on
  // another thread or process that writes the same name at the same instant.
  virtual Result<bool> WriteNewFile(const std::string& path, std::string_view content) = 0;
  // Appends `content` to `path`, creating it, in one write (core's AppendToFile).
  virtual Status AppendToFile(const std::string& path, std::string_view content) = 0;
  // Creates `path` and its missing parents; nothing when it exists (core's CreateDirectories).
  virtual Status CreateDirectories(const std::string& path) = 0;
  // The names of the entries directly inside `dir` (no "." or ".."), sorted. NotFound when `dir`
  // does not exist, InvalidArgument when it is not a directory.
  virtual Result<std::vector<std::string>> ListDirectory(const std::string& dir) = 0;
  // What `path` is. NotFound when it does not exist.
  virtual Result<FileInfo> Stat(const std::string& path) = 0;
  // Removes the file `path` (not a directory). NotFound when it does not exist.
  virtual Status RemoveFile(const std::string& path) = 0;
  // Renames the file `from` to `to`, replacing a file there. NotFound when `from` does not exist.
  virtual Status RenameFile(const std::string& from, const std::string& to) = 0;
  // The environment variable `name`; nullopt when it is not set.
  virtual std::optional<std::string> GetVariable(const std::string& name) const = 0;

  // Where temporary files go: $TMPDIR when it is set and not empty, else /tmp.
  std::string TempDirectory() const;
};

}  // namespace vigil
