// Which of the node's NVIDIA GPUs the driver can reach, judged from the hardware: PCI (sysfs)
// lists the GPUs whatever their driver does, so that a driver that did not load, or a GPU it lost,
// shows as GPUs missing instead of as GPU benchmarks skipped on a node that reads as healthy.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "vigil/bench/cuda/nvml.h"
#include "vigil/bench/inventory.h"
#include "vigil/results/document.h"

namespace vigil {

// One look at the node's GPUs: what PCI shows and what the driver reaches.
struct GpuPresenceReading {
  std::vector<PciGpuInfo> pci;
  nvml::DriverGpus driver;
};
GpuPresenceReading ReadGpuPresence(const std::string& sysfs_root,
                                   const std::string& nvml_path = nvml::kLibrary);

// The "gpu-presence" record of a run from looks before and after its benchmarks; nullopt when
// PCI showed no NVIDIA GPU at either. Per GPU on PCI, indexed by its place in bus id order (the
// driver's and nvidia-smi's numbering while the driver reaches every GPU):
//   gpu-presence/missing:<i>             1 when the driver did not reach the GPU at either look, or
//                                        it left PCI during the run; otherwise 0
//   gpu-presence/pcie_lanes_missing:<i>  lanes short of the link's maximum width at the better
//                                        of the two looks (absent where sysfs does not say)
// The record is failed, its error naming each such GPU's bus id and why, when a GPU is missing or
// short of lanes; a driver's message (NVML's) is kept there too.
std::optional<BenchmarkRecord> GpuPresenceRecord(const GpuPresenceReading& before,
                                                 const GpuPresenceReading& after,
                                                 double duration_s);

}  // namespace vigil
