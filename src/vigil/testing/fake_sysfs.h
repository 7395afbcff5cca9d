// Test support: a node's PCI devices as sysfs shows them, in a temporary host root.
#pragma once

#include <string>

#include "vigil/testing/temp_dir.h"

namespace vigil::testing {

struct FakePciDevice {
  std::string bus_id;                  // "0000:19:00.0"
  std::string vendor = "0x10de";       // NVIDIA
  std::string pci_class = "0x030200";  // a 3D controller (a data-centre GPU)
  int link_width = 16, link_width_max = 16;
  std::string driver = "nvidia";  // "" for a device no driver is bound to
};

// Writes `device` under `root`/sys/bus/pci/devices/<bus_id>: vendor, class, link width and speed
// (Gen5), and a `driver` link to sys/bus/pci/drivers/<driver>.
void AddFakePciDevice(const TempDir& root, const FakePciDevice& device);

}  // namespace vigil::testing
