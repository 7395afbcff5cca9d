// An Env that keeps its files, directories and environment variables in memory (LevelDB
// helpers/memenv): tests of code that takes an Env& run without temporary directories, and can
// look at or plant any file directly. It behaves as Env::Default() does on the cases env.h
// describes (env_test.cc runs the same tests on both); it has no links, devices or permissions.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "vigil/core/env.h"
#include "vigil/core/mutex.h"

namespace vigil {

// Paths are normalised lexically ("a//b/./c" is "a/b/c"); relative ones are relative to "/",
// which always exists. Thread-safe.
class MemEnv final : public Env {
 public:
  Result<std::string> ReadFile(const std::string& path) override EXCLUDES(mu_);
  Status WriteFileAtomic(const std::string& path, std::string_view content) override EXCLUDES(mu_);
  Status CheckWritable(const std::string& path) override EXCLUDES(mu_);
  Result<bool> WriteNewFile(const std::string& path, std::string_view content) override
      EXCLUDES(mu_);
  Status AppendToFile(const std::string& path, std::string_view content) override EXCLUDES(mu_);
  Status CreateDirectories(const std::string& path) override EXCLUDES(mu_);
  Result<std::vector<std::string>> ListDirectory(const std::string& dir) override EXCLUDES(mu_);
  Result<FileInfo> Stat(const std::string& path) override EXCLUDES(mu_);
  Status RemoveFile(const std::string& path) override EXCLUDES(mu_);
  Status RenameFile(const std::string& from, const std::string& to) override EXCLUDES(mu_);
  std::optional<std::string> GetVariable(const std::string& name) const override EXCLUDES(mu_);

  // Sets (nullopt: unsets) an environment variable of this Env only.
  void SetVariable(const std::string& name, std::optional<std::string> value) EXCLUDES(mu_);

 private:
  // OK when a file can be written at `path` (normalised): InvalidArgument when it is a
  // directory, IoError when its directory does not exist (as the machine's writes fail).
  Status CheckWritableLocked(const std::string& path) const REQUIRES(mu_);

  mutable Mutex mu_;
  std::map<std::string, std::string> files_ GUARDED_BY(mu_);  // normalised path -> contents
  std::set<std::string> directories_ GUARDED_BY(mu_) = {"/"};
  std::map<std::string, std::string> variables_ GUARDED_BY(mu_);
};

}  // namespace vigil
