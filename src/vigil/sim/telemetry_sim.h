// `vigil simulate telemetry`: a job's telemetry with labelled faults, from the command's options
// to a generator (faults placed at random) and to its files (docs/detect.md, "The telemetry
// simulator"). Serving it live is server::ServeTelemetry's part.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vigil/core/bounds.h"
#include "vigil/core/clock.h"
#include "vigil/core/status.h"
#include "vigil/sim/telemetry_gen.h"

namespace vigil::sim {

// Ranges of the options (the command's flags; docs/detect.md, "Ranges of the flags").
inline constexpr Bounds kMachinesBounds{.lo = 1, .hi = 100000};
inline constexpr Bounds kGpusPerMachineBounds{.lo = 1, .hi = 64};
inline constexpr Bounds kJobLengthBounds{.lo = 1, .hi = 30 * 86400.0, .seconds = true};
inline constexpr Bounds kFaultsBounds{.lo = 0, .hi = 100000};
inline constexpr Bounds kOnsetBounds{.lo = 0, .hi = 30 * 86400.0, .seconds = true};
// Simulated telemetry costs about 5 KB and 50 us per machine-second (8 GPUs): at most this many
// machine-seconds (some 50 GB of CSV, or that much generated behind a live exporter).
inline constexpr double kMaxMachineSeconds = 1e7;

struct TelemetrySimOptions {
  int machines = 16;         // machines in the job (kMachinesBounds)
  int gpus = 8;              // GPUs per machine (kGpusPerMachineBounds)
  double duration_s = 1800;  // length of the job (kJobLengthBounds)
  int faults = 1;            // faults, on distinct machines (kFaultsBounds, at most machines)
  std::vector<TelemetryFaultKind> kinds;  // used in turn; empty: every kind
  std::optional<double> fault_from_s;     // earliest onset (kOnsetBounds); unset: a quarter in
  std::optional<double> fault_to_s;       // latest onset (kOnsetBounds); unset: three quarters in
  bool events = true;                     // checkpoints, evaluation pauses, data-loader stalls
  uint64_t seed = 1;                      // the faults and the telemetry are reproducible
  double start = 1.8e9;  // Unix time of the first sample; the last within kUnixTimeBounds
};

// OK when the options make a job: each within its range, machines x duration at most
// kMaxMachineSeconds, faults at most machines, fault-from <= fault-to < duration. Else
// InvalidArgument naming the option as the command names its flag ("--machines: 0 is outside
// [1, 100000]", "--faults cannot exceed --machines").
Status Validate(const TelemetrySimOptions& options);

// The fault kinds named (FaultKindName), in order; InvalidArgument "--kinds: unknown kind "x"".
Result<std::vector<TelemetryFaultKind>> ParseFaultKinds(const std::vector<std::string>& names);

// The job of the options, its faults placed by RandomFaults (seeded by options.seed).
// Validate's error if the options make none.
Result<TelemetryJob> TelemetryJobOf(const TelemetrySimOptions& options);

// `--out`: writes the job's labels CSV to `labels` first ("": none), then every second of its
// telemetry to `out` (WriteTelemetryFile: JSONL for .jsonl or .json, else long CSV). The number
// of samples written. Validate's error; IoError when `out` is not writable (checked before
// anything is written) or a file cannot be written.
Result<int64_t> SimulateTelemetryFile(const TelemetrySimOptions& options, const std::string& out,
                                      const std::string& labels);

// `--serve`: the generator of the job starting now (the whole second of clock.WallSeconds();
// options.start is not used), its labels CSV written to `labels` ("": none). The caller owns the
// generator and serves it (server::ServeTelemetry). Validate's error; IoError for the labels.
Result<std::unique_ptr<TelemetryGenerator>> LiveTelemetry(const TelemetrySimOptions& options,
                                                          const std::string& labels,
                                                          const Clock& clock);

}  // namespace vigil::sim
