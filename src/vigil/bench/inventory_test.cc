#include "vigil/bench/inventory.h"

#include <gtest/gtest.h>

#include "vigil/testing/temp_dir.h"

namespace vigil {
namespace {

class InventoryTest : public ::testing::Test {
 protected:
  void Write(const std::string& rel, const std::string& text) { tmp_.Write(rel, text); }
  vigil::testing::TempDir tmp_;
  const std::string root_ = tmp_.path();
};

TEST_F(InventoryTest, ReadsAFakeGpuNode) {
  Write("proc/sys/kernel/hostname", "gpu-017\n");
  Write("proc/sys/kernel/osrelease", "6.1.0-28-amd64\n");
  std::string cpuinfo;
  for (int p = 0; p < 4; ++p) {
    cpuinfo += "processor\t: " + std::to_string(p) + "\nmodel name\t: AMD EPYC 9654\n" +
               "physical id\t: " + std::to_string(p / 2) +
               "\ncore id\t\t: " + std::to_string(p % 2) +
               "\nflags\t\t: fpu sse2 avx avx2 fma avx512f\n\n";
  }
  Write("proc/cpuinfo", cpuinfo);
  Write("proc/meminfo", "MemTotal:       2048 kB\nMemFree:        1 kB\n");
  Write("etc/os-release", "NAME=\"Debian\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n");
  Write("sys/devices/system/node/node0/cpulist", "0-1");
  Write("sys/devices/system/node/node1/cpulist", "2-3");
  Write(
      "proc/driver/nvidia/version",
      "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 06:54:38 UTC 2025\n");
  Write("proc/driver/nvidia/gpus/0000:9a:00.0/information",
        "Model: \t\t NVIDIA H100 80GB HBM3\nBus Location: \t 0000:9a:00.0\n");
  Write("proc/driver/nvidia/gpus/0000:1b:00.0/information",
        "Model: \t\t NVIDIA H100 80GB HBM3\nBus Location: \t 0000:1b:00.0\n");

  const Inventory inv = ReadInventory(root_);
  EXPECT_EQ(inv.hostname, "gpu-017");
  EXPECT_EQ(inv.kernel, "6.1.0-28-amd64");
  EXPECT_EQ(inv.cpu_model, "AMD EPYC 9654");
  EXPECT_EQ(inv.threads, 4);
  EXPECT_EQ(inv.sockets, 2);
  EXPECT_EQ(inv.cores, 4);
  EXPECT_EQ(inv.numa_nodes, 2);
  EXPECT_EQ(inv.cpu_vector_extensions,
            (std::vector<std::string>{"sse2", "avx", "avx2", "fma", "avx512f"}));
  EXPECT_EQ(inv.memory_bytes, 2048.0 * 1024);
  EXPECT_EQ(inv.os, "Debian GNU/Linux 12 (bookworm)");
  EXPECT_EQ(inv.gpu_driver, "580.65.06");
  ASSERT_EQ(inv.gpus.size(), 2u);
  EXPECT_EQ(inv.gpus[0].bus_id, "0000:1b:00.0");  // PCI order gives the index
  EXPECT_EQ(inv.gpus[0].index, 0);
  EXPECT_EQ(inv.gpus[1].index, 1);
  EXPECT_EQ(inv.gpus[1].name, "NVIDIA H100 80GB HBM3");
}

TEST_F(InventoryTest, EmptyTreeGivesEmptyInventory) {
  const Inventory inv = ReadInventory(root_);
  EXPECT_EQ(inv.hostname, "");
  EXPECT_EQ(inv.threads, 0);
  EXPECT_EQ(inv.numa_nodes, 1);
  EXPECT_TRUE(inv.gpus.empty());
  EXPECT_EQ(inv.gpu_driver, "");
}

TEST_F(InventoryTest, ThisMachine) {
  const Inventory inv = ReadInventory();
  EXPECT_GT(inv.threads, 0);
  EXPECT_GT(inv.memory_bytes, 0);
  EXPECT_FALSE(inv.kernel.empty());
}

}  // namespace
}  // namespace vigil
