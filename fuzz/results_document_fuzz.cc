// Results documents arrive from nodes: the reader never crashes, and an accepted document
// converts back to JSON that reads again to the same document.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "vigil/core/json.h"
#include "vigil/results/document.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  vigil::Result<vigil::NodeResults> doc = vigil::ParseNodeResults(text, "fuzz");
  if (!doc.ok()) return 0;
  const vigil::Json again = vigil::ToJson(*doc);
  vigil::Result<vigil::NodeResults> back = vigil::ParseNodeResults(vigil::DumpJson(again), "again");
  if (!back.ok() || vigil::ToJson(*back) != again) std::abort();
  return 0;
}
