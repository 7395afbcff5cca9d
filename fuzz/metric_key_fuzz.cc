// Metric keys come from outside (SuperBench summaries, rule files): parsing never crashes, and a
// key that parses prints a canonical form (no leading zeros in the index) that parses back to it.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "vigil/results/metric_key.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  vigil::Result<vigil::MetricKey> key = vigil::MetricKey::Parse(text);
  if (!key.ok()) return 0;
  vigil::Result<vigil::MetricKey> again = vigil::MetricKey::Parse(key->ToString());
  if (!again.ok() || !(*again == *key)) std::abort();
  return 0;
}
