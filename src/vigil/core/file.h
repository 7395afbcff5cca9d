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

// A whole file in memory followed by zero bytes that a parser may read past its end (simdjson
// reads up to SIMDJSON_PADDING bytes beyond a document), for files of up to gigabytes read whole:
// its memory is mapped for it, in transparent huge pages where the system lends them on request.
// Move-only.
class PaddedFile {
 public:
  // Reads `path` to its end, followed by at least `padding` zero bytes. Errors as ReadFile's.
  static Result<PaddedFile> Read(const std::string& path, size_t padding);
  PaddedFile(PaddedFile&& other) noexcept;
  PaddedFile& operator=(PaddedFile&&) = delete;
  ~PaddedFile();

  // The file's contents; text().data()[text().size() + i] is 0 for i < padding.
  std::string_view text() const { return {data_, size_}; }

 private:
  PaddedFile() = default;
  char* data_ = nullptr;
  size_t size_ = 0;
  size_t mapped_ = 0;
};

// A small file's text (a sysfs or procfs value) without the white space around it; "" when it
// cannot be read, which for such a value means the same as an empty one.
std::string ReadTrimmed(const std::string& path);

// Reads a file in pieces of whole lines, so that a file of any size is read in bounded memory
// (LineReader numbers each piece's lines on from the pieces before). A regular file is opened for
// each piece and read from where the last one ended, and the piece goes to a buffer the caller
// gives, so that readers of any number of files hold neither a file descriptor nor a buffer
// between pieces; anything else (a pipe, /dev/stdin) can be read only once and comes whole as the
// first piece. Not thread-safe.
class LineChunkReader {
 public:
  // `chunk_bytes`: the size of a piece (more when one line is longer). Checks that `path` can be
  // read, with ReadFile's errors; reads nothing yet.
  static Result<LineChunkReader> Open(std::string path, size_t chunk_bytes);

  // Reads the next piece into `*buffer` (whatever it held is replaced; one buffer can serve many
  // readers) and returns it: whole lines, each with its '\n' (the file's last line may lack
  // one); empty at the end of the file. Errors as ReadFile's.
  Result<std::string_view> Next(std::string* buffer);

  // Whether the file can be read again from its start (a regular file).
  bool regular() const { return regular_; }

 private:
  LineChunkReader(std::string path, size_t chunk_bytes, bool regular)
      : path_(std::move(path)), chunk_bytes_(chunk_bytes), regular_(regular) {}
  std::string path_;
  size_t chunk_bytes_;
  bool regular_;
  size_t offset_ = 0;  // where the next piece starts (not regular: 1 once read)
};

// A file written in pieces that is either complete or untouched: the pieces go to a temporary
// file in the same directory; Commit() syncs it, renames it over `path` and syncs the directory.
// Destroyed uncommitted (an error, an early return), it removes the temporary file.
//
// Only a regular file (or an absent one) is replaced. A symbolic link is followed: its final
// target is written as above, and the link stays. A character or block device, a FIFO or a socket
// cannot be replaced (`--out /dev/null` as root must not put a file where the device was): it is
// opened (a socket: connected to) in Create and written in place as the pieces come, so that a
// reader of a FIFO sees them at once, and an error leaves what was already written. Opening a
// FIFO waits for its reader, as a shell's `>` does.
class AtomicFile {
 public:
  // IoError if the temporary file cannot be made or the target opened; InvalidArgument if `path`
  // is a directory or a loop of symbolic links.
  static Result<AtomicFile> Create(const std::string& path);
  AtomicFile(AtomicFile&& other) noexcept;
  AtomicFile& operator=(AtomicFile&&) = delete;
  ~AtomicFile();

  Status Append(std::string_view data);
  Status Commit();

 private:
  AtomicFile(std::string path, std::string tmp, int fd, bool in_place, bool sync)
      : path_(std::move(path)), tmp_(std::move(tmp)), fd_(fd), in_place_(in_place), sync_(sync) {}
  std::string path_;  // the file written: the target of a symbolic link, not the link
  std::string tmp_;   // the temporary file; empty when written in place
  int fd_ = -1;
  bool in_place_ = false;  // a device, FIFO or socket, written directly
  bool sync_ = true;       // fsync at Commit (not for a FIFO, a socket or a character device)
};

// Writes `content` to `path` so that the file is either complete or untouched (AtomicFile).
Status WriteFileAtomic(const std::string& path, std::string_view content);

// Checks, without leaving anything behind, that WriteFileAtomic(path, ...) can succeed: the
// directory exists and accepts a new file, and `path` is not a directory; for a device, FIFO or
// socket (after symbolic links), that it may be written. InvalidArgument if not.
Status CheckWritable(const std::string& path);

// Creates directory `path` and its missing parents, as `mkdir -p` does; nothing when it exists.
// InvalidArgument naming the path when it cannot (a file in the way, no permission).
Status CreateDirectories(const std::string& path);

// The running program's path (/proc/self/exe); "vigil" when it cannot be read.
std::string ThisProgramPath();

// Appends `content` (usually one line) to `path`, creating it, with a single write so that
// concurrent appenders never interleave within it; on a short write a regular file is cut back to
// its former length, so that no partial line is left. A device or FIFO is written, not synced.
Status AppendToFile(const std::string& path, std::string_view content);

}  // namespace vigil
