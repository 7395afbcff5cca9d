#include "vigil/core/file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <span>

#include "vigil/core/text.h"

namespace vigil {
namespace {

std::string DirectoryOf(const std::string& path) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

// Linux's own limit on the symbolic links followed in one lookup (MAXSYMLINKS).
constexpr int kMaxSymlinks = 40;

// Where an output path leads: symbolic links followed to their final target (which need not
// exist yet), and the type of that target.
struct OutputTarget {
  std::string path;
  mode_t type = 0;  // S_IFREG, S_IFCHR, ...; 0: absent
  bool replaceable() const { return type == 0 || type == S_IFREG; }
};

Result<OutputTarget> ResolveOutput(const std::string& path) {
  std::filesystem::path p = path;
  for (int links = 0; links <= kMaxSymlinks; ++links) {
    struct stat st {};
    if (lstat(p.c_str(), &st) != 0) {
      // Absent (or below a missing directory: creating the temporary file will say so).
      if (errno == ENOENT || errno == ENOTDIR) return OutputTarget{p.string(), 0};
      return ErrnoError(fmt::format("cannot stat {}", p.string()));
    }
    if (!S_ISLNK(st.st_mode)) {
      if (S_ISDIR(st.st_mode)) {
        return Status::InvalidArgument(fmt::format("{} is a directory, not a file", p.string()));
      }
      return OutputTarget{p.string(), static_cast<mode_t>(st.st_mode & S_IFMT)};
    }
    std::error_code ec;
    const std::filesystem::path target = std::filesystem::read_symlink(p, ec);
    if (ec) {
      return Status::IoError(fmt::format("cannot read the link {}: {}", p.string(), ec.message()));
    }
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  return Status::InvalidArgument(fmt::format("{}: too many levels of symbolic links", path));
}

// A connected stream socket to the Unix socket at `path`, or -1 with errno set.
int ConnectUnixSocket(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    errno = ENAMETOOLONG;
    return -1;
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    const int saved = errno;
    close(fd);
    errno = saved;
    return -1;
  }
  return fd;
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

namespace {

// Opens `path` for reading and fills `*st`: NotFound if it does not exist, InvalidArgument for a
// directory, IoError otherwise.
Result<int> OpenToRead(const std::string& path, struct stat* st) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status::NotFound(fmt::format("{}: no such file", path));
    return ErrnoError(fmt::format("cannot open {}", path));
  }
  if (fstat(fd, st) != 0) *st = {};
  if (S_ISDIR(st->st_mode)) {
    close(fd);
    return Status::InvalidArgument(fmt::format("{} is a directory, not a file", path));
  }
  return fd;
}

}  // namespace

namespace {

// Reads `fd` to its end, then closes it: each read goes to the room `grow(used)` returns after the
// `used` bytes read so far (never empty: it grows the buffer when full). Returns how many bytes
// were read; errors name `path`.
template <typename Grow>
Result<size_t> ReadToEnd(int fd, const std::string& path, Grow grow) {
  size_t used = 0;
  while (true) {
    Result<std::span<char>> room = grow(used);
    if (!room.ok()) {
      close(fd);
      return room.status();
    }
    const ssize_t n = read(fd, room->data(), room->size());
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
  return used;
}

// The size of a regular file's contents as `st` gives it; 0 for anything else.
size_t SizeOf(const struct stat& st) {
  return st.st_size > 0 ? static_cast<size_t>(st.st_size) : 0;
}

}  // namespace

Result<std::string> ReadFile(const std::string& path) {
  struct stat st {};
  VIGIL_ASSIGN_OR_RETURN(const int fd, OpenToRead(path, &st));
  // Read straight into a string of the file's size (plus room to notice growth), not through a
  // small buffer: a 500 MB fleet summary would otherwise be copied and faulted in several times.
  std::string out(SizeOf(st) + 1, '\0');
  VIGIL_ASSIGN_OR_RETURN(const size_t used,
                         ReadToEnd(fd, path, [&](size_t used) -> Result<std::span<char>> {
                           if (used == out.size()) {
                             out.resize(std::max<size_t>(out.size() * 2, 1 << 16));
                           }
                           return std::span<char>(out.data() + used, out.size() - used);
                         }));
  out.resize(used);
  return out;
}

Result<PaddedFile> PaddedFile::Read(const std::string& path, size_t padding) {
  struct stat st {};
  VIGIL_ASSIGN_OR_RETURN(const int fd, OpenToRead(path, &st));
  PaddedFile file;
  VIGIL_ASSIGN_OR_RETURN(
      file.size_, ReadToEnd(fd, path, [&](size_t used) -> Result<std::span<char>> {
        // Room for the padding and one byte more, so that a file that grew is noticed.
        if (used + padding + 1 > file.mapped_) {
          const size_t want =
              std::max({file.mapped_ * 2, SizeOf(st) + padding + 1, size_t{1} << 16});
          void* p = file.data_ == nullptr ? mmap(nullptr, want, PROT_READ | PROT_WRITE,
                                                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                                          : mremap(file.data_, file.mapped_, want, MREMAP_MAYMOVE);
          if (p == MAP_FAILED) return ErrnoError(fmt::format("cannot read {}", path));
          // Huge pages where the system lends them on request: half a gigabyte in 4 KiB pages is
          // 130,000 page faults, which on a virtual machine cost more than parsing the text.
          // Without them (never, or no room) the pages are small, as before.
          madvise(p, want, MADV_HUGEPAGE);
          file.data_ = static_cast<char*>(p);
          file.mapped_ = want;
        }
        return std::span<char>(file.data_ + used, file.mapped_ - padding - used);
      }));
  return file;  // the mapping's pages past the text are zero: the padding
}

PaddedFile::PaddedFile(PaddedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      mapped_(std::exchange(other.mapped_, 0)) {}

PaddedFile::~PaddedFile() {
  if (data_ != nullptr) munmap(data_, mapped_);
}

std::string ReadTrimmed(const std::string& path) {
  Result<std::string> text = ReadFile(path);
  return text.ok() ? std::string(Trim(*text)) : "";
}

Result<LineChunkReader> LineChunkReader::Open(std::string path, size_t chunk_bytes) {
  struct stat st {};
  // A pipe is not opened here: opening waits for its writer, and closing would lose what it sent.
  const bool pipe = stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
  if (!pipe) {
    VIGIL_ASSIGN_OR_RETURN(const int fd, OpenToRead(path, &st));
    close(fd);
  }
  return LineChunkReader(std::move(path), std::max<size_t>(chunk_bytes, 1), !pipe);
}

Result<std::string_view> LineChunkReader::Next(std::string* buffer) {
  if (!regular_) {
    if (offset_ > 0) return std::string_view();
    VIGIL_ASSIGN_OR_RETURN(*buffer, ReadFile(path_));
    offset_ = 1;
    return std::string_view(*buffer);
  }
  struct stat st {};
  VIGIL_ASSIGN_OR_RETURN(const int fd, OpenToRead(path_, &st));
  buffer->resize(chunk_bytes_);
  size_t used = 0, scanned = 0;
  while (true) {
    const ssize_t n =
        pread(fd, buffer->data() + used, buffer->size() - used, static_cast<off_t>(offset_ + used));
    if (n < 0) {
      if (errno == EINTR) continue;
      Status s = ErrnoError(fmt::format("cannot read {}", path_));
      close(fd);
      return s;
    }
    if (n == 0) break;  // the end of the file: its last line, with or without '\n'
    used += static_cast<size_t>(n);
    if (used < buffer->size()) continue;
    // Full: the piece ends after the last '\n'; a line longer than the buffer doubles it. What
    // follows that '\n' is read again with the next piece.
    const size_t last = std::string_view(*buffer).substr(scanned, used - scanned).rfind('\n');
    if (last != std::string_view::npos) {
      used = scanned + last + 1;
      break;
    }
    scanned = used;
    buffer->resize(2 * buffer->size());
  }
  close(fd);
  offset_ += used;
  return std::string_view(buffer->data(), used);
}

Result<AtomicFile> AtomicFile::Create(const std::string& path) {
  VIGIL_ASSIGN_OR_RETURN(OutputTarget target, ResolveOutput(path));
  if (!target.replaceable()) {
    const int fd = target.type == S_IFSOCK
                       ? ConnectUnixSocket(target.path)
                       : open(target.path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return ErrnoError(fmt::format("cannot open {}", target.path));
    return AtomicFile(std::move(target.path), "", fd, /*in_place=*/true,
                      /*sync=*/target.type == S_IFBLK);
  }
  std::string tmp = target.path + ".tmp.XXXXXX";
  const int fd = mkstemp(tmp.data());
  if (fd < 0) {
    return ErrnoError(fmt::format("cannot create a temporary file beside {}", target.path));
  }
  return AtomicFile(std::move(target.path), std::move(tmp), fd, /*in_place=*/false, /*sync=*/true);
}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : path_(std::move(other.path_)),
      tmp_(std::move(other.tmp_)),
      fd_(other.fd_),
      in_place_(other.in_place_),
      sync_(other.sync_) {
  other.fd_ = -1;
  other.tmp_.clear();
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) close(fd_);
  if (!tmp_.empty()) unlink(tmp_.c_str());
}

Status AtomicFile::Append(std::string_view data) {
  const std::string& name = in_place_ ? path_ : tmp_;
  if (fd_ < 0) return Status::Internal(fmt::format("{} is already closed", name));
  return WriteAll(fd_, data, name);
}

Status AtomicFile::Commit() {
  if (fd_ < 0) {
    return Status::Internal(fmt::format("{} is already closed", in_place_ ? path_ : tmp_));
  }
  Status s;
  if (in_place_) {
    if (sync_ && fsync(fd_) != 0) s = ErrnoError(fmt::format("cannot sync {}", path_));
    if (close(fd_) != 0 && s.ok()) s = ErrnoError(fmt::format("cannot close {}", path_));
    fd_ = -1;
    return s;
  }
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

Status CreateDirectories(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec || !std::filesystem::is_directory(path)) {
    return Status::InvalidArgument(
        fmt::format("cannot create directory {}: {}", path, ec ? ec.message() : "not a directory"));
  }
  return Status::Ok();
}

std::string ThisProgramPath() {
  char path[4096] = {};
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  return n > 0 ? std::string(path, static_cast<size_t>(n)) : "vigil";
}

Status CheckWritable(const std::string& given) {
  Result<OutputTarget> target = ResolveOutput(given);
  if (!target.ok()) {
    const Status& s = target.status();
    return s.code() == StatusCode::kInvalidArgument ? s : Status::InvalidArgument(s.message());
  }
  const std::string& path = target->path;
  if (!target->replaceable()) {
    if (access(path.c_str(), W_OK) != 0) {
      return Status::InvalidArgument(
          fmt::format("cannot write {}: {}", path, std::strerror(errno)));
    }
    return Status::Ok();
  }
  struct stat st {};
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
  const bool known = fstat(fd, &st) == 0;
  // A device or FIFO has no length to cut back to and cannot be synced.
  const bool regular = known && S_ISREG(st.st_mode);
  const off_t before = regular ? st.st_size : -1;
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
  if ((regular || (known && S_ISBLK(st.st_mode))) && fsync(fd) != 0 && s.ok()) {
    s = ErrnoError(fmt::format("cannot sync {}", path));
  }
  if (close(fd) != 0 && s.ok()) s = ErrnoError(fmt::format("cannot close {}", path));
  return s;
}

}  // namespace vigil
