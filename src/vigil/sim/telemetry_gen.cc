#include "vigil/sim/telemetry_gen.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace vigil::sim {
namespace {

constexpr std::array<std::string_view, kTelemetryFaultKinds> kKindNames = {
    "ecc_uncorrectable",  "gpu_execution_error", "gpu_card_drop", "hang",
    "straggler",          "pcie_downgrade",      "nic_down",      "nvlink_error",
    "machine_unreachable"};

// What each series measures; the value model is in Step().
enum class Kind {
  kUtil,
  kPower,
  kTensor,
  kGrEngine,
  kNvlink,
  kPcie,
  kXid,
  kEccDbe,
  kNvlinkCrc,
  kPcieWidth,
  kPcieWidthMax,
  kPcieGen,
  kPcieGenMax,  // per GPU
  kCpuIdle,
  kNetRx,
  kNetTx,
  kNetUp,
  kPfc,
  kStep,  // per host
};

constexpr double kComputeShare = 0.8;  // of a healthy iteration, the rest is communication
constexpr double kWatchdog_s = 600;    // NCCL's timeout: a stalled job's processes then exit

// Whether a fault kills the training process (and so stalls every peer in its collectives).
bool Stops(TelemetryFaultKind k) {
  using K = TelemetryFaultKind;
  return k == K::kEccUncorrectable || k == K::kGpuExecutionError || k == K::kCardDrop ||
         k == K::kHang || k == K::kUnreachable;
}

// Time spent computing during [phase0, phase1) iterations, as iterations.
double ComputeIterations(double phase0, double phase1) {
  auto f = [](double p) {
    return std::floor(p) * kComputeShare + std::min(p - std::floor(p), kComputeShare);
  };
  return f(phase1) - f(phase0);
}

double Overlap(double a0, double a1, double b0, double b1) {
  return std::max(0.0, std::min(a1, b1) - std::max(a0, b0));
}

}  // namespace

std::string_view FaultKindName(TelemetryFaultKind kind) {
  return kKindNames[static_cast<size_t>(kind)];
}

std::optional<TelemetryFaultKind> ParseFaultKind(std::string_view name) {
  for (size_t i = 0; i < kKindNames.size(); ++i) {
    if (kKindNames[i] == name) return static_cast<TelemetryFaultKind>(i);
  }
  return std::nullopt;
}

std::vector<TelemetryFault> RandomFaults(int count, const std::vector<TelemetryFaultKind>& kinds,
                                         int machines, int gpus, double from_s, double to_s,
                                         uint64_t seed) {
  Rng rng(seed, 0xFA);
  std::vector<int> order(static_cast<size_t>(machines));
  for (int i = 0; i < machines; ++i) order[static_cast<size_t>(i)] = i;
  std::shuffle(order.begin(), order.end(), rng.engine());
  std::vector<TelemetryFault> out;
  for (int i = 0; i < count && i < machines; ++i) {
    TelemetryFault f;
    f.machine = order[static_cast<size_t>(i)];
    f.kind = kinds[static_cast<size_t>(i) % kinds.size()];
    f.onset_s = std::round(from_s + rng.Uniform() * (to_s - from_s));
    f.component = static_cast<int>(rng.Below(static_cast<uint64_t>(gpus)));
    f.severity = 0.15 + 0.3 * rng.Uniform();
    out.push_back(f);
  }
  return out;
}

struct TelemetryGenerator::Series {
  Kind kind;
  int index;  // GPU, NIC or CPU
  std::string metric;
  std::string component;
  telemetry::Labels labels;
};

// Per GPU and host values of one second, before per-machine noise and fault modifiers.
struct TelemetryGenerator::Profile {
  double util, tensor, gr, power, nvlink, pcie, net, cpu_idle, pfc;

  // wa * a + wb * b, field by field: mixes the phases that share one second.
  static Profile Blend(const Profile& a, double wa, const Profile& b, double wb) {
    return {
        wa * a.util + wb * b.util,   wa * a.tensor + wb * b.tensor,     wa * a.gr + wb * b.gr,
        wa * a.power + wb * b.power, wa * a.nvlink + wb * b.nvlink,     wa * a.pcie + wb * b.pcie,
        wa * a.net + wb * b.net,     wa * a.cpu_idle + wb * b.cpu_idle, wa * a.pfc + wb * b.pfc};
  }
};

struct TelemetryGenerator::Machine {
  std::vector<Series> series;
  std::array<double, 9> offset{};  // static multiplicative offsets per profile field
  std::vector<double> gpu_power_offset;
  std::vector<double> totals;  // running totals of counters, per series
  std::vector<Event> spikes;
  double jitter = 0;  // seconds this machine's phase and events lag the job's
  double step_time = 0;
  std::vector<const TelemetryFault*> faults;
};

TelemetryGenerator::TelemetryGenerator(const TelemetryJob& job) : job_(job), rng_(job.seed, 1) {
  Rng setup(job.seed, 2);
  names_.reserve(static_cast<size_t>(job.machines));
  machines_.resize(static_cast<size_t>(job.machines));
  values_.resize(machines_.size());
  for (int m = 0; m < job.machines; ++m) {
    names_.push_back(fmt::format("node{:04d}", m + 1));
    Machine& mc = machines_[static_cast<size_t>(m)];
    const std::string& host = names_.back();
    auto add = [&](Kind kind, int index, const char* metric, std::string component,
                   telemetry::Labels extra) {
      Series s{kind, index, metric, std::move(component), {{"Hostname", host}}};
      for (auto& l : extra) s.labels.push_back(std::move(l));
      mc.series.push_back(std::move(s));
    };
    for (int g = 0; g < job.gpus; ++g) {
      const std::string c = fmt::format("gpu{}", g);
      const telemetry::Labels l = {{"gpu", std::to_string(g)}};
      add(Kind::kUtil, g, "DCGM_FI_DEV_GPU_UTIL", c, l);
      add(Kind::kPower, g, "DCGM_FI_DEV_POWER_USAGE", c, l);
      add(Kind::kTensor, g, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", c, l);
      add(Kind::kGrEngine, g, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", c, l);
      add(Kind::kNvlink, g, "DCGM_FI_PROF_NVLINK_TX_BYTES", c, l);
      add(Kind::kPcie, g, "DCGM_FI_PROF_PCIE_TX_BYTES", c, l);
      add(Kind::kXid, g, "DCGM_FI_DEV_XID_ERRORS", c, l);
      add(Kind::kEccDbe, g, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", c, l);
      add(Kind::kNvlinkCrc, g, "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", c, l);
      add(Kind::kPcieWidth, g, "DCGM_FI_DEV_PCIE_LINK_WIDTH", c, l);
      add(Kind::kPcieWidthMax, g, "DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH", c, l);
      add(Kind::kPcieGen, g, "DCGM_FI_DEV_PCIE_LINK_GEN", c, l);
      add(Kind::kPcieGenMax, g, "DCGM_FI_DEV_PCIE_MAX_LINK_GEN", c, l);
    }
    for (int c = 0; c < job.cpus; ++c) {
      add(Kind::kCpuIdle, c, "node_cpu_seconds_total", fmt::format("cpu{}", c),
          {{"cpu", std::to_string(c)}, {"mode", "idle"}});
    }
    for (int n = 0; n < job.nics; ++n) {
      const std::string dev = fmt::format("ib{}", n);
      add(Kind::kNetRx, n, "node_network_receive_bytes_total", dev, {{"device", dev}});
      add(Kind::kNetTx, n, "node_network_transmit_bytes_total", dev, {{"device", dev}});
      add(Kind::kNetUp, n, "node_network_up", dev, {{"device", dev}});
      add(Kind::kPfc, n, "node_ethtool_rx_prio3_pause", dev, {{"device", dev}});
    }
    add(Kind::kStep, 0, "training_step_seconds", "", {});
    for (double& o : mc.offset) o = 1 + setup.Normal(0, 0.015);
    mc.gpu_power_offset.resize(static_cast<size_t>(job.gpus));
    for (double& o : mc.gpu_power_offset) o = 1 + setup.Normal(0, 0.02);
    mc.totals.assign(mc.series.size(), 0);
    for (size_t i = 0; i < mc.series.size(); ++i) {
      mc.totals[i] = std::floor(setup.Uniform() * 1e9);  // counters start anywhere
    }
    mc.jitter = setup.Uniform() * 0.3;
    mc.step_time = job.iteration_s * kComputeShare;
    // Benign spikes: a few seconds of one odd signal.
    if (job.spikes_per_machine_hour > 0) {
      for (double t = setup.Exponential(job.spikes_per_machine_hour / 3600); t < job.duration_s;
           t += setup.Exponential(job.spikes_per_machine_hour / 3600)) {
        mc.spikes.push_back(
            {t, t + 1 + std::floor(setup.Uniform() * 5), static_cast<int>(setup.Below(4))});
      }
    }
  }
  for (const TelemetryFault& f : job_.faults) {
    if (f.machine >= 0 && f.machine < job.machines) {
      machines_[static_cast<size_t>(f.machine)].faults.push_back(&f);
    }
  }
  // Job-wide events: 0 checkpoint, 1 evaluation pause, 2 data-loader stall.
  if (job.events) {
    for (double t = 600 + setup.Normal(0, 60); t < job.duration_s;
         t += 1800 + setup.Normal(0, 60)) {
      events_.push_back({t, t + 40 + setup.Uniform() * 50, 0});
    }
    for (double t = 1500 + setup.Normal(0, 60); t < job.duration_s; t += 3600) {
      events_.push_back({t, t + 60 + setup.Uniform() * 60, 1});
    }
    for (double t = setup.Exponential(1.0 / 3600); t < job.duration_s;
         t += setup.Exponential(1.0 / 3600)) {
      events_.push_back({t, t + 10 + setup.Uniform() * 50, 2});
    }
  }
}

TelemetryGenerator::~TelemetryGenerator() = default;

int64_t TelemetryGenerator::SeriesPerSecond() const {
  int64_t n = 0;
  for (const Machine& m : machines_) n += static_cast<int64_t>(m.series.size());
  return n;
}

TelemetryGenerator::Profile TelemetryGenerator::JobProfile(int m, double t, double activity) const {
  const double a = activity;
  Profile healthy{100 * (a + 0.85 * (1 - a)),
                  0.5 * a,
                  0.97 * a + 0.7 * (1 - a),
                  100 + 550 * a + 120 * (1 - a),
                  150e9 * (1 - a),
                  3e9 + 1e9 * (1 - a),
                  22e9 * (1 - a),
                  0.55,
                  5};
  static constexpr std::array<Profile, 3> kEvents = {{
      {8, 0, 0.05, 130, 1e9, 20e9, 6e9, 0.35, 20},   // checkpoint: GPU to host to storage
      {75, 0.25, 0.6, 330, 40e9, 2e9, 3e9, 0.5, 5},  // evaluation: forward passes only
      {2, 0, 0.02, 105, 0, 0.5e9, 8e9, 0.1, 5},      // data-loader stall: hosts busy
  }};
  const Machine& machine = machines_[static_cast<size_t>(m)];
  Profile p = healthy;
  double weight = 0;
  Profile mixed{};
  for (const Event& e : events_) {
    const double w = Overlap(t, t + 1, e.start + machine.jitter, e.end + machine.jitter);
    if (w <= 0) continue;
    const Profile& q = kEvents[static_cast<size_t>(e.type)];
    weight += w;
    mixed = Profile::Blend(mixed, 1, q, w);
  }
  if (weight > 0) {
    weight = std::min(weight, 1.0);
    p = Profile::Blend(healthy, 1 - weight, mixed, 1);
  }
  return p;
}

namespace {

// How much one fault kind slows every iteration of the whole job (collectives wait for the
// slowest rank), beyond the straggler's own severity.
constexpr double kPcieDowngradeSlowdown = 1.08;  // gradients cross a half-width PCIe link
constexpr double kNicDownSlowdown = 1.15;        // the other NICs carry the lost NIC's traffic
constexpr double kNvlinkErrorSlowdown = 1.05;    // retried NVLink packets

// Peers notice a dead rank at their next collective: 1.2 iterations after the fault on average.
constexpr double kStallAfterIterations = 1.2;
// An uncorrectable ECC error kills the process this long after the XID is logged.
constexpr double kEccDeathDelay_s = 2;

// XID codes that dcgm-exporter reports (NVIDIA's XID catalogue).
constexpr double kXidDoubleBitEcc = 48;
constexpr double kXidGraphicsEngineException = 13;

// PCIe links: Gen5 x16, trained down to x8 by a degraded link.
constexpr double kPcieFullWidth = 16;
constexpr double kPcieDegradedWidth = 8;
constexpr double kPcieGeneration = 5;

// What a fault does to the GPU (or NIC) it hits, on top of the job-wide profile.
constexpr double kStragglerPowerFactor = 0.85;    // throttled clocks draw less power
constexpr double kTensorActiveAtFullLoad = 0.5;   // DCGM's tensor-pipe activity of a busy GPU
constexpr double kDegradedBandwidthFactor = 0.5;  // NVLink with CRC retries, PCIe at x8
constexpr double kPfcSurgeFactor = 200;           // pause frames while a downgraded link backs up
// NVLink CRC errors a second on the faulty link: uniform in [min, min + range).
constexpr double kNvlinkCrcMin = 50;
constexpr double kNvlinkCrcRange = 450;

// Benign spikes, by type: a few seconds of one odd signal on one machine.
constexpr double kSpikePowerFactor = 0.7;  // type 0: a power dip
constexpr double kSpikeUtilCeiling = 50;   // type 1: utilisation dips to at most this
constexpr double kSpikeNetFactor = 3;      // type 2: a burst of network traffic
constexpr double kSpikeCpuIdle = 0.1;      // type 3: the host's CPUs busy

// The training script logs its step time every this many seconds.
constexpr int64_t kStepReportPeriod_s = 4;

// Relative noise (standard deviation) of each signal, and the index of its machine's static
// offset in Machine::offset (the Profile fields' order: util, tensor, gr, power, nvlink, pcie,
// net, cpu_idle, pfc; cpu_idle takes no offset, its slot serves the step time).
struct Noise {
  size_t offset;
  double sd;
};
constexpr Noise kUtilNoise{0, 0.01};
constexpr Noise kTensorNoise{1, 0.03};
constexpr Noise kGrNoise{2, 0.02};
constexpr Noise kPowerNoise{3, 0.03};
constexpr Noise kNvlinkNoise{4, 0.05};
constexpr Noise kPcieNoise{5, 0.05};
constexpr Noise kNetNoise{6, 0.04};
constexpr Noise kStepNoise{7, 0.01};
constexpr Noise kPfcNoise{8, 0.2};
constexpr double kCpuIdleNoise = 0.02;  // absolute, in the share of a second idle

constexpr double kHungCpuIdle = 0.97;  // a hung machine's host blocks too

}  // namespace

TelemetryGenerator::JobEffects TelemetryGenerator::JobAt(double now) const {
  // Slowed by every slow fault, stalled by the first fault that stops a process.
  JobEffects job;
  for (const TelemetryFault& f : job_.faults) {
    if (now < f.onset_s) continue;
    using K = TelemetryFaultKind;
    switch (f.kind) {
      case K::kStraggler:
        job.slowdown *= 1 + f.severity * kComputeShare;
        break;
      case K::kPcieDowngrade:
        job.slowdown *= kPcieDowngradeSlowdown;
        break;
      case K::kNicDown:
        job.slowdown *= kNicDownSlowdown;
        break;
      case K::kNvlinkError:
        job.slowdown *= kNvlinkErrorSlowdown;
        break;
      default:
        break;
    }
    if (Stops(f.kind)) {
      const double from = f.onset_s + kStallAfterIterations * job_.iteration_s;
      if (job.stall_from < 0 || from < job.stall_from) job.stall_from = from;
    }
  }
  return job;
}

TelemetryGenerator::MachineFaults TelemetryGenerator::FaultsAt(const Machine& machine, double now) {
  MachineFaults out;
  for (const TelemetryFault* f : machine.faults) {
    if (now < f->onset_s) continue;
    using K = TelemetryFaultKind;
    if (f->kind == K::kUnreachable) out.unreachable = true;
    if (f->kind == K::kHang) out.hung = true;
    if (Stops(f->kind) && f->kind != K::kHang &&
        (f->kind != K::kEccUncorrectable || now >= f->onset_s + kEccDeathDelay_s)) {
      out.crash = f;
    }
    out.latest = f;
  }
  return out;
}

TelemetryGenerator::Profile TelemetryGenerator::MachineProfile(int m, double now,
                                                               const SecondState& second) const {
  // While every rank waits in a collective for a peer that will not come (hang or stall), and
  // once the processes are gone.
  static constexpr Profile kWaiting = {100, 0, 0.98, 230, 0.2e9, 0.05e9, 0.05e9, 0.5, 0};
  static constexpr Profile kIdle = {0, 0, 0, 75, 0, 0, 0.01e9, 0.97, 0};
  const Machine& machine = machines_[static_cast<size_t>(m)];
  Profile p = JobProfile(m, now, second.activity);
  if (second.faults.crash || second.dead) {
    p = kIdle;
  } else if (second.faults.hung || second.stalled) {
    p = kWaiting;
    if (second.faults.hung) p.cpu_idle = kHungCpuIdle;
  }
  for (const Event& spike : machine.spikes) {
    if (now < spike.start || now >= spike.end) continue;
    if (spike.type == 0) p.power *= kSpikePowerFactor;
    if (spike.type == 1) p.util = std::min(p.util, kSpikeUtilCeiling);
    if (spike.type == 2) p.net *= kSpikeNetFactor;
    if (spike.type == 3) p.cpu_idle = kSpikeCpuIdle;
  }
  return p;
}

std::optional<double> TelemetryGenerator::SeriesValue(Machine& machine, size_t i, int64_t t,
                                                      const Profile& p, const SecondState& second) {
  const Series& s = machine.series[i];
  const double now = static_cast<double>(t);
  const auto noisy = [&](double v, Noise noise) {
    return std::max(0.0, v * machine.offset[noise.offset] * (1 + rng_.Normal(0, noise.sd)));
  };
  using K = TelemetryFaultKind;
  const TelemetryFault* fault = second.faults.latest;
  const K fault_kind = fault ? fault->kind : K::kHang;
  const int fault_component = fault ? fault->component : -1;
  const bool hit = fault && s.kind < Kind::kCpuIdle && s.index == fault_component;
  const bool nic_down =
      fault && fault_kind == K::kNicDown && s.index == fault_component % job_.nics;
  if (fault_kind == K::kCardDrop && hit) return std::nullopt;  // gone from the bus
  double& total = machine.totals[i];
  switch (s.kind) {
    case Kind::kUtil:
      return std::min(100.0, std::round(noisy(p.util, kUtilNoise)));
    case Kind::kPower: {
      const double power =
          hit && fault_kind == K::kStraggler ? p.power * kStragglerPowerFactor : p.power;
      return noisy(power, kPowerNoise) * machine.gpu_power_offset[static_cast<size_t>(s.index)];
    }
    case Kind::kTensor: {
      double tensor = p.tensor;
      if (hit && fault_kind == K::kStraggler && !second.stalled && !second.dead) {
        // The slow GPU computes through the time its peers spend waiting for it.
        tensor = kTensorActiveAtFullLoad * std::min(1.0, second.activity * (1 + fault->severity));
      }
      return noisy(tensor, kTensorNoise);
    }
    case Kind::kGrEngine:
      return std::min(1.0, noisy(p.gr, kGrNoise));
    case Kind::kNvlink: {
      const double f = hit && fault_kind == K::kNvlinkError ? kDegradedBandwidthFactor : 1;
      return noisy(p.nvlink * f, kNvlinkNoise);
    }
    case Kind::kPcie: {
      const double f = hit && fault_kind == K::kPcieDowngrade ? kDegradedBandwidthFactor : 1;
      return noisy(p.pcie * f, kPcieNoise);
    }
    case Kind::kXid:
      if (hit && fault_kind == K::kEccUncorrectable) return kXidDoubleBitEcc;
      if (hit && fault_kind == K::kGpuExecutionError) return kXidGraphicsEngineException;
      return 0;
    case Kind::kEccDbe:
      if (hit && fault_kind == K::kEccUncorrectable && now == fault->onset_s) total += 1;
      return total;
    case Kind::kNvlinkCrc:
      if (hit && fault_kind == K::kNvlinkError) {
        total += std::floor(kNvlinkCrcMin + kNvlinkCrcRange * rng_.Uniform());
      }
      return total;
    case Kind::kPcieWidth:
      return hit && fault_kind == K::kPcieDowngrade ? kPcieDegradedWidth : kPcieFullWidth;
    case Kind::kPcieWidthMax:
      return kPcieFullWidth;
    case Kind::kPcieGen:
    case Kind::kPcieGenMax:
      return kPcieGeneration;
    case Kind::kCpuIdle:
      total += std::clamp(p.cpu_idle + rng_.Normal(0, kCpuIdleNoise), 0.0, 1.0);
      return std::round(total * 100) / 100;
    case Kind::kNetRx:
    case Kind::kNetTx: {
      // The NIC that is down carries nothing; the others share its traffic.
      double share = 1;
      if (fault && fault_kind == K::kNicDown) {
        share = nic_down ? 0 : job_.nics / std::max(1.0, job_.nics - 1.0);
      }
      total += std::floor(noisy(p.net * share, kNetNoise));
      return total;
    }
    case Kind::kNetUp:
      return nic_down ? 0 : 1;
    case Kind::kPfc: {
      const double f = fault && fault_kind == K::kPcieDowngrade ? kPfcSurgeFactor : 1;
      total += std::floor(noisy(p.pfc * f, kPfcNoise));
      return total;
    }
    case Kind::kStep:
      if (second.faults.crash || second.dead) return std::nullopt;  // its exporter is gone
      if (!second.faults.hung && !second.stalled &&
          (t % kStepReportPeriod_s == 0 || machine.step_time == 0)) {
        double compute = job_.iteration_s * kComputeShare;
        if (fault && fault_kind == K::kStraggler) compute *= 1 + fault->severity;
        machine.step_time =
            compute * machine.offset[kStepNoise.offset] * (1 + rng_.Normal(0, kStepNoise.sd));
      }
      return machine.step_time;
  }
  return std::nullopt;
}

void TelemetryGenerator::Step(int64_t t) {
  if (t == stepped_) return;
  stepped_ = t;
  const double now = static_cast<double>(t);
  const JobEffects job = JobAt(now);
  const double period = job_.iteration_s * job.slowdown;
  const double phase0 = phase_;
  phase_ += 1.0 / period;
  SecondState second;
  second.stalled = job.stall_from >= 0 && now >= job.stall_from;
  second.dead = job.stall_from >= 0 && now >= job.stall_from + kWatchdog_s;
  for (int m = 0; m < job_.machines; ++m) {
    Machine& machine = machines_[static_cast<size_t>(m)];
    auto& out = values_[static_cast<size_t>(m)];
    out.clear();
    second.faults = FaultsAt(machine, now);
    if (second.faults.unreachable) continue;
    // The share of this second that the machine computed, its phase lagging by its jitter.
    second.activity = std::clamp(
        ComputeIterations(phase0 - machine.jitter / period, phase_ - machine.jitter / period) *
            period,
        0.0, 1.0);
    const Profile p = MachineProfile(m, now, second);
    for (size_t i = 0; i < machine.series.size(); ++i) {
      if (const std::optional<double> v = SeriesValue(machine, i, t, p, second)) {
        out.emplace_back(&machine.series[i], *v);
      }
    }
  }
}

void TelemetryGenerator::Emit(int64_t t, const telemetry::SampleSink& sink) {
  Step(t);
  telemetry::RawSample r;
  r.time = job_.start + static_cast<double>(t);
  for (int m = 0; m < job_.machines; ++m) {
    r.machine = names_[static_cast<size_t>(m)];
    for (const auto& [s, v] : values_[static_cast<size_t>(m)]) {
      r.metric = s->metric;
      r.component = s->component;
      r.labels = &s->labels;
      r.value = v;
      sink(r);
    }
  }
}

std::string TelemetryGenerator::Exposition(int64_t t) {
  Step(t);
  std::string out;
  for (int m = 0; m < job_.machines; ++m) {
    for (const auto& [s, v] : values_[static_cast<size_t>(m)]) {
      out += s->metric;
      out += '{';
      for (size_t i = 0; i < s->labels.size(); ++i) {
        if (i) out += ',';
        fmt::format_to(std::back_inserter(out), "{}=\"{}\"", s->labels[i].first,
                       s->labels[i].second);
      }
      fmt::format_to(std::back_inserter(out), "}} {}\n", v);
    }
  }
  return out;
}

std::string TelemetryGenerator::LabelsCsv() const {
  std::string out = "machine,onset,kind,end\n";
  for (const TelemetryFault& f : job_.faults) {
    fmt::format_to(std::back_inserter(out), "{},{},{},\n", names_[static_cast<size_t>(f.machine)],
                   job_.start + f.onset_s, FaultKindName(f.kind));
  }
  return out;
}

}  // namespace vigil::sim
