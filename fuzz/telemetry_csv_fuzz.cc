// Long CSV, JSONL, labels and signal-map YAML are users' files: the readers never crash, read in
// pieces they give what they give whole, and what they accept goes through the normaliser, the
// detector and the scoring without harm.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "pieces.h"
#include "vigil/detect/detector.h"
#include "vigil/detect/evaluate.h"
#include "vigil/telemetry/readers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  vigil::telemetry::SignalMap map = vigil::telemetry::SignalMap::Default();
  const vigil::Status yaml = map.AddYaml(text, "fuzz");
  if (!yaml.ok() && yaml.message().empty()) std::abort();
  vigil::telemetry::Normalizer names(std::move(map), true);
  vigil::detect::Detector detector({}, names);
  vigil::telemetry::Point p;
  const vigil::telemetry::SampleSink sink = [&](const vigil::telemetry::RawSample& s) {
    if (names.Normalize(s, &p)) detector.Feed(p);
  };
  for (const bool lenient : {false, true}) {
    vigil::telemetry::ReadOptions o;
    o.source = "fuzz";
    o.lenient = lenient;
    for (const vigil::Status& s : {vigil::telemetry::ParseLongCsv(text, o, sink),
                                   vigil::telemetry::ParseTelemetryJsonl(text, o, sink)}) {
      if (!s.ok() && s.message().empty()) std::abort();
    }
    vigil::fuzz::CheckPieces(text, vigil::telemetry::TelemetryFormat::kLongCsv, o);
    vigil::fuzz::CheckPieces(text, vigil::telemetry::TelemetryFormat::kJsonl, o);
  }
  detector.Flush();
  const std::vector<vigil::detect::Alert> alerts = detector.TakeAlerts();
  vigil::Result<std::vector<vigil::detect::FaultLabel>> labels =
      vigil::detect::ParseLabels(text, "fuzz");
  if (labels.ok()) {
    const vigil::detect::Score s = vigil::detect::ScoreAlerts(alerts, *labels);
    if (s.detected > s.faults || s.true_alerts > s.alerts) std::abort();
    (void)vigil::detect::ScoreToJson(s);
  }
  return 0;
}
