// Test support for outputs that are not regular files: what a FIFO receives, and what kind of
// file a path is.
#pragma once

#include <sys/types.h>

#include <string>
#include <thread>

namespace vigil::testing {

// Everything written to the FIFO at `path` until its writer closes it, read on a thread started
// at construction (a writer's open blocks until a reader has the FIFO open).
class FifoReader {
 public:
  explicit FifoReader(const std::string& path);
  ~FifoReader();
  FifoReader(const FifoReader&) = delete;
  FifoReader& operator=(const FifoReader&) = delete;

  // Waits for the writer to close the FIFO; what it wrote.
  std::string Take();

 private:
  std::string text_;
  std::thread thread_;
};

// The file type bits (S_IFREG, S_IFCHR, S_IFIFO, ...) of `path` itself, not of a link's target;
// 0 when it does not exist.
mode_t FileTypeOf(const std::string& path);

}  // namespace vigil::testing
