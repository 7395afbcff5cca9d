// What `vigil fleet run --rdma` reads from perftest's ib_write_bw: its output, whatever version
// or failure printed it. Reading it never crashes, and a figure it accepts is a bandwidth.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "vigil/cluster/rdma.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto gbps = vigil::cluster::ParseIbWriteBw(text);
  if (gbps.ok() && !(std::isfinite(*gbps) && *gbps >= 0)) std::abort();
  if (!gbps.ok() && gbps.status().message().empty()) std::abort();
  return 0;
}
