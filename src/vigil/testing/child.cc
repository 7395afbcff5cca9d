#include "vigil/testing/child.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

extern char** environ;

namespace vigil::testing {
namespace {

// How often Stop looks whether the child has exited.
constexpr std::chrono::milliseconds kStopPoll{20};

// This process's environment with `overrides` set over it, as "NAME=value" strings.
std::vector<std::string> EnvironmentWith(
    const std::vector<std::pair<std::string, std::string>>& overrides) {
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const auto& [n, v] : overrides) replaced = replaced || n == name;
    if (!replaced) out.push_back(entry);
  }
  for (const auto& [n, v] : overrides) out.push_back(n + "=" + v);
  return out;
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

Child::Child(ChildOptions options) : options_(std::move(options)) {
  if (options_.argv.empty()) return;
  // Everything the child needs is made before fork: after it, only async-signal-safe calls.
  std::vector<std::string> args = options_.argv;
  std::vector<std::string> envs = EnvironmentWith(options_.env);
  std::vector<char*> argv = Pointers(args), envp = Pointers(envs);
  const int log_flags = O_WRONLY | O_CREAT | O_CLOEXEC | (options_.append_log ? O_APPEND : O_TRUNC);
  int out[2] = {-1, -1}, err[2] = {-1, -1}, exec_status[2] = {-1, -1};
  if (options_.capture && (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)) return;
  // Closed on a successful exec; carries errno when exec fails.
  if (pipe2(exec_status, O_CLOEXEC) != 0) return;
  const pid_t pid = fork();
  if (pid == 0) {
    if (options_.own_group) setpgid(0, 0);
    if (options_.capture) {
      dup2(out[1], STDOUT_FILENO);
      dup2(err[1], STDERR_FILENO);
    } else if (!options_.log.empty()) {
      const int fd = open(options_.log.c_str(), log_flags, 0644);
      if (fd >= 0) {
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
      }
    }
    execvpe(argv[0], argv.data(), envp.data());
    const int e = errno;
    (void)!write(exec_status[1], &e, sizeof(e));
    _exit(127);
  }
  close(exec_status[1]);
  if (options_.capture) {
    close(out[1]);
    close(err[1]);
    out_fd_ = out[0];
    err_fd_ = err[0];
  }
  if (pid < 0) {
    close(exec_status[0]);
    return;
  }
  int e = 0;
  ssize_t n = 0;
  do {
    n = read(exec_status[0], &e, sizeof(e));
  } while (n < 0 && errno == EINTR);
  close(exec_status[0]);
  pid_ = pid;
  if (n > 0) {  // exec failed: the child has exited
    waitpid(pid_, &status_, 0);
    pid_ = -1;
  }
}

Child::~Child() {
  if (pid_ > 0 && !reaped_) Stop();
  if (out_fd_ >= 0) close(out_fd_);
  if (err_fd_ >= 0) close(err_fd_);
}

bool Child::Alive() {
  if (pid_ <= 0 || reaped_) return false;
  const pid_t r = waitpid(pid_, &status_, WNOHANG);
  if (r == pid_ || (r < 0 && errno == ECHILD)) reaped_ = true;
  return !reaped_;
}

void Child::Signal(int sig) const {
  if (pid_ <= 0 || reaped_) return;
  kill(options_.own_group ? -pid_ : pid_, sig);
}

void Child::Drain(ChildResult& r) {
  pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  int open_fds = (out_fd_ >= 0) + (err_fd_ >= 0);
  while (open_fds > 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[65536];
      const ssize_t n = read(fds[i].fd, buf, sizeof(buf));
      if (n > 0) {
        sinks[i]->append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  out_fd_ = err_fd_ = -1;
}

ChildResult Child::Wait() {
  ChildResult r;
  Drain(r);
  if (pid_ <= 0) return r;
  if (!reaped_) {
    while (waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
  }
  r.exit_code = WIFEXITED(status_) ? WEXITSTATUS(status_) : -1;
  return r;
}

void Child::Stop(std::chrono::steady_clock::time_point deadline) {
  if (pid_ <= 0 || reaped_) return;
  if (options_.grace.count() > 0) {
    Signal(SIGTERM);
    while (Alive() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(kStopPoll);
    }
  }
  if (Alive()) {
    Signal(SIGKILL);
    Wait();
  }
}

}  // namespace vigil::testing
