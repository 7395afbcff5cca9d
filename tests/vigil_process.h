// Runs the built `vigil` binary as a child process for end-to-end tests.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "vigil/core/json.h"
#include "vigil/testing/child.h"

namespace vigil::testing {

// How a process ended, and its output.
using ProcessResult = ChildResult;

// A started `vigil` process (or another program) whose output is collected by Wait(); killed
// (SIGKILL) when it goes out of scope still running.
class VigilProcess {
 public:
  explicit VigilProcess(const std::vector<std::string>& args,
                        const std::string& program = VIGIL_BINARY);
  pid_t pid() const { return child_.pid(); }
  void Signal(int sig) const { child_.Signal(sig); }
  ProcessResult Wait() { return child_.Wait(); }

 private:
  Child child_;
};

// Starts vigil with `args`, waits for it, and returns its exit code and output.
ProcessResult RunVigil(const std::vector<std::string>& args);

// Runs another program (a full path) with `args` and waits for it.
ProcessResult RunProgram(const std::string& program, const std::vector<std::string>& args);

// The process's standard output as JSON; a failed expectation showing its output, and an empty
// value, when it is not JSON.
Json JsonOf(const ProcessResult& r);

// Whether `part` occurs in `s`.
bool Contains(const std::string& s, const std::string& part);

}  // namespace vigil::testing
