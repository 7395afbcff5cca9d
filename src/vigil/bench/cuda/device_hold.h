// Keeps the node's NVIDIA GPUs initialised for a run by holding their device files open, as
// nvidia-persistenced does. Without persistence mode the driver tears a GPU down when the last
// process that has its device file open closes it, and sets it up again for the next (seconds
// per GPU), which each benchmark's process (runner.h) would otherwise pay, for NVML and CUDA alike.
// The files are held by a child process, so that a GPU whose set-up hangs in the driver cannot
// hang the run; the holder ends when this object does, or when the run's process dies.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

namespace vigil {

class GpuDeviceHold {
 public:
  // Starts holding nvidiactl and nvidia<N> under `dev_root`; nullptr when there is none (no
  // NVIDIA driver) or no process could be started. Best effort: a file the holder cannot open
  // (permissions) is not held. Call before any other thread starts (it forks).
  static std::unique_ptr<GpuDeviceHold> Start(const std::string& dev_root = "/dev");

  // Lets the files go: the holder exits; it is reaped if it does within a second, else killed.
  ~GpuDeviceHold();
  GpuDeviceHold(const GpuDeviceHold&) = delete;
  GpuDeviceHold& operator=(const GpuDeviceHold&) = delete;

  // The device files asked for, in name order.
  const std::vector<std::string>& files() const { return files_; }

  // The holder's process id.
  pid_t pid() const { return pid_; }

 private:
  GpuDeviceHold(pid_t pid, int release_fd, std::vector<std::string> files);
  pid_t pid_;
  int release_fd_;  // the write end of a pipe the holder waits on; closing it releases the holder
  std::vector<std::string> files_;
};

// The NVIDIA device files under `dev_root` that a hold opens: nvidiactl and nvidia<N>, in name
// order (not nvidia-uvm, nvidia-modeset or nvidia-caps, which initialise no GPU).
std::vector<std::string> NvidiaDeviceFiles(const std::string& dev_root);

}  // namespace vigil
