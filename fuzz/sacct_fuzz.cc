// The sacct reader takes scheduler logs from other systems: it never crashes, keeps its node
// references in range, and whatever it accepts the fleet statistics digest without failing.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "vigil/reliability/fleet_stats.h"
#include "vigil/reliability/sacct.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const bool lenient : {false, true}) {
    vigil::Result<vigil::reliability::SacctLog> log =
        vigil::reliability::ParseSacct(text, "fuzz", {.lenient = lenient});
    if (!log.ok()) {
      if (log.status().message().empty()) std::abort();
      continue;
    }
    for (const auto& job : log->jobs) {
      if (job.nodes_begin > job.nodes_end || job.nodes_end > log->node_refs.size()) std::abort();
      for (uint32_t n : log->NodesOf(job)) {
        if (n >= log->node_names.size()) std::abort();
      }
    }
    if (!vigil::reliability::ComputeFleetStats(*log, {}, {}).ok()) std::abort();
  }
  return 0;
}
