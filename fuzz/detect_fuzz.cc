// The detector's state over a whole job (warm-up, placements, job-wide moves and stalls,
// restarts, silences, de-duplication) is what a text fuzzer does not reach: a few kilobytes of
// CSV are a few samples, all inside the warm-up. So the bytes here choose a job: the options,
// within the bounds the CLI accepts, the machines and their GPUs, each machine's scrape interval
// and phase, the order of a scrape's rows and the host's offset within the second, and events
// over time (a machine's or the whole job's level moved, stalled to 0, silent, its GPUs alone
// silent, held, wild; a counter reset, an XID, a PCIe link narrowed, a NIC down). A small
// generator turns that into samples, fed through the normaliser to the detector as `vigil
// detect` does. It never crashes; a machine is named missing only where it fell silent, a GPU
// only where GPUs fell silent, and a rule alerts only where its event happened.
#include <fuzzer/FuzzedDataProvider.h>

#include <array>
#include <bitset>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "vigil/detect/detector.h"
#include "vigil/detect/options.h"
#include "vigil/telemetry/series.h"
#include "vigil/telemetry/signals.h"

namespace {

using vigil::telemetry::RawSample;

enum class Event : uint8_t {
  kLevel,
  kStall,
  kSilent,
  kGpusSilent,
  kHeld,
  kWild,
  kReset,
  kXid,
  kWidth,
  kLinkDown
};
constexpr int kEventKinds = 10;

struct Happening {
  int machine;  // -1: every machine
  double start, end;
  Event kind;
  double factor;
};

enum class Role : uint8_t { kLoad, kCounter, kXid, kWidth, kWidthMax, kUp };

struct Series {
  const char* metric;
  const char* component;  // for the host's series: "ib0", or none
  double level;
  Role role;
};

constexpr std::array<Series, 5> kGpuSeries = {{
    {"DCGM_FI_DEV_POWER_USAGE", "", 400, Role::kLoad},
    {"DCGM_FI_DEV_GPU_UTIL", "", 95, Role::kLoad},
    {"DCGM_FI_DEV_XID_ERRORS", "", 0, Role::kXid},
    {"DCGM_FI_DEV_PCIE_LINK_WIDTH", "", 16, Role::kWidth},
    {"DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH", "", 16, Role::kWidthMax},
}};
constexpr std::array<Series, 3> kHostSeries = {{
    {"training_step_seconds", "", 1.2, Role::kLoad},
    {"node_network_receive_bytes_total", "ib0", 2e9, Role::kCounter},
    {"node_network_up", "ib0", 1, Role::kUp},
}};

// The GPUs a machine may have, and the series a machine reports at most: where each keeps the
// value a held event repeats.
constexpr int kMaxGpus = 4;
constexpr size_t kSlots = kGpuSeries.size() * kMaxGpus + kHostSeries.size();

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  vigil::detect::DetectorOptions o;
  o.peer.warmup_s = in.ConsumeIntegralInRange(0, 300);
  o.peer.persistence_s = in.ConsumeIntegralInRange(1, 120);
  o.peer.z_min = in.ConsumeFloatingPointInRange(0.5, 10.0);
  o.peer.effect_min = in.ConsumeFloatingPointInRange(0.001, 1.0);
  o.peer.strong_effect = in.ConsumeFloatingPointInRange(0.0, 2.0);
  o.peer.stall_s = in.ConsumeIntegralInRange(30, 300);
  o.missing_grace = in.ConsumeIntegralInRange(0, 120);
  o.rearm = in.ConsumeIntegralInRange(0, 900);
  if (!vigil::detect::ValidateDetectorOptions(o).ok()) return 0;
  const int machines = in.ConsumeIntegralInRange(2, 12);
  const int gpus = in.ConsumeIntegralInRange(1, kMaxGpus);
  const int duration = in.ConsumeIntegralInRange(60, 900);
  constexpr std::array<int, 7> kIntervals = {1, 2, 5, 10, 15, 30, 60};
  std::vector<int> interval(machines), phase(machines);
  const bool same_cadence = in.ConsumeBool();
  for (int m = 0; m < machines; ++m) {
    interval[m] = same_cadence && m > 0 ? interval[0] : in.PickValueInArray(kIntervals);
    phase[m] = in.ConsumeIntegralInRange(0, interval[m] - 1);
  }
  const auto rotate = static_cast<size_t>(in.ConsumeIntegralInRange(0, 4));  // of a GPU's rows
  const double host_offset = in.ConsumeIntegralInRange(0, 9) / 10.0;         // in the second
  // A noise of up to 20%, uniform: the input chooses its seed, not every sample.
  std::mt19937_64 rng(in.ConsumeIntegral<uint64_t>());
  const double spread = in.ConsumeFloatingPointInRange(0.0, 0.2);
  std::uniform_real_distribution<double> noise(-spread, spread);
  std::vector<Happening> happenings;
  while (happenings.size() < 16 && in.remaining_bytes() > 0) {
    Happening h;
    h.machine = in.ConsumeIntegralInRange(-1, machines - 1);
    h.start = in.ConsumeIntegralInRange(0, duration);
    h.end = h.start + in.ConsumeIntegralInRange(1, duration);
    h.kind = static_cast<Event>(in.ConsumeIntegralInRange(0, kEventKinds - 1));
    h.factor = in.ConsumeFloatingPointInRange(-2.0, 10.0);
    happenings.push_back(h);
  }

  vigil::telemetry::Normalizer names(vigil::telemetry::SignalMap::Default(), true);
  vigil::detect::Detector detector(o, names);
  vigil::telemetry::Point p;
  std::vector<std::string> machine_names, gpu_names;
  for (int m = 0; m < machines; ++m) machine_names.push_back("m" + std::to_string(m));
  for (int g = 0; g < gpus; ++g) gpu_names.push_back("gpu" + std::to_string(g));
  std::vector<double> totals(static_cast<size_t>(machines), 0);
  std::vector<double> held(static_cast<size_t>(machines) * kSlots, 0);
  constexpr double kStart = 1.8e9;
  for (int t = 0; t < duration; ++t) {
    for (int m = 0; m < machines; ++m) {
      if (t % interval[m] != phase[m]) continue;
      // What happens to this machine now: levels multiply, the other kinds are on or off.
      double factor = 1;
      std::bitset<kEventKinds> on;
      for (const Happening& h : happenings) {
        if ((h.machine != -1 && h.machine != m) || t < h.start || t >= h.end) continue;
        on.set(static_cast<size_t>(h.kind));
        if (h.kind == Event::kLevel) factor *= h.factor;
      }
      const auto now = [&](Event e) { return on.test(static_cast<size_t>(e)); };
      if (now(Event::kSilent)) continue;
      const auto feed = [&](const Series& s, const std::string& component, size_t slot,
                            double offset) {
        double v = s.level;
        if (s.role == Role::kLoad || s.role == Role::kCounter) {
          v *= (now(Event::kStall) ? 0 : factor) * (1 + noise(rng));
          if (now(Event::kWild)) v *= 1e6;
        }
        if (now(Event::kXid) && s.role == Role::kXid) v = 79;
        if (now(Event::kWidth) && s.role == Role::kWidth) v = 8;
        if (now(Event::kLinkDown) && s.role == Role::kUp) v = 0;
        if (s.role == Role::kCounter) {
          double& total = totals[static_cast<size_t>(m)];
          total = now(Event::kReset) ? 0 : total + v * interval[m];
          v = total;
        }
        double& last = held[static_cast<size_t>(m) * kSlots + slot];
        if (now(Event::kHeld)) v = last;
        last = v;
        RawSample sample;
        sample.time = kStart + t + offset;
        sample.machine = machine_names[static_cast<size_t>(m)];
        sample.metric = s.metric;
        sample.component = component;
        sample.value = v;
        if (names.Normalize(sample, &p)) detector.Feed(p);
      };
      size_t slot = 0;
      for (int g = 0; g < gpus && !now(Event::kGpusSilent); ++g) {
        for (size_t i = 0; i < kGpuSeries.size(); ++i) {
          const Series& s = kGpuSeries[(i + rotate) % kGpuSeries.size()];
          feed(s, gpu_names[static_cast<size_t>(g)], slot++, 0);
        }
      }
      slot = kGpuSeries.size() * kMaxGpus;
      for (const Series& s : kHostSeries) feed(s, s.component, slot++, host_offset);
    }
  }
  detector.Flush();
  // Whether an event of `kind` on machine `name` (or on every machine) began by `time`.
  const auto happened = [&](const std::string& name, Event kind, double time) {
    for (const Happening& h : happenings) {
      if (h.kind != kind || kStart + h.start > time) continue;
      if (h.machine == -1 || machine_names[static_cast<size_t>(h.machine)] == name) return true;
    }
    return false;
  };
  for (const vigil::detect::Alert& a : detector.TakeAlerts()) {
    using vigil::detect::AlertKind;
    bool explained = true;
    if (a.kind == AlertKind::kMissing) {
      explained = happened(a.machine, a.rule == "machine" ? Event::kSilent : Event::kGpusSilent,
                           a.detected);
    } else if (a.kind == AlertKind::kRule) {
      if (a.rule.starts_with("xid")) explained = happened(a.machine, Event::kXid, a.detected);
      if (a.rule == "pcie_width") explained = happened(a.machine, Event::kWidth, a.detected);
      if (a.rule == "link_down") explained = happened(a.machine, Event::kLinkDown, a.detected);
    }
    if (!explained) std::abort();
  }
  return 0;
}
