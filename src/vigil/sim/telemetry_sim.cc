#include "vigil/sim/telemetry_sim.h"

#include <fmt/format.h>

#include <cmath>

#include "vigil/core/file.h"
#include "vigil/core/text.h"
#include "vigil/sim/telemetry_file.h"

namespace vigil::sim {
namespace {

// Onsets fall in [from, to]; by default the middle half of the job.
double FaultFrom(const TelemetrySimOptions& o) { return o.fault_from_s.value_or(o.duration_s / 4); }
double FaultTo(const TelemetrySimOptions& o) { return o.fault_to_s.value_or(o.duration_s * 3 / 4); }

// The generator of a job of valid options, its labels written to `labels` ("": none).
Result<std::unique_ptr<TelemetryGenerator>> Generator(const TelemetrySimOptions& o,
                                                      const std::string& labels) {
  VIGIL_ASSIGN_OR_RETURN(const TelemetryJob job, TelemetryJobOf(o));
  auto gen = std::make_unique<TelemetryGenerator>(job);
  if (!labels.empty()) VIGIL_RETURN_IF_ERROR(WriteFileAtomic(labels, gen->LabelsCsv()));
  return gen;
}

}  // namespace

Status Validate(const TelemetrySimOptions& o) {
  VIGIL_RETURN_IF_ERROR(CheckBounds("--machines", o.machines, kMachinesBounds));
  VIGIL_RETURN_IF_ERROR(CheckBounds("--gpus", o.gpus, kGpusPerMachineBounds));
  VIGIL_RETURN_IF_ERROR(CheckBounds("--duration", o.duration_s, kJobLengthBounds));
  if (const double work = o.machines * o.duration_s; work > kMaxMachineSeconds) {
    return Status::InvalidArgument(fmt::format(
        "--machines x --duration is {:.3g} machine-seconds, more than the {:.0e} one simulation "
        "may generate",
        work, kMaxMachineSeconds));
  }
  VIGIL_RETURN_IF_ERROR(CheckBounds("--start", o.start, kUnixTimeBounds));
  // The last sample must be readable again (detect refuses times past kUnixTimeBounds).
  const double end = o.start + o.duration_s;
  VIGIL_RETURN_IF_ERROR(
      CheckBounds("--start + --duration", end, kUnixTimeBounds, fmt::format("{}", end)));
  VIGIL_RETURN_IF_ERROR(CheckBounds("--faults", o.faults, kFaultsBounds));
  if (o.faults > o.machines) return Status::InvalidArgument("--faults cannot exceed --machines");
  if (o.fault_from_s) {
    VIGIL_RETURN_IF_ERROR(CheckBounds("--fault-from", *o.fault_from_s, kOnsetBounds));
  }
  if (o.fault_to_s) VIGIL_RETURN_IF_ERROR(CheckBounds("--fault-to", *o.fault_to_s, kOnsetBounds));
  if (FaultFrom(o) > FaultTo(o) || FaultTo(o) >= o.duration_s) {
    return Status::InvalidArgument(
        "fault onsets must satisfy --fault-from <= --fault-to < --duration");
  }
  return Status::Ok();
}

Result<std::vector<TelemetryFaultKind>> ParseFaultKinds(const std::vector<std::string>& names) {
  std::vector<TelemetryFaultKind> kinds;
  for (const std::string& name : names) {
    const std::optional<TelemetryFaultKind> kind = ParseFaultKind(name);
    if (!kind) return Status::InvalidArgument(fmt::format("--kinds: unknown kind {}", Quote(name)));
    kinds.push_back(*kind);
  }
  return kinds;
}

Result<TelemetryJob> TelemetryJobOf(const TelemetrySimOptions& o) {
  VIGIL_RETURN_IF_ERROR(Validate(o));
  TelemetryJob job;
  job.machines = o.machines;
  job.gpus = o.gpus;
  job.duration_s = o.duration_s;
  job.events = o.events;
  job.seed = o.seed;
  job.start = o.start;
  std::vector<TelemetryFaultKind> kinds = o.kinds;
  if (kinds.empty()) {
    for (int k = 0; k < kTelemetryFaultKinds; ++k) {
      kinds.push_back(static_cast<TelemetryFaultKind>(k));
    }
  }
  job.faults =
      RandomFaults(o.faults, kinds, job.machines, job.gpus, FaultFrom(o), FaultTo(o), o.seed);
  return job;
}

Result<int64_t> SimulateTelemetryFile(const TelemetrySimOptions& o, const std::string& out,
                                      const std::string& labels) {
  VIGIL_RETURN_IF_ERROR(Validate(o));
  VIGIL_RETURN_IF_ERROR(CheckWritable(out));
  VIGIL_ASSIGN_OR_RETURN(const std::unique_ptr<TelemetryGenerator> gen, Generator(o, labels));
  return WriteTelemetryFile(*gen, out);
}

Result<std::unique_ptr<TelemetryGenerator>> LiveTelemetry(const TelemetrySimOptions& options,
                                                          const std::string& labels,
                                                          const Clock& clock) {
  TelemetrySimOptions o = options;
  o.start = std::floor(clock.WallSeconds());
  return Generator(o, labels);
}

}  // namespace vigil::sim
