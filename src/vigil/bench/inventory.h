// The host inventory stored in every results document: what hardware the figures came from.
#pragma once

#include <string>

#include "vigil/results/document.h"

namespace vigil {

// Reads the inventory from /proc, /sys and /etc below `root` ("" on a real machine; tests pass a
// fake tree). Missing files leave their fields empty or zero: an inventory never fails.
// GPUs come from the NVIDIA driver's /proc/driver/nvidia, indexed in PCI bus order (NVML's order),
// and from PCI (sysfs) whatever the driver does.
Inventory ReadInventory(const std::string& root = "");

}  // namespace vigil
