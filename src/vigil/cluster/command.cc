#include "vigil/cluster/command.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>

#include "vigil/core/file.h"
#include "vigil/core/text.h"

extern char** environ;

namespace vigil::cluster {
namespace {

// Both ends of a pipe, closed when it dies.
struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() = default;
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  ~Pipe() {
    for (int f : fd) {
      if (f >= 0) close(f);
    }
  }
  void CloseEnd(int i) {
    if (fd[i] >= 0) close(fd[i]);
    fd[i] = -1;
  }
};

// This process's environment without the variables named with one of `unset_prefixes`, with
// `extra` (NAME=VALUE) added or replacing, as strings that the returned pointers (null-terminated)
// point into.
std::vector<std::string> Environment(const std::vector<std::string>& extra,
                                     const std::vector<std::string>& unset_prefixes) {
  std::map<std::string, std::string> by_name;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry = *e;
    std::string name = entry.substr(0, entry.find('='));
    const bool unset = std::any_of(unset_prefixes.begin(), unset_prefixes.end(),
                                   [&](const std::string& p) { return name.starts_with(p); });
    if (!unset) by_name[std::move(name)] = entry;
  }
  for (const std::string& entry : extra) by_name[entry.substr(0, entry.find('='))] = entry;
  std::vector<std::string> out;
  out.reserve(by_name.size());
  for (auto& kv : by_name) out.push_back(std::move(kv.second));
  return out;
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

int ExitCodeOf(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 255;
}

class ProcessRunner final : public CommandRunner {
 public:
  Result<CommandOutput> Run(const CommandSpec& spec) override {
    if (spec.argv.empty()) return Status::InvalidArgument("no command to run");
    const std::string text = CommandText(spec.argv);
    Pipe out, err;
    if (pipe2(out.fd, O_CLOEXEC) != 0 || pipe2(err.fd, O_CLOEXEC) != 0) {
      return ErrnoError("pipe").WithContext(text);
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out.fd[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, err.fd[1], STDERR_FILENO);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setpgroup(&attr, 0);  // a group of its own, killed whole at the deadline
    sigset_t defaults;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGTERM);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setflags(
        &attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    std::vector<std::string> args = spec.argv;
    std::vector<std::string> env = Environment(spec.env, spec.unset_prefixes);
    std::vector<char*> argp = Pointers(args);
    std::vector<char*> envp = Pointers(env);
    pid_t pid = -1;
    const int rc = posix_spawnp(&pid, argp[0], &actions, &attr, argp.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) {
      const std::string why = std::strerror(rc);
      if (rc == ENOENT || rc == EACCES || rc == ENOEXEC || rc == ENOTDIR) {
        return Status::NotFound(fmt::format("{}: cannot run {}: {}", text, Quote(args[0]), why));
      }
      return Status::IoError(fmt::format("{}: cannot start: {}", text, why));
    }
    out.CloseEnd(1);
    err.CloseEnd(1);
    CommandOutput result;
    const Ending ending = Drain(out.fd[0], err.fd[0], spec, pid, result);
    if (ending != Ending::kFinished) kill(-pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    // What it said last goes with the error: why a launcher or a scheduler command hung.
    const std::string said = LastOutput(result);
    const std::string tail = said.empty() ? "" : "; its last output: " + said;
    if (ending == Ending::kTimedOut) {
      return Status::DeadlineExceeded(
          fmt::format("{}: still running after {:g} s, killed{}", text, spec.timeout_s, tail));
    }
    if (ending == Ending::kCancelled) {
      return Status::Cancelled(fmt::format("{}: stopped on request{}", text, tail));
    }
    result.exit_code = ExitCodeOf(status);
    return result;
  }

 private:
  enum class Ending { kFinished, kTimedOut, kCancelled };

  // Reads both streams until both close, the deadline passes, or the caller cancels (then the
  // group gets SIGTERM, and the streams kTerminateGrace more to close).
  static Ending Drain(int out_fd, int err_fd, const CommandSpec& spec, pid_t pid,
                      CommandOutput& result) {
    using Clock = std::chrono::steady_clock;
    const auto after = [](double seconds) {
      return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                std::chrono::duration<double>(std::max(0.0, seconds)));
    };
    Clock::time_point deadline = after(spec.timeout_s);
    bool cancelled = false;
    std::array<pollfd, 2> fds{pollfd{out_fd, POLLIN, 0}, pollfd{err_fd, POLLIN, 0}};
    std::array<std::string*, 2> sinks{&result.out, &result.err};
    int open = 2;
    std::array<char, 65536> buf{};
    while (open > 0) {
      if (!cancelled && spec.cancel != nullptr && spec.cancel->load()) {
        cancelled = true;
        kill(-pid, SIGTERM);
        deadline = std::min(deadline, after(kTerminateGrace));
      }
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return cancelled ? Ending::kCancelled : Ending::kTimedOut;
      const int n = poll(fds.data(), fds.size(), static_cast<int>(std::min<int64_t>(left, 200)));
      if (n < 0 && errno != EINTR) return cancelled ? Ending::kCancelled : Ending::kTimedOut;
      for (size_t i = 0; i < fds.size(); ++i) {
        if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
        const ssize_t got = read(fds[i].fd, buf.data(), buf.size());
        if (got > 0) {
          std::string& sink = *sinks[i];
          const size_t keep = std::min(static_cast<size_t>(got), kMaxCommandOutput - sink.size());
          sink.append(buf.data(), keep);
        } else if (got == 0 || errno != EINTR) {
          fds[i].fd = -1;  // poll ignores negative descriptors
          --open;
        }
      }
    }
    return cancelled ? Ending::kCancelled : Ending::kFinished;
  }
};

}  // namespace

std::string LastOutput(const CommandOutput& output, size_t bytes) {
  const std::string_view said = output.err.empty() ? output.out : output.err;
  if (said.size() <= bytes) return std::string(Trim(said));
  return "..." + std::string(Trim(said.substr(said.size() - bytes)));
}

std::string CommandText(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) {
    if (!out.empty()) out += ' ';
    const bool plain =
        !a.empty() && a.find_first_of(" \t\n'\"\\$`;&|<>()*?[]{}!#~") == std::string::npos;
    out += plain ? a : Quote(a);
  }
  return out;
}

std::string ShellWord(std::string_view s) {
  std::string out = "'";
  for (const char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string ShellCommandText(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) {
    if (!out.empty()) out += ' ';
    out += IsPlainWord(a, "-_./:=,%@+") ? a : ShellWord(a);
  }
  return out;
}

std::unique_ptr<CommandRunner> MakeProcessRunner() { return std::make_unique<ProcessRunner>(); }

}  // namespace vigil::cluster
