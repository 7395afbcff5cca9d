// The Selector's history reader (docs/select.md) never crashes on any input; what it accepts
// writes back to a text it reads the same, and a plan made from it never crashes either.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "vigil/select/history.h"
#include "vigil/select/selector.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto history = vigil::select::ParseHistory(text, "fuzz");
  if (!history.ok()) return 0;
  if (history->nodes.empty()) std::abort();
  const std::string written = vigil::select::HistoryToJsonl(*history);
  const auto again = vigil::select::ParseHistory(written, "again");
  if (!again.ok() || vigil::select::HistoryToJsonl(*again) != written) std::abort();
  // Small fleets only: the fit's cost grows with nodes x days, which fuzzing need not pay.
  if (history->nodes.size() <= 8 && history->end_s - history->start_s <= 400 * 86400.0) {
    (void)vigil::select::SelectFromHistory(*history, {});
  }
  return 0;
}
