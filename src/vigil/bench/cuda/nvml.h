// NVML, the NVIDIA driver's management library, loaded at run time with dlopen: building Vigil
// needs no driver, and a node without one simply has no GPU to measure. Only the few functions
// Vigil uses are declared (nvml.cc), with the types of NVML's stable C ABI.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vigil/core/status.h"

namespace vigil::nvml {

inline constexpr const char* kLibrary = "libnvidia-ml.so.1";

// Clock throttle reasons (nvmlClocksThrottleReasons, the bits of one reading).
namespace throttle {
inline constexpr uint64_t kSwPowerCap = 0x4;
inline constexpr uint64_t kHwSlowdown = 0x8;
inline constexpr uint64_t kSwThermal = 0x20;
inline constexpr uint64_t kHwThermal = 0x40;
inline constexpr uint64_t kHwPowerBrake = 0x80;
// The reasons that mean trouble under load: hardware slowdowns and thermal limits. (A power cap
// under a full load, or an idle GPU's low clocks, are not faults.)
inline constexpr uint64_t kTrouble = kHwSlowdown | kHwThermal | kHwPowerBrake | kSwThermal;
}  // namespace throttle

// One reading of a GPU's health counters. A field NVML does not support on this GPU (or whose
// function this driver lacks) stays empty.
struct HealthReading {
  std::string name;  // "NVIDIA H100 80GB HBM3"
  std::optional<double> temperature_c;
  std::optional<double> power_w;
  std::optional<double> pcie_gen, pcie_gen_max;      // link generation, current and maximum
  std::optional<double> pcie_width, pcie_width_max;  // lanes, current and maximum
  // ECC error counts: volatile (since the driver loaded) and aggregate (over the GPU's life).
  std::optional<double> ecc_corrected_volatile, ecc_uncorrected_volatile;
  std::optional<double> ecc_corrected_aggregate, ecc_uncorrected_aggregate;
  // Row remapping (A100 and later): rows remapped for corrected and uncorrected errors, and
  // whether a remap waits for a GPU reset or has failed.
  std::optional<double> remapped_rows_corrected, remapped_rows_uncorrected;
  std::optional<double> row_remap_pending, row_remap_failure;
  std::optional<double> retired_pages_pending;  // page retirement (before A100): 1 when pending
  std::optional<uint64_t> throttle_reasons;     // bits of `throttle`
};

class Library {
 public:
  // Loads `path` and initialises NVML. Unavailable naming the library and the loader's message
  // when it cannot be loaded (no NVIDIA driver) or lacks NVML's entry points; Unavailable with
  // NVML's message when nvmlInit fails (a driver without a working GPU).
  static Result<std::unique_ptr<Library>> Load(const std::string& path = kLibrary);
  ~Library();
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  Result<int> DeviceCount() const;

  // Reads GPU `index`'s counters. A field this GPU or driver does not have (not supported, no
  // permission, a function or struct version this driver lacks, no such sensor) stays empty; any
  // other NVML error (a GPU that fell off the bus, say) is an error naming the function, the GPU
  // and NVML's message.
  Result<HealthReading> Read(int index) const;

  // GPU `index`'s PCI bus id as sysfs writes it ("0000:19:00.0", lower case); an error naming the
  // GPU when NVML cannot give it (a lost GPU).
  Result<std::string> BusId(int index) const;

  struct Api;  // the resolved entry points (nvml.cc)

 private:
  Library(void* handle, std::unique_ptr<Api> api);
  void* handle_;
  std::unique_ptr<Api> api_;
};

// What the driver shows of the node's GPUs: the PCI bus id of every GPU NVML can reach, in NVML's
// order. `status` is Unavailable when NVML cannot be loaded or started (no driver, a failed one);
// a GPU NVML counts but cannot reach (lost) is left out of `bus_ids` with its error in `errors`.
struct DriverGpus {
  Status status;
  std::vector<std::string> bus_ids;
  std::vector<std::string> errors;
};
DriverGpus ReadDriverGpus(const std::string& path = kLibrary);

// The number of GPUs NVML sees; Unavailable with the reason when NVML cannot be loaded or sees
// none. What the GPU benchmarks' Available() asks: it does not touch CUDA, which must not start
// before fork().
Result<int> VisibleGpus(const std::string& path = kLibrary);

// OK when every index in `gpus` names a GPU NVML sees; InvalidArgument naming the first that does
// not, with the node's count (or the reason it has none).
Status CheckGpusExist(const std::vector<int>& gpus, const std::string& path = kLibrary);

// The GPUs that CUDA_VISIBLE_DEVICES=`visible` lists, in Vigil's (nvidia-smi's) numbering: CUDA
// renumbers the GPUs it shows from 0, so that in a benchmark's process "GPU 0" would be the first
// listed while gpu-health's (NVML's) GPU 0 is the node's first. Indices only, which CUDA takes in
// PCI bus order as NVML does; InvalidArgument naming the entry for anything else (a GPU's UUID, a
// MIG device, a repeated or negative index) or for an empty list.
Result<std::vector<int>> GpusOfCudaVisibleDevices(std::string_view visible);

}  // namespace vigil::nvml
