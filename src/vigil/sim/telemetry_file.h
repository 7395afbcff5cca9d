// A simulated job's telemetry written to a file (`vigil simulate telemetry --out`).
#pragma once

#include <cstdint>
#include <string>

#include "vigil/core/status.h"
#include "vigil/sim/telemetry_gen.h"

namespace vigil::sim {

// Writes every second of `gen`'s job to `path` as normalised telemetry (counters as rates,
// exporter names as signal names; docs/formats.md): JSONL when the name ends in .jsonl or .json,
// long CSV otherwise. The file is complete or untouched (AtomicFile). The number of samples
// written; IoError when the file cannot be written. REQUIRES: `gen` has not emitted yet.
Result<int64_t> WriteTelemetryFile(TelemetryGenerator& gen, const std::string& path);

}  // namespace vigil::sim
