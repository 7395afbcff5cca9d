#include "vigil/testing/fifo.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace vigil::testing {

FifoReader::FifoReader(const std::string& path)
    : thread_([this, path] {
        const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) return;
        char buf[65536];
        ssize_t n;
        while ((n = read(fd, buf, sizeof(buf))) > 0) text_.append(buf, static_cast<size_t>(n));
        close(fd);
      }) {}

FifoReader::~FifoReader() {
  if (thread_.joinable()) thread_.join();
}

std::string FifoReader::Take() {
  if (thread_.joinable()) thread_.join();
  return text_;
}

mode_t FileTypeOf(const std::string& path) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0 ? st.st_mode & S_IFMT : 0;
}

}  // namespace vigil::testing
