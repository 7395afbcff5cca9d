#include "vigil/bench/cuda/device_hold.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

namespace vigil {
namespace {

bool IsGpuFile(const std::string& name) {
  if (name == "nvidiactl") return true;
  if (name.size() <= 6 || name.rfind("nvidia", 0) != 0) return false;
  return std::all_of(name.begin() + 6, name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::vector<std::string> NvidiaDeviceFiles(const std::string& dev_root) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dev_root, ec)) {
    if (IsGpuFile(entry.path().filename().string())) out.push_back(entry.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::unique_ptr<GpuDeviceHold> GpuDeviceHold::Start(const std::string& dev_root) {
  std::vector<std::string> files = NvidiaDeviceFiles(dev_root);
  if (files.empty()) return nullptr;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return nullptr;
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return nullptr;
  }
  if (pid == 0) {
    // The holder: ends with the run's process even if that one is killed.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(0);
    close(fds[1]);
    for (const std::string& f : files) (void)open(f.c_str(), O_RDWR | O_CLOEXEC);
    char byte;
    while (read(fds[0], &byte, 1) < 0 && errno == EINTR) {
    }
    _exit(0);  // the files close with the process
  }
  close(fds[0]);
  return std::unique_ptr<GpuDeviceHold>(new GpuDeviceHold(pid, fds[1], std::move(files)));
}

GpuDeviceHold::GpuDeviceHold(pid_t pid, int release_fd, std::vector<std::string> files)
    : pid_(pid), release_fd_(release_fd), files_(std::move(files)) {}

GpuDeviceHold::~GpuDeviceHold() {
  close(release_fd_);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (waitpid(pid_, nullptr, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      // Stuck in the driver: kill it and let init reap it when it can; the run goes on.
      kill(pid_, SIGKILL);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace vigil
