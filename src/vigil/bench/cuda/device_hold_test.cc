#include "vigil/bench/cuda/device_hold.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <thread>

#include "vigil/testing/temp_dir.h"

namespace vigil {
namespace {

// The files the holder process has open, as /proc shows them.
std::vector<std::string> OpenFiles(pid_t pid) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& fd :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    std::error_code link_ec;
    const auto target = std::filesystem::read_symlink(fd.path(), link_ec);
    if (!link_ec) out.push_back(target.string());
  }
  return out;
}

TEST(GpuDeviceHoldTest, HoldsTheGpusDeviceFilesUntilItEnds) {
  testing::TempDir dev;
  for (const char* f :
       {"nvidia1", "nvidiactl", "nvidia0", "nvidia-uvm", "nvidia-modeset", "null"}) {
    dev.Write(f, "");
  }
  const std::vector<std::string> expected = {dev.File("nvidia0"), dev.File("nvidia1"),
                                             dev.File("nvidiactl")};
  EXPECT_EQ(NvidiaDeviceFiles(dev.path()), expected);

  pid_t pid = 0;
  {
    std::unique_ptr<GpuDeviceHold> hold = GpuDeviceHold::Start(dev.path());
    ASSERT_NE(hold, nullptr);
    EXPECT_EQ(hold->files(), expected);
    pid = hold->pid();
    // The holder opens the files after it starts: wait for it (bounded).
    std::vector<std::string> open;
    for (int i = 0; i < 200 && open.size() < 3; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      open.clear();
      for (const std::string& f : OpenFiles(pid)) {
        if (f.rfind(dev.path(), 0) == 0) open.push_back(f);
      }
    }
    std::sort(open.begin(), open.end());
    EXPECT_EQ(open, expected);
  }
  // Released and reaped: the process is gone.
  EXPECT_NE(kill(pid, 0), 0);
}

TEST(GpuDeviceHoldTest, NoDriverNoHold) {
  testing::TempDir dev;
  dev.Write("null", "");
  EXPECT_EQ(GpuDeviceHold::Start(dev.path()), nullptr);
  EXPECT_EQ(GpuDeviceHold::Start(dev.File("absent")), nullptr);
}

}  // namespace
}  // namespace vigil
