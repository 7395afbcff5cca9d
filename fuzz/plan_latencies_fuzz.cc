// A latencies CSV (`vigil plan infer --latencies`) is a file a user writes: reading it never
// crashes, an error names the file and a line, and rows that read are within their ranges and
// fit or are refused without crashing.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "vigil/plan/inference_fit.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto rows = vigil::plan::ParseLatencies(text, "lat.csv");
  if (!rows.ok()) {
    if (rows.status().message().rfind("lat.csv:", 0) != 0) std::abort();
    return 0;
  }
  for (const vigil::plan::LatencySample& s : *rows) {
    if (s.prompt_tokens < 1 || s.output_tokens < 1 || !(s.latency_s > 0)) std::abort();
  }
  const auto fit = vigil::plan::FitLatencies(*rows);
  if (fit.ok() && !std::isfinite(fit->per_token_s)) std::abort();
  return 0;
}
