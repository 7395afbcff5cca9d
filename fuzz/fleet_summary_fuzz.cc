// The fleet summary JSONL reader takes files from other tools: it never crashes, and whatever it
// accepts it writes back in a form it reads again to the same table.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "vigil/results/summary.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  vigil::Result<vigil::FleetTable> table = vigil::ParseFleetTable(text, "fuzz", 1);
  if (!table.ok()) return 0;
  std::string again;
  for (size_t i = 0; i < table->node_count(); ++i) again += vigil::FormatFleetRow(table->Row(i));
  vigil::Result<vigil::FleetTable> back = vigil::ParseFleetTable(again, "again", 2);
  if (!back.ok() || back->node_count() != table->node_count()) std::abort();
  for (size_t i = 0; i < table->node_count(); ++i) {
    if (table->node(i) != back->node(i) || table->hardware(i) != back->hardware(i)) std::abort();
    for (size_t j = 0; j < table->metric_count(); ++j) {
      const double x = table->at(i, j);
      const long k = back->column(table->metrics()[j]);
      const double y = k < 0 ? std::nan("") : back->at(i, static_cast<size_t>(k));
      if (std::isfinite(x) ? x != y : std::isfinite(y)) std::abort();
    }
  }
  return 0;
}
