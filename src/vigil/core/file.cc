#include "vigil/core/file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace vigil {
namespace {

std::string DirectoryOf(const std::string& path) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

}  // namespace

Status WriteAll(int fd, std::string_view content, std::string_view what) {
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(fmt::format("cannot write {}", what));
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status ErrnoError(std::string_view what) {
  return Status::IoError(fmt::format("{}: {}", what, std::strerror(errno)));
}

Result<std::string> ReadFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status::NotFound(fmt::format("{}: no such file", path));
    return ErrnoError(fmt::format("cannot open {}", path));
  }
  // Read straight into a string of the file's size (plus room to notice growth), not through a
  // small buffer: a 500 MB fleet summary would otherwise be copied and faulted in several times.
  struct stat st {};
  const bool known = fstat(fd, &st) == 0;
  if (known && S_ISDIR(st.st_mode)) {
    close(fd);
    return Status::InvalidArgument(fmt::format("{} is a directory, not a file", path));
  }
  const size_t capacity = known && st.st_size > 0 ? static_cast<size_t>(st.st_size) : 0;
  std::string out(capacity + 1, '\0');
  size_t used = 0;
  while (true) {
    if (used == out.size()) out.resize(std::max<size_t>(out.size() * 2, 1 << 16));
    const ssize_t n = read(fd, out.data() + used, out.size() - used);
    if (n < 0) {
      if (errno == EINTR) continue;
      Status s = ErrnoError(fmt::format("cannot read {}", path));
      close(fd);
      return s;
    }
    if (n == 0) break;
    used += static_cast<size_t>(n);
  }
  close(fd);
  out.resize(used);
  return out;
}

Result<AtomicFile> AtomicFile::Create(const std::string& path) {
  std::string tmp = path + ".tmp.XXXXXX";
  const int fd = mkstemp(tmp.data());
  if (fd < 0) return ErrnoError(fmt::format("cannot create a temporary file beside {}", path));
  return AtomicFile(path, std::move(tmp), fd);
}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : path_(std::move(other.path_)), tmp_(std::move(other.tmp_)), fd_(other.fd_) {
  other.fd_ = -1;
  other.tmp_.clear();
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) close(fd_);
  if (!tmp_.empty()) unlink(tmp_.c_str());
}

Status AtomicFile::Append(std::string_view data) {
  if (fd_ < 0) return Status::Internal(fmt::format("{} is already closed", tmp_));
  return WriteAll(fd_, data, tmp_);
}

Status AtomicFile::Commit() {
  if (fd_ < 0) return Status::Internal(fmt::format("{} is already closed", tmp_));
  Status s;
  if (fsync(fd_) != 0) s = ErrnoError(fmt::format("cannot sync {}", tmp_));
  if (fchmod(fd_, 0644) != 0 && s.ok()) s = ErrnoError(fmt::format("cannot chmod {}", tmp_));
  if (close(fd_) != 0 && s.ok()) s = ErrnoError(fmt::format("cannot close {}", tmp_));
  fd_ = -1;
  if (s.ok() && rename(tmp_.c_str(), path_.c_str()) != 0) {
    s = ErrnoError(fmt::format("cannot rename {} to {}", tmp_, path_));
  }
  if (!s.ok()) return s;  // the destructor removes the temporary file
  tmp_.clear();
  const int dfd = open(DirectoryOf(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    fsync(dfd);  // best effort: some filesystems refuse fsync on directories
    close(dfd);
  }
  return Status::Ok();
}

Status WriteFileAtomic(const std::string& path, std::string_view content) {
  VIGIL_ASSIGN_OR_RETURN(AtomicFile file, AtomicFile::Create(path));
  VIGIL_RETURN_IF_ERROR(file.Append(content));
  return file.Commit();
}

Status CheckWritable(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return Status::InvalidArgument(fmt::format("{} is a directory, not a file", path));
  }
  const std::string dir = DirectoryOf(path);
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::InvalidArgument(
        fmt::format("cannot write {}: directory {} does not exist", path, dir));
  }
  std::string probe = path + ".tmp.XXXXXX";
  const int fd = mkstemp(probe.data());
  if (fd < 0) {
    return Status::InvalidArgument(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  }
  close(fd);
  unlink(probe.c_str());
  return Status::Ok();
}

Status AppendToFile(const std::string& path, std::string_view content) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError(fmt::format("cannot open {}", path));
  struct stat st {};
  const off_t before = fstat(fd, &st) == 0 ? st.st_size : -1;
  ssize_t n;
  do {
    n = write(fd, content.data(), content.size());
  } while (n < 0 && errno == EINTR);
  Status s;
  if (n < 0 || static_cast<size_t>(n) != content.size()) {
    s = n < 0 ? ErrnoError(fmt::format("cannot append to {}", path))
              : Status::IoError(fmt::format("short write appending to {}", path));
    if (before >= 0 && ftruncate(fd, before) != 0) {
      s = s.WithContext("and cannot cut the partial line back");
    }
  }
  if (fsync(fd) != 0 && s.ok()) s = ErrnoError(fmt::format("cannot sync {}", path));
  if (close(fd) != 0 && s.ok()) s = ErrnoError(fmt::format("cannot close {}", path));
  return s;
}

}  // namespace vigil
