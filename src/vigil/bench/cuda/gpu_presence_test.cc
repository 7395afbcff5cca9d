#include "vigil/bench/cuda/gpu_presence.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fmt/format.h>

#include <map>

#include "vigil/testing/fake_sysfs.h"

namespace vigil {
namespace {

using testing::AddFakePciDevice;
using testing::FakePciDevice;

// Metric key -> value.
std::map<std::string, double> ByKey(const BenchmarkRecord& r) {
  std::map<std::string, double> out;
  for (const Metric& m : r.metrics) out[m.key.ToString()] = m.value;
  return out;
}

// fake_nvml's GPU i sits on bus 0x10 * (i + 1).
std::string FakeBusId(int i) { return fmt::format("0000:{:02x}:00.0", 0x10 * (i + 1)); }

// A host root whose PCI holds `gpus` of fake_nvml's GPUs, plus devices that are not GPUs.
void AddGpus(const testing::TempDir& root, int gpus) {
  for (int i = 0; i < gpus; ++i) AddFakePciDevice(root, {FakeBusId(i)});
  AddFakePciDevice(root, {"0000:10:00.1", "0x10de", "0x040300"});  // the GPU's audio function
  AddFakePciDevice(root, {"0000:c0:00.0", "0x10de", "0x068000"});  // an NVSwitch
  AddFakePciDevice(root, {"0000:c1:00.0", "0x15b3", "0x020700"});  // a NIC
}

GpuPresenceReading Look(const testing::TempDir& root, const char* nvml = VIGIL_FAKE_NVML) {
  return ReadGpuPresence(root.path() + "/sys", nvml);
}

TEST(GpuPresenceTest, PciListsTheNvidiaGpusWhateverTheirDriver) {
  testing::TempDir root;
  AddGpus(root, 2);
  AddFakePciDevice(root, {"0000:05:00.0", "0x10de", "0x030000", 8, 16, ""});  // VGA, no driver
  const std::vector<PciGpuInfo> gpus = ReadPciGpus(root.path() + "/sys");
  ASSERT_EQ(gpus.size(), 3u);
  EXPECT_EQ(gpus[0].bus_id, "0000:05:00.0");
  EXPECT_EQ(gpus[0].driver, "");
  EXPECT_EQ(gpus[0].link_width, 8);
  EXPECT_EQ(gpus[0].link_width_max, 16);
  EXPECT_EQ(gpus[1].bus_id, "0000:10:00.0");
  EXPECT_EQ(gpus[1].driver, "nvidia");
  EXPECT_EQ(gpus[1].link_speed_gts, 32);
  EXPECT_TRUE(ReadPciGpus(root.File("absent")).empty());
}

TEST(GpuPresenceTest, EveryGpuReachedIsAHealthyRecord) {
  unsetenv("FAKE_NVML_LOST");
  unsetenv("FAKE_NVML_COUNT");
  testing::TempDir root;
  AddGpus(root, 2);
  const std::optional<BenchmarkRecord> r = GpuPresenceRecord(Look(root), Look(root), 0.5);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->name, "gpu-presence");
  EXPECT_EQ(r->status, BenchStatus::kOk) << r->error;
  const std::map<std::string, double> expected = {{"gpu-presence/missing:0", 0},
                                                  {"gpu-presence/missing:1", 0},
                                                  {"gpu-presence/pcie_lanes_missing:0", 0},
                                                  {"gpu-presence/pcie_lanes_missing:1", 0}};
  EXPECT_EQ(ByKey(*r), expected);
}

// No NVIDIA GPU on PCI: nothing to judge, no record (a CPU node, or sysfs not mounted).
TEST(GpuPresenceTest, NoGpuOnPciNoRecord) {
  testing::TempDir root;
  AddFakePciDevice(root, {"0000:c1:00.0", "0x15b3", "0x020700"});
  EXPECT_FALSE(GpuPresenceRecord(Look(root), Look(root), 0));
}

// The driver does not load (or NVML fails): every GPU on PCI is missing, named by its bus id,
// with the driver's message.
TEST(GpuPresenceTest, WithoutADriverEveryGpuIsMissing) {
  testing::TempDir root;
  AddGpus(root, 2);
  const GpuPresenceReading look = Look(root, "libno-such-nvml.so.1");
  const std::optional<BenchmarkRecord> r = GpuPresenceRecord(look, look, 0);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, BenchStatus::kFailed);
  EXPECT_EQ(ByKey(*r).at("gpu-presence/missing:0"), 1);
  EXPECT_EQ(ByKey(*r).at("gpu-presence/missing:1"), 1);
  EXPECT_NE(r->error.find("GPU 0 (0000:10:00.0) missing: no NVIDIA driver: cannot load "
                          "libno-such-nvml.so.1"),
            std::string::npos)
      << r->error;
  EXPECT_NE(r->error.find("GPU 1 (0000:20:00.0) missing"), std::string::npos) << r->error;
}

// Eight GPUs on PCI, seven in NVML: the eighth is named.
TEST(GpuPresenceTest, AGpuTheDriverDoesNotSeeIsMissing) {
  unsetenv("FAKE_NVML_LOST");
  setenv("FAKE_NVML_COUNT", "7", 1);
  testing::TempDir root;
  AddGpus(root, 8);
  const GpuPresenceReading look = Look(root);
  unsetenv("FAKE_NVML_COUNT");
  const std::optional<BenchmarkRecord> r = GpuPresenceRecord(look, look, 0);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, BenchStatus::kFailed);
  const auto m = ByKey(*r);
  for (int i = 0; i < 7; ++i) EXPECT_EQ(m.at(fmt::format("gpu-presence/missing:{}", i)), 0) << i;
  EXPECT_EQ(m.at("gpu-presence/missing:7"), 1);
  EXPECT_EQ(r->error, "GPU 7 (0000:80:00.0) missing: the driver sees 7 GPU(s), not this one");
}

// A GPU lost during the run: reached before, not after (NVML cannot give its PCI information),
// or gone from PCI altogether.
TEST(GpuPresenceTest, AGpuLostDuringTheRunIsMissing) {
  unsetenv("FAKE_NVML_COUNT");
  unsetenv("FAKE_NVML_LOST");
  testing::TempDir root;
  AddGpus(root, 2);
  const GpuPresenceReading before = Look(root);
  setenv("FAKE_NVML_LOST", "1", 1);
  const GpuPresenceReading after = Look(root);
  unsetenv("FAKE_NVML_LOST");
  std::optional<BenchmarkRecord> r = GpuPresenceRecord(before, after, 0);
  ASSERT_TRUE(r);
  EXPECT_EQ(ByKey(*r).at("gpu-presence/missing:0"), 0);
  EXPECT_EQ(ByKey(*r).at("gpu-presence/missing:1"), 1);
  EXPECT_NE(r->error.find("GPU 1 (0000:20:00.0) missing: lost during the run: the driver does "
                          "not see it (nvmlDeviceGetPciInfo(GPU 1): GPU is lost)"),
            std::string::npos)
      << r->error;

  GpuPresenceReading gone = before;
  gone.pci.pop_back();
  r = GpuPresenceRecord(before, gone, 0);
  EXPECT_EQ(ByKey(*r).at("gpu-presence/missing:1"), 1);
  EXPECT_NE(r->error.find("GPU 1 (0000:20:00.0) missing: left PCI during the run"),
            std::string::npos)
      << r->error;
}

// A link trained at x8 of x16 at both looks is short of 8 lanes; one that reaches x16 at either
// look is not (the better look counts).
TEST(GpuPresenceTest, ALinkShortOfLanesIsNamed) {
  unsetenv("FAKE_NVML_COUNT");
  unsetenv("FAKE_NVML_LOST");
  testing::TempDir narrow, wide;
  AddFakePciDevice(narrow, {FakeBusId(0)});
  AddFakePciDevice(narrow, {FakeBusId(1), "0x10de", "0x030200", 8, 16});
  AddFakePciDevice(wide, {FakeBusId(0)});
  AddFakePciDevice(wide, {FakeBusId(1)});
  std::optional<BenchmarkRecord> r = GpuPresenceRecord(Look(narrow), Look(narrow), 0);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, BenchStatus::kFailed);
  EXPECT_EQ(ByKey(*r).at("gpu-presence/pcie_lanes_missing:1"), 8);
  EXPECT_EQ(ByKey(*r).at("gpu-presence/missing:1"), 0);
  EXPECT_EQ(r->error, "GPU 1 (0000:20:00.0) PCIe link x8 of x16");
  r = GpuPresenceRecord(Look(narrow), Look(wide), 0);
  EXPECT_EQ(ByKey(*r).at("gpu-presence/pcie_lanes_missing:1"), 0);
  EXPECT_EQ(r->status, BenchStatus::kOk);
}

TEST(GpuPresenceTest, NvmlGivesBusIdsAsSysfsWritesThem) {
  unsetenv("FAKE_NVML_COUNT");
  unsetenv("FAKE_NVML_LOST");
  const nvml::DriverGpus d = nvml::ReadDriverGpus(VIGIL_FAKE_NVML);
  ASSERT_TRUE(d.status.ok()) << d.status.ToString();
  EXPECT_EQ(d.bus_ids, (std::vector<std::string>{"0000:10:00.0", "0000:20:00.0"}));
  EXPECT_TRUE(d.errors.empty());
}

}  // namespace
}  // namespace vigil
