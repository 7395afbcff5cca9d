// A generator of one training job's per-second telemetry, as dcgm-exporter and node-exporter
// expose it, with job-wide events, noise, benign spikes and labelled faults
// (docs/detect.md, "The telemetry simulator", states every modelling assumption).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vigil/core/random.h"
#include "vigil/telemetry/readers.h"

namespace vigil::sim {

enum class TelemetryFaultKind {
  kEccUncorrectable,   // XID 48 and a DBE count; the process dies 2 s later
  kGpuExecutionError,  // XID 13; the process dies
  kCardDrop,           // one GPU disappears from the exporter; the process dies
  kHang,               // GPUs spin (utilisation high, power low), the host blocks
  kStraggler,          // one GPU computes 15-45% slower; the whole job waits for it
  kPcieDowngrade,      // one GPU's link trains at x8: half its PCIe throughput, PFC pauses surge
  kNicDown,            // one NIC's link goes down; the others carry its traffic
  kNvlinkError,        // one GPU's NVLink counts CRC errors and loses bandwidth
  kUnreachable,        // the whole machine stops reporting
};
inline constexpr int kTelemetryFaultKinds = 9;
std::string_view FaultKindName(TelemetryFaultKind kind);
std::optional<TelemetryFaultKind> ParseFaultKind(std::string_view name);

struct TelemetryFault {
  int machine = 0;
  double onset_s = 0;  // seconds after the job's start
  TelemetryFaultKind kind = TelemetryFaultKind::kHang;
  int component = 0;      // the GPU (or NIC) it hits
  double severity = 0.3;  // straggler: share slower
};

struct TelemetryJob {
  int machines = 16;
  int gpus = 8;
  int nics = 4;
  int cpus = 4;
  double duration_s = 1800;
  double start = 1.8e9;      // Unix seconds of the first sample
  double iteration_s = 4.3;  // one training step when healthy
  bool events = true;        // checkpoints, evaluation pauses, data-loader stalls
  double spikes_per_machine_hour = 3;
  uint64_t seed = 1;
  std::vector<TelemetryFault> faults;
};

// `count` faults of kinds drawn in turn from `kinds`, on distinct random machines, with onsets
// uniform in [from_s, to_s] after the start. REQUIRES: count <= machines, kinds not empty.
std::vector<TelemetryFault> RandomFaults(int count, const std::vector<TelemetryFaultKind>& kinds,
                                         int machines, int gpus, double from_s, double to_s,
                                         uint64_t seed);

class TelemetryGenerator {
 public:
  explicit TelemetryGenerator(const TelemetryJob& job);
  ~TelemetryGenerator();

  // Every sample of second `t` (0 <= t < duration, called with t increasing by one): exporter
  // values (counters as running totals), timestamped start + t.
  void Emit(int64_t t, const telemetry::SampleSink& sink);

  // The same second as Prometheus text exposition, every machine's series with a Hostname label
  // (as dcgm-exporter writes it) and no timestamps (Prometheus stamps the scrape).
  std::string Exposition(int64_t t);

  // The faults as a labels CSV (machine,onset,kind,end; docs/formats.md).
  std::string LabelsCsv() const;

  const std::string& MachineName(int m) const { return names_[static_cast<size_t>(m)]; }
  const TelemetryJob& job() const { return job_; }
  // Samples Emit produces per second when nothing has failed.
  int64_t SeriesPerSecond() const;

 private:
  struct Series;
  struct Machine;
  struct Event {
    double start, end;
    int type;
  };
  struct Profile;

  // The job as a whole in one second: how much slower its iterations run than when healthy, and
  // when its peers began to wait for a process that died (-1: none has).
  struct JobEffects {
    double slowdown = 1;
    double stall_from = -1;
  };
  // One machine's faults that are active in one second.
  struct MachineFaults {
    const TelemetryFault* crash = nullptr;   // one that killed its training process
    const TelemetryFault* latest = nullptr;  // the last one (the GPU or NIC it hits)
    bool unreachable = false;
    bool hung = false;
  };
  // What one machine's values of one second depend on, beyond its profile.
  struct SecondState {
    bool stalled = false;  // every rank waits in a collective
    bool dead = false;     // past NCCL's watchdog: the processes exited
    MachineFaults faults;
    double activity = 0;  // the share of the second spent computing
  };

  // The healthy job's profile of machine `m` at second `t`, with job-wide events mixed in.
  Profile JobProfile(int m, double t, double activity) const;
  JobEffects JobAt(double now) const;
  static MachineFaults FaultsAt(const Machine& machine, double now);
  // JobProfile with the machine's faults, the job's stall and its benign spikes applied.
  Profile MachineProfile(int m, double now, const SecondState& second) const;
  // The value of series `i` of `machine` at second `t` (counters advanced), or nullopt when it
  // is not exported then. Draws from rng_: call for every series in order.
  std::optional<double> SeriesValue(Machine& machine, size_t i, int64_t t, const Profile& p,
                                    const SecondState& second);
  // Computes values_ for second `t`: the job's state, then each machine's series.
  void Step(int64_t t);

  TelemetryJob job_;
  std::vector<std::string> names_;
  std::vector<Machine> machines_;
  std::vector<Event> events_;
  Rng rng_;
  double phase_ = 0;      // iterations done, for the shared shape of training
  int64_t stepped_ = -1;  // last second Step() computed
  std::vector<std::vector<std::pair<const Series*, double>>> values_;  // per machine, second t
};

}  // namespace vigil::sim
