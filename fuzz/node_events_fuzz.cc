// The small text readers of the reliability module (node events CSV, lemon truth CSV, durations,
// ISO times) never crash on any input, and what they accept is well formed.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "vigil/core/clock.h"
#include "vigil/core/duration.h"
#include "vigil/reliability/fleet_stats.h"
#include "vigil/reliability/node_events.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const bool lenient : {false, true}) {
    const auto events = vigil::reliability::ParseNodeEvents(text, "fuzz", lenient);
    if (events.ok()) {
      for (const auto& e : events->events) {
        if (e.node.empty() || e.kind.empty()) std::abort();
      }
    }
  }
  (void)vigil::reliability::ParseLemonTruth(text, "fuzz");
  const vigil::Result<double> d = vigil::ParseDuration(text);
  if (d.ok() && !(*d >= 0)) std::abort();
  const auto t = vigil::ParseIsoSeconds(text);
  if (t && vigil::ParseIsoSeconds(vigil::FormatIsoSeconds(*t)) != t) std::abort();
  return 0;
}
