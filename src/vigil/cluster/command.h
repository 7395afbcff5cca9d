// Running another program and capturing what it says: the scheduler's commands (scontrol), and
// the external commands a remediation policy names. No shell is involved: the arguments are
// passed as they are, so a node name or a reason cannot inject anything.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "vigil/core/status.h"

namespace vigil::cluster {

struct CommandOutput {
  int exit_code = 0;  // the program's exit status; 128 + N when signal N ended it
  std::string out;    // its standard output, at most kMaxCommandOutput bytes
  std::string err;    // its standard error, at most kMaxCommandOutput bytes
};

// What is kept of each stream; the rest is read and dropped, so a chatty program cannot block.
inline constexpr size_t kMaxCommandOutput = 1 << 20;

// What a program said last, for an error about it: the last `bytes` of its standard error (of its
// standard output when it wrote no error), trimmed; "..." before it when more came first.
std::string LastOutput(const CommandOutput& output, size_t bytes = 2000);

struct CommandSpec {
  std::vector<std::string> argv;  // argv[0] is looked up in PATH unless it holds a '/'
  std::vector<std::string> env;  // NAME=VALUE added to (or replacing in) this process's environment
  double timeout_s = 10;         // then its process group is killed (SIGKILL)
  // When set (by another thread) while the program runs, its process group gets SIGTERM, and
  // SIGKILL kTerminateGrace later if it still runs; Run then returns Cancelled. Null: never.
  const std::atomic<bool>* cancel = nullptr;
  // Variables whose names begin with one of these are left out of the program's environment
  // (before `env` is added): settings of the caller's shell that would change what it reports.
  std::vector<std::string> unset_prefixes = {};
};

// How long a cancelled program has between SIGTERM and SIGKILL (mpirun tears its daemons down).
inline constexpr double kTerminateGrace = 5;

// The text of `argv` for messages: the words joined by spaces, each quoted when it needs it.
std::string CommandText(const std::vector<std::string>& argv);

// `s` as one word for /bin/sh: in single quotes, each ' written as '\''.
std::string ShellWord(std::string_view s);

// `argv` as one line that /bin/sh reads back as these words (ShellWord for each that is not plain):
// what a person may paste, where CommandText is for reading in a message.
std::string ShellCommandText(const std::vector<std::string>& argv);

// Runs programs. Implementations: the real one (ProcessRunner) and fakes in tests.
class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  // Runs `spec` to its end and returns its exit code and output; a non-zero exit is not an error
  // here (the caller knows what it means). Errors: InvalidArgument for an empty argv;
  // NotFound when the program does not exist or cannot be executed; DeadlineExceeded when it ran
  // past spec.timeout_s (it was killed); Cancelled when spec.cancel was set; IoError when pipes or
  // processes cannot be made. Thread-safe in the real implementation.
  virtual Result<CommandOutput> Run(const CommandSpec& spec) = 0;
};

// The real runner: posix_spawn, standard input from /dev/null, a process group of its own.
std::unique_ptr<CommandRunner> MakeProcessRunner();

}  // namespace vigil::cluster
