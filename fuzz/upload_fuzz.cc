// Uploads arrive from the network (POST /api/v1/results): the parser never crashes, every node it
// accepts has a valid name, and each accepted row written as a summary line reads back the same.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "vigil/core/text.h"
#include "vigil/results/summary.h"
#include "vigil/server/upload.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  vigil::Result<std::vector<vigil::server::ParsedUpload>> up =
      vigil::server::ParseUpload(text, "fuzz");
  if (!up.ok()) return 0;
  for (const vigil::server::ParsedUpload& u : *up) {
    if (!vigil::server::CheckNodeName(u.row.node).ok()) std::abort();
    const std::string line = vigil::FormatFleetRow(u.row);
    vigil::Result<vigil::FleetTable> back = vigil::ParseFleetTable(line, "again", 1);
    if (!back.ok() || back->node_count() != 1 || vigil::FormatFleetRow(back->Row(0)) != line) {
      std::abort();
    }
    if (vigil::HtmlEscape(u.row.node).find('<') != std::string::npos) std::abort();
  }
  return 0;
}
