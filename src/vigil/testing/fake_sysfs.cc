#include "vigil/testing/fake_sysfs.h"

#include <filesystem>

namespace vigil::testing {

void AddFakePciDevice(const TempDir& root, const FakePciDevice& d) {
  const std::string dir = "sys/bus/pci/devices/" + d.bus_id + "/";
  root.Write(dir + "vendor", d.vendor + "\n");
  root.Write(dir + "class", d.pci_class + "\n");
  root.Write(dir + "current_link_width", std::to_string(d.link_width) + "\n");
  root.Write(dir + "max_link_width", std::to_string(d.link_width_max) + "\n");
  root.Write(dir + "current_link_speed", "32.0 GT/s PCIe\n");
  root.Write(dir + "max_link_speed", "32.0 GT/s PCIe\n");
  if (d.driver.empty()) return;
  const std::filesystem::path driver = root.File("sys/bus/pci/drivers/" + d.driver);
  std::filesystem::create_directories(driver);
  std::filesystem::create_symlink(driver, root.File(dir + "driver"));
}

}  // namespace vigil::testing
