// The host inventory stored in every results document: what hardware the figures came from.
#pragma once

#include <string>
#include <vector>

#include "vigil/results/document.h"

namespace vigil {

// Reads the inventory from /proc, /sys and /etc below `root` ("" on a real machine; tests pass a
// fake tree). Missing files leave their fields empty or zero: an inventory never fails.
// GPUs come from the NVIDIA driver's /proc/driver/nvidia, indexed in PCI bus order (NVML's order),
// and from PCI (sysfs) whatever the driver does.
Inventory ReadInventory(const std::string& root = "");

// NVIDIA GPUs (vendor 0x10de, class display or 3D controller) under
// `sysfs_root`/bus/pci/devices, in bus id order; empty when sysfs lists none. Never fails: a file
// that cannot be read leaves its field empty.
std::vector<PciGpuInfo> ReadPciGpus(const std::string& sysfs_root);

}  // namespace vigil
