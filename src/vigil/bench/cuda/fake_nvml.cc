// A stand-in for libnvidia-ml.so.1 in tests: H100s with canned counters, two unless
// FAKE_NVML_COUNT says how many (at most 8), GPU i on PCI bus 0x10 * (i + 1) ("0000:10:00.0",
// "0000:20:00.0"...), GPU 1 the sick one (PCIe x8 of x16, two uncorrected ECC errors over its
// life, a page retirement pending, hardware slowdown). With FAKE_NVML_LOST set, GPU 1 has fallen
// off the bus. Temperatures come from nvmlDeviceGetTemperatureV; the deprecated
// nvmlDeviceGetTemperature answers "not supported", as a driver that dropped it would.
#include <cstdlib>
#include <cstring>

namespace {

struct Gpu {
  int index;
};
Gpu gpus[8] = {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}};

constexpr int kSuccess = 0, kInvalidArgument = 2, kNotSupported = 3, kGpuIsLost = 15,
              kVersionMismatch = 25;

unsigned Count() {
  const char* n = std::getenv("FAKE_NVML_COUNT");
  const int count = n != nullptr ? std::atoi(n) : 2;
  return count < 0 ? 0 : count > 8 ? 8 : static_cast<unsigned>(count);
}

bool Lost(const Gpu* g) { return g->index == 1 && std::getenv("FAKE_NVML_LOST") != nullptr; }

struct TemperatureV1 {
  unsigned version;
  int sensor;
  int celsius;
};

struct PciInfo {
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};

}  // namespace

extern "C" {

struct nvmlDevice_st;
using Device = nvmlDevice_st*;
const Gpu* Of(Device d) { return reinterpret_cast<const Gpu*>(d); }

int nvmlInit_v2() { return kSuccess; }
int nvmlShutdown() { return kSuccess; }
const char* nvmlErrorString(int rc) { return rc == kGpuIsLost ? "GPU is lost" : "Unknown Error"; }
int nvmlDeviceGetCount_v2(unsigned* n) {
  *n = Count();
  return kSuccess;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned i, Device* d) {
  if (i >= Count()) return kInvalidArgument;
  *d = reinterpret_cast<Device>(&gpus[i]);
  return kSuccess;
}
int nvmlDeviceGetName(Device, char* name, unsigned size) {
  std::strncpy(name, "NVIDIA H100 80GB HBM3", size);
  return kSuccess;
}
int nvmlDeviceGetTemperature(Device, int, unsigned*) { return kNotSupported; }
int nvmlDeviceGetTemperatureV(Device d, TemperatureV1* t) {
  if (Lost(Of(d))) return kGpuIsLost;
  if (t->version != (sizeof(TemperatureV1) | (1u << 24))) return kVersionMismatch;
  t->celsius = 41 + 2 * Of(d)->index;
  return kSuccess;
}
int nvmlDeviceGetPciInfo_v3(Device d, PciInfo* info) {
  if (Lost(Of(d))) return kGpuIsLost;
  std::memset(info, 0, sizeof *info);
  info->bus = 0x10 * static_cast<unsigned>(Of(d)->index + 1);
  return kSuccess;
}
int nvmlDeviceGetPowerUsage(Device, unsigned* mw) {
  *mw = 351200;
  return kSuccess;
}
int nvmlDeviceGetCurrPcieLinkGeneration(Device, unsigned* v) {
  *v = 5;
  return kSuccess;
}
int nvmlDeviceGetMaxPcieLinkGeneration(Device, unsigned* v) {
  *v = 5;
  return kSuccess;
}
int nvmlDeviceGetCurrPcieLinkWidth(Device d, unsigned* v) {
  *v = Of(d)->index == 1 ? 8 : 16;
  return kSuccess;
}
int nvmlDeviceGetMaxPcieLinkWidth(Device, unsigned* v) {
  *v = 16;
  return kSuccess;
}
int nvmlDeviceGetTotalEccErrors(Device d, int type, int counter, unsigned long long* v) {
  *v = Of(d)->index == 1 && type == 1 && counter == 1 ? 2 : 0;
  return kSuccess;
}
int nvmlDeviceGetRemappedRows(Device d, unsigned* corrected, unsigned* uncorrected,
                              unsigned* pending, unsigned* failure) {
  if (Of(d)->index == 1) return kNotSupported;
  *corrected = *uncorrected = *pending = *failure = 0;
  return kSuccess;
}
int nvmlDeviceGetRetiredPagesPendingStatus(Device, int* pending) {
  *pending = 1;
  return kSuccess;
}
int nvmlDeviceGetCurrentClocksThrottleReasons(Device d, unsigned long long* reasons) {
  *reasons = Of(d)->index == 1 ? 0x8 | 0x1 : 0x1;
  return kSuccess;
}

}  // extern "C"
