// Test support (linked into tests only): a private temporary directory that cleans up after itself.
#pragma once

#include <string>

namespace vigil::testing {

// A fresh directory below `parent`, removed with everything in it when the object dies.
// The default parent is the working directory (the build tree under CTest), not /tmp: /tmp may
// be a tmpfs, which cannot do O_DIRECT. path() is empty if the directory could not be made.
class TempDir {
 public:
  explicit TempDir(const std::string& parent = "");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  // Writes `text` to path()/relative, creating the directories on the way.
  void Write(const std::string& relative, const std::string& text) const;
  // The number of entries directly inside path().
  size_t EntryCount() const;

 private:
  std::string path_;
};

}  // namespace vigil::testing
