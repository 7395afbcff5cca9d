// What `vigil fleet run --rdma` reads from perftest's ib_write_bw and ib_write_lat: their output,
// whatever version or failure printed it. Reading it never crashes, a bandwidth it accepts is a
// number of 0 or more and a latency a positive number.
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
  const auto us = vigil::cluster::ParseIbWriteLat(text);
  if (us.ok() && !(std::isfinite(*us) && *us > 0)) std::abort();
  if (!us.ok() && us.status().message().empty()) std::abort();
  return 0;
}
