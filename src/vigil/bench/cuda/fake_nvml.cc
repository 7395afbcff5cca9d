// A stand-in for libnvidia-ml.so.1 in tests: two H100s with canned counters, GPU 1 the sick one
// (PCIe x8 of x16, two uncorrected ECC errors over its life, a page retirement pending, hardware
// slowdown). With FAKE_NVML_LOST set, GPU 1 has fallen off the bus.
#include <cstdlib>
#include <cstring>

namespace {

struct Gpu {
  int index;
};
Gpu gpus[2] = {{0}, {1}};

constexpr int kSuccess = 0, kInvalidArgument = 2, kNotSupported = 3, kGpuIsLost = 15;

bool Lost(const Gpu* g) { return g->index == 1 && std::getenv("FAKE_NVML_LOST") != nullptr; }

}  // namespace

extern "C" {

struct nvmlDevice_st;
using Device = nvmlDevice_st*;
const Gpu* Of(Device d) { return reinterpret_cast<const Gpu*>(d); }

int nvmlInit_v2() { return kSuccess; }
int nvmlShutdown() { return kSuccess; }
const char* nvmlErrorString(int rc) { return rc == kGpuIsLost ? "GPU is lost" : "Unknown Error"; }
int nvmlDeviceGetCount_v2(unsigned* n) {
  *n = 2;
  return kSuccess;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned i, Device* d) {
  if (i >= 2) return kInvalidArgument;
  *d = reinterpret_cast<Device>(&gpus[i]);
  return kSuccess;
}
int nvmlDeviceGetName(Device, char* name, unsigned size) {
  std::strncpy(name, "NVIDIA H100 80GB HBM3", size);
  return kSuccess;
}
int nvmlDeviceGetTemperature(Device d, int, unsigned* t) {
  if (Lost(Of(d))) return kGpuIsLost;
  *t = 41 + 2 * static_cast<unsigned>(Of(d)->index);
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
