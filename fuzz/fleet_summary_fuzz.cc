// The fleet summary JSONL reader takes files from other tools: it never crashes, and whatever it
// accepts it writes back in a form it reads again to the same rows.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "vigil/results/summary.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  vigil::Result<std::vector<vigil::FleetRow>> rows = vigil::ParseFleetSummary(text, "fuzz");
  if (!rows.ok()) return 0;
  std::string again;
  for (const vigil::FleetRow& r : *rows) again += vigil::FormatFleetRow(r);
  vigil::Result<std::vector<vigil::FleetRow>> back = vigil::ParseFleetSummary(again, "again");
  if (!back.ok() || back->size() != rows->size()) std::abort();
  for (size_t i = 0; i < rows->size(); ++i) {
    const auto& a = (*rows)[i];
    const auto& b = (*back)[i];
    if (a.node != b.node || a.values.size() != b.values.size()) std::abort();
    for (size_t j = 0; j < a.values.size(); ++j) {
      const double x = a.values[j].second, y = b.values[j].second;
      if (a.values[j].first != b.values[j].first) std::abort();
      if (std::isfinite(x) ? x != y : std::isfinite(y)) std::abort();
    }
  }
  return 0;
}
