// Incidents arrive from the network (POST /api/v1/incidents): the parser never crashes, accepts
// only what the history format can hold (a valid node name, a non-empty kind, finite time and
// cost >= 0), and every incident it accepts reads back the same from the JSON that lists it.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "vigil/core/json.h"
#include "vigil/server/incidents.h"
#include "vigil/server/upload.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  vigil::Result<std::vector<vigil::server::ParsedIncident>> incidents =
      vigil::server::ParseIncidents(text, "fuzz");
  if (!incidents.ok()) return 0;
  for (const vigil::server::ParsedIncident& p : *incidents) {
    const vigil::store::StoredIncident& i = p.incident;
    if (!vigil::server::CheckNodeName(i.node).ok() || i.kind.empty() || !std::isfinite(i.time) ||
        i.time < 0 || !std::isfinite(i.cost_node_hours) || i.cost_node_hours < 0) {
      std::abort();
    }
    const vigil::Json listed = {{"node", i.node}, {"time", i.time},
                                {"kind", i.kind}, {"cost_node_hours", i.cost_node_hours},
                                {"job", i.job},   {"note", i.note}};
    vigil::Result<std::vector<vigil::server::ParsedIncident>> back =
        vigil::server::ParseIncidents(vigil::DumpJson(listed), "listed");
    if (!back.ok() || back->size() != 1) std::abort();
    const vigil::store::StoredIncident& b = back->front().incident;
    if (b.node != i.node || b.time != i.time || b.kind != i.kind ||
        b.cost_node_hours != i.cost_node_hours || b.job != i.job || b.note != i.note) {
      std::abort();
    }
  }
  return 0;
}
