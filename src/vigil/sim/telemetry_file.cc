#include "vigil/sim/telemetry_file.h"

#include "vigil/core/file.h"
#include "vigil/telemetry/readers.h"
#include "vigil/telemetry/series.h"

namespace vigil::sim {

Result<int64_t> WriteTelemetryFile(TelemetryGenerator& gen, const std::string& path) {
  constexpr size_t kFlushBytes = 4 << 20;
  const bool jsonl = path.ends_with(".jsonl") || path.ends_with(".json");
  telemetry::Normalizer names(telemetry::SignalMap::Default(), false);
  VIGIL_ASSIGN_OR_RETURN(AtomicFile file, AtomicFile::Create(path));
  std::string buf(jsonl ? "" : telemetry::kLongCsvHeader);
  telemetry::Point p;
  int64_t rows = 0;
  const auto seconds = static_cast<int64_t>(gen.job().duration_s);
  for (int64_t t = 0; t < seconds; ++t) {
    gen.Emit(t, [&](const telemetry::RawSample& r) {
      if (!names.Normalize(r, &p)) return;
      ++rows;
      telemetry::RawSample normalised = r;
      normalised.metric = names.signals()[p.signal].name;
      normalised.value = p.value;
      (jsonl ? telemetry::AppendTelemetryJsonl : telemetry::AppendLongCsv)(normalised, &buf);
    });
    if (buf.size() > kFlushBytes) {
      VIGIL_RETURN_IF_ERROR(file.Append(buf));
      buf.clear();
    }
  }
  VIGIL_RETURN_IF_ERROR(file.Append(buf));
  VIGIL_RETURN_IF_ERROR(file.Commit());
  return rows;
}

}  // namespace vigil::sim
