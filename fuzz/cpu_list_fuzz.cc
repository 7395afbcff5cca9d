// CPU lists come from sysfs, which containers and VMs fake in odd ways: never a crash.
#include <cstdint>
#include <string_view>

#include "vigil/bench/cpu/topology.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)vigil::ParseCpuList(text);
  return 0;
}
