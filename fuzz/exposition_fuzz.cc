// Prometheus text exposition and query_range answers come from other systems: the readers never
// crash, read in pieces the exposition gives what it gives whole, and whatever they accept goes
// through the normaliser and the detector without harm.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "pieces.h"
#include "vigil/detect/detector.h"
#include "vigil/telemetry/readers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  vigil::telemetry::Normalizer names(vigil::telemetry::SignalMap::Default(), true);
  vigil::detect::Detector detector({}, names);
  vigil::telemetry::Point p;
  const vigil::telemetry::SampleSink sink = [&](const vigil::telemetry::RawSample& s) {
    if (s.machine.empty()) std::abort();
    if (names.Normalize(s, &p)) detector.Feed(p);
  };
  for (const bool lenient : {false, true}) {
    vigil::telemetry::ReadOptions o;
    o.source = "fuzz";
    o.lenient = lenient;
    o.default_time = 1000;
    const vigil::Status s = vigil::telemetry::ParseExposition(text, o, sink);
    if (!s.ok() && s.message().empty()) std::abort();
    vigil::fuzz::CheckPieces(text, vigil::telemetry::TelemetryFormat::kExposition, o);
  }
  vigil::telemetry::ReadOptions o;
  o.source = "fuzz";
  const vigil::Status s = vigil::telemetry::ParseQueryRange(text, o, sink);
  if (!s.ok() && s.message().empty()) std::abort();
  detector.Flush();
  for (const auto& a : detector.TakeAlerts()) {
    if (a.machine.empty() || a.detected < a.onset - 1e9) std::abort();
  }
  return 0;
}
