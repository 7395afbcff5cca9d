// For the reader fuzz targets: a text read by a TelemetryReader in pieces of whole lines gives
// what it gives read whole, the same samples and the same status (a line number carried across
// pieces, a CSV header kept).
#pragma once

#include <cstdlib>
#include <string>
#include <string_view>

#include "vigil/telemetry/readers.h"

namespace vigil::fuzz {

// Reads `text` whole, then cut after each of up to three of its line ends; aborts on a difference.
inline void CheckPieces(std::string_view text, telemetry::TelemetryFormat format,
                        const telemetry::ReadOptions& options) {
  const auto read = [&](std::string_view head, std::string_view tail) {
    telemetry::TelemetryReader reader(format, options);
    std::string samples;
    const telemetry::SampleSink sink = [&](const telemetry::RawSample& s) {
      samples += std::to_string(s.time) + std::string(s.machine) + "/" + std::string(s.metric) +
                 "/" + std::string(s.component) + "=" + std::to_string(s.value) + "\n";
    };
    Status status = reader.Read(head, sink);
    if (status.ok()) status = reader.Read(tail, sink);
    if (status.ok()) status = reader.Finish();
    return samples + status.ToString();
  };
  const std::string whole = read(text, "");
  size_t cut = 0;
  for (int i = 0; i < 3; ++i) {
    cut = text.find('\n', cut);
    if (cut == std::string_view::npos) break;
    ++cut;
    if (read(text.substr(0, cut), text.substr(cut)) != whole) std::abort();
  }
}

}  // namespace vigil::fuzz
