// Runs the built `vigil` binary as a child process for end-to-end tests.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace vigil::testing {

struct ProcessResult {
  int exit_code = -1;  // -1 when killed by a signal
  std::string out;
  std::string err;
};

// A started `vigil` process (or another program) whose output is collected by Wait().
class VigilProcess {
 public:
  explicit VigilProcess(const std::vector<std::string>& args,
                        const std::string& program = VIGIL_BINARY);
  ~VigilProcess();
  pid_t pid() const { return pid_; }
  void Signal(int sig) const;
  ProcessResult Wait();

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
};

// Starts vigil with `args`, waits for it, and returns its exit code and output.
ProcessResult RunVigil(const std::vector<std::string>& args);

// Runs another program (a full path) with `args` and waits for it.
ProcessResult RunProgram(const std::string& program, const std::vector<std::string>& args);

}  // namespace vigil::testing
