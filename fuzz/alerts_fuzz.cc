// Alerts arrive from the network (POST /api/v1/alerts): the parser never crashes, and every alert
// it accepts reads back the same from the JSON the server stores for it.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "vigil/detect/detector.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  vigil::Result<std::vector<vigil::detect::Alert>> alerts =
      vigil::detect::ParseAlerts(text, "fuzz");
  if (!alerts.ok()) return 0;
  for (const vigil::detect::Alert& a : *alerts) {
    if (a.machine.empty() || !vigil::detect::ParseAlertKind(AlertKindName(a.kind)).ok()) {
      std::abort();
    }
    const std::string stored = vigil::DumpJson(vigil::detect::AlertToJson(a));
    vigil::Result<std::vector<vigil::detect::Alert>> back =
        vigil::detect::ParseAlerts(stored, "stored");
    if (!back.ok() || back->size() != 1 ||
        vigil::DumpJson(vigil::detect::AlertToJson(back->front())) != stored) {
      std::abort();
    }
  }
  return 0;
}
