// Test support: a program started in the background and stopped when the object dies, for tests
// that run a daemon (Slurm's, Prometheus), a server or the built `vigil` beside them. Not
// thread-safe: one thread owns a Child.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace vigil::testing {

struct ChildOptions {
  // The program and its arguments; argv[0] is a path, or a name looked up on $PATH.
  std::vector<std::string> argv;
  // Environment variables set in the child over this process's own.
  std::vector<std::pair<std::string, std::string>> env;
  // Where the child's stdout and stderr go: captured for Wait() (capture), else both to the file
  // `log` (created; appended to when append_log, else truncated), else both inherited.
  bool capture = false;
  std::string log;
  bool append_log = false;
  // The child leads a process group of its own, and signals go to the whole group (a daemon's
  // own children are stopped with it).
  bool own_group = false;
  // When stopped (Stop, the destructor): how long the child has after SIGTERM before SIGKILL.
  // Zero: SIGKILL at once.
  std::chrono::milliseconds grace{5000};
};

// How a child ended, and what it wrote when captured.
struct ChildResult {
  int exit_code = -1;  // -1 when killed by a signal (or never started)
  std::string out;     // captured stdout
  std::string err;     // captured stderr
};

class Child {
 public:
  // Starts the program. started() is false when it could not (no such program, no pipe): the
  // program is not running then.
  explicit Child(ChildOptions options);
  // Stops the child when it still runs (Stop).
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  bool started() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }  // -1 when it did not start

  // Whether the child still runs; an exited child is reaped here, its exit kept for Wait().
  bool Alive();
  // Sends `sig` to the child (its group with own_group); nothing once it was reaped.
  void Signal(int sig) const;
  // Waits for the child to exit: its exit code and, when captured, its output.
  ChildResult Wait();
  // SIGTERM, then SIGKILL when it has not exited by `deadline` (at once for a grace of 0); reaped.
  void Stop(std::chrono::steady_clock::time_point deadline);
  // Stop with the options' grace from now.
  void Stop() { Stop(std::chrono::steady_clock::now() + options_.grace); }

 private:
  // Reads the captured pipes to their end.
  void Drain(ChildResult& result);

  ChildOptions options_;
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;  // waitpid's, once reaped_
  int out_fd_ = -1, err_fd_ = -1;
};

}  // namespace vigil::testing
