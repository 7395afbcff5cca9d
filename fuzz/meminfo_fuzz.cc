// /proc/meminfo is read on every node, in containers and kernels Vigil does not choose: reading it
// never crashes, and what it reads is a size in bytes.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "vigil/bench/host/host_health.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  vigil::HostReading r;
  if (!vigil::ParseMeminfo(text, r).ok()) return 0;
  if (!(r.memory_total_bytes >= 0) || !(r.memory_available_bytes >= 0)) std::abort();
  if (std::fmod(r.memory_total_bytes, 1024) != 0) std::abort();
  return 0;
}
