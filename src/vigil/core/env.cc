#include "vigil/core/env.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <filesystem>

#include "vigil/core/file.h"

namespace vigil {
namespace {

// ErrnoError, with NotFound for a missing path and InvalidArgument for a file or directory of the
// wrong kind, as env.h promises.
Status PathError(std::string_view what) {
  const int err = errno;
  Status s = ErrnoError(what);
  if (err == ENOENT) return Status::NotFound(s.message());
  if (err == ENOTDIR || err == EISDIR) return Status::InvalidArgument(s.message());
  return s;
}

class PosixEnv final : public Env {
 public:
  Result<std::string> ReadFile(const std::string& path) override { return vigil::ReadFile(path); }

  Status WriteFileAtomic(const std::string& path, std::string_view content) override {
    return vigil::WriteFileAtomic(path, content);
  }

  // Written whole under a name of this process's own beside `path`, then linked to `path`:
  // link() never replaces a file, where rename() would.
  Status CheckWritable(const std::string& path) override { return vigil::CheckWritable(path); }
  Result<bool> WriteNewFile(const std::string& path, std::string_view content) override {
    static std::atomic<int64_t> staged_count{0};
    const std::filesystem::path target(path);
    const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : ".";
    const std::string staged = (dir / fmt::format(".{}-{}.staged", getpid(), staged_count++));
    VIGIL_RETURN_IF_ERROR(vigil::WriteFileAtomic(staged, content));
    Result<bool> created = link(staged.c_str(), path.c_str()) == 0;
    if (!*created && errno != EEXIST) {
      created = ErrnoError(fmt::format("cannot link {} to {}", staged, path));
    }
    unlink(staged.c_str());
    // The new name is durable once the directory is (best effort, as WriteFileAtomic's).
    if (const int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
      fsync(dfd);
      close(dfd);
    }
    return created;
  }

  Status AppendToFile(const std::string& path, std::string_view content) override {
    return vigil::AppendToFile(path, content);
  }

  Status CreateDirectories(const std::string& path) override {
    return vigil::CreateDirectories(path);
  }

  Result<std::vector<std::string>> ListDirectory(const std::string& dir) override {
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) return PathError(fmt::format("cannot list {}", dir));
    std::vector<std::string> names;
    errno = 0;
    while (const dirent* e = readdir(d)) {
      const std::string_view name = e->d_name;
      if (name != "." && name != "..") names.emplace_back(name);
    }
    const int err = errno;
    closedir(d);
    if (err != 0) {
      errno = err;
      return ErrnoError(fmt::format("cannot list {}", dir));
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  Result<FileInfo> Stat(const std::string& path) override {
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) return PathError(fmt::format("cannot stat {}", path));
    FileInfo info;
    info.type = S_ISREG(st.st_mode)   ? FileType::kRegular
                : S_ISDIR(st.st_mode) ? FileType::kDirectory
                                      : FileType::kOther;
    info.size = info.type == FileType::kDirectory ? 0 : static_cast<uint64_t>(st.st_size);
    return info;
  }

  Status RemoveFile(const std::string& path) override {
    if (unlink(path.c_str()) != 0) return PathError(fmt::format("cannot remove {}", path));
    return Status::Ok();
  }

  Status RenameFile(const std::string& from, const std::string& to) override {
    if (rename(from.c_str(), to.c_str()) != 0) {
      return PathError(fmt::format("cannot rename {} to {}", from, to));
    }
    return Status::Ok();
  }

  std::optional<std::string> GetVariable(const std::string& name) const override {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  }
};

}  // namespace

Env& Env::Default() {
  static PosixEnv env;  // no state: safe to use until the process ends
  return env;
}

std::string Env::TempDirectory() const {
  const std::optional<std::string> tmp = GetVariable("TMPDIR");
  return tmp.has_value() && !tmp->empty() ? *tmp : "/tmp";
}

}  // namespace vigil
