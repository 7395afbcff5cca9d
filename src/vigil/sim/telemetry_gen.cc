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
  const Machine& mc = machines_[static_cast<size_t>(m)];
  Profile p = healthy;
  double weight = 0;
  Profile mixed{};
  for (const Event& e : events_) {
    const double w = Overlap(t, t + 1, e.start + mc.jitter, e.end + mc.jitter);
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

void TelemetryGenerator::Step(int64_t t) {
  if (t == stepped_) return;
  stepped_ = t;
  const double now = static_cast<double>(t);
  // The job: slowed by every slow fault, stalled by the first fault that stops a process.
  double slow = 1;
  double stall_from = -1;  // when peers begin to wait in their collectives
  for (const TelemetryFault& f : job_.faults) {
    if (now < f.onset_s) continue;
    using K = TelemetryFaultKind;
    switch (f.kind) {
      case K::kStraggler:
        slow *= 1 + f.severity * kComputeShare;
        break;
      case K::kPcieDowngrade:
        slow *= 1.08;
        break;
      case K::kNicDown:
        slow *= 1.15;
        break;
      case K::kNvlinkError:
        slow *= 1.05;
        break;
      default:
        break;
    }
    if (Stops(f.kind)) {
      const double from = f.onset_s + 1.2 * job_.iteration_s;
      if (stall_from < 0 || from < stall_from) stall_from = from;
    }
  }
  const double period = job_.iteration_s * slow;
  const double phase0 = phase_;
  phase_ += 1.0 / period;
  const bool stalled = stall_from >= 0 && now >= stall_from;
  const bool dead = stall_from >= 0 && now >= stall_from + kWatchdog_s;
  static constexpr Profile kWaiting = {100, 0, 0.98, 230, 0.2e9, 0.05e9, 0.05e9, 0.5, 0};
  static constexpr Profile kIdle = {0, 0, 0, 75, 0, 0, 0.01e9, 0.97, 0};

  for (int m = 0; m < job_.machines; ++m) {
    Machine& mc = machines_[static_cast<size_t>(m)];
    auto& out = values_[static_cast<size_t>(m)];
    out.clear();
    const TelemetryFault* crash = nullptr;  // a fault of this machine that is active now
    const TelemetryFault* gpu_fault = nullptr;
    bool unreachable = false, hung = false;
    for (const TelemetryFault* f : mc.faults) {
      if (now < f->onset_s) continue;
      using K = TelemetryFaultKind;
      if (f->kind == K::kUnreachable) unreachable = true;
      if (f->kind == K::kHang) hung = true;
      if (Stops(f->kind) && f->kind != K::kHang &&
          (f->kind != K::kEccUncorrectable || now >= f->onset_s + 2)) {
        crash = f;
      }
      gpu_fault = f;
    }
    if (unreachable) continue;
    const double activity = std::clamp(
        ComputeIterations(phase0 - mc.jitter / period, phase_ - mc.jitter / period) * period, 0.0,
        1.0);
    Profile p = JobProfile(m, now, activity);
    if (crash || dead) {
      p = kIdle;
    } else if (hung || stalled) {
      p = kWaiting;
      if (hung) p.cpu_idle = 0.97;
    }
    // A benign spike of this machine.
    for (const Event& s : mc.spikes) {
      if (now < s.start || now >= s.end) continue;
      if (s.type == 0) p.power *= 0.7;
      if (s.type == 1) p.util = std::min(p.util, 50.0);
      if (s.type == 2) p.net *= 3;
      if (s.type == 3) p.cpu_idle = 0.1;
    }
    auto noisy = [&](double v, int field, double sd) {
      return std::max(0.0, v * mc.offset[static_cast<size_t>(field)] * (1 + rng_.Normal(0, sd)));
    };
    using K = TelemetryFaultKind;
    const K fk = gpu_fault ? gpu_fault->kind : K::kHang;
    const int fg = gpu_fault ? gpu_fault->component : -1;
    for (size_t i = 0; i < mc.series.size(); ++i) {
      const Series& s = mc.series[i];
      const bool hit = gpu_fault && s.kind < Kind::kCpuIdle && s.index == fg;
      if (fk == K::kCardDrop && hit) continue;  // gone from the bus
      double v = 0;
      double& total = mc.totals[i];
      switch (s.kind) {
        case Kind::kUtil:
          v = std::min(100.0, std::round(noisy(p.util, 0, 0.01)));
          break;
        case Kind::kPower: {
          double power = p.power;
          if (hit && fk == K::kStraggler) power *= 0.85;  // throttled clocks
          v = noisy(power, 3, 0.03) * mc.gpu_power_offset[static_cast<size_t>(s.index)];
          break;
        }
        case Kind::kTensor: {
          double tensor = p.tensor;
          if (hit && fk == K::kStraggler && !stalled && !dead) {
            // The slow GPU computes through the time its peers spend waiting for it.
            tensor = 0.5 * std::min(1.0, activity * (1 + gpu_fault->severity));
          }
          v = noisy(tensor, 1, 0.03);
          break;
        }
        case Kind::kGrEngine:
          v = std::min(1.0, noisy(p.gr, 2, 0.02));
          break;
        case Kind::kNvlink: {
          const double f = hit && fk == K::kNvlinkError ? 0.5 : 1;
          v = noisy(p.nvlink * f, 4, 0.05);
          break;
        }
        case Kind::kPcie: {
          const double f = hit && fk == K::kPcieDowngrade ? 0.5 : 1;
          v = noisy(p.pcie * f, 5, 0.05);
          break;
        }
        case Kind::kXid:
          v = 0;
          if (hit && fk == K::kEccUncorrectable) v = 48;
          if (hit && fk == K::kGpuExecutionError) v = 13;
          break;
        case Kind::kEccDbe:
          if (hit && fk == K::kEccUncorrectable && now == gpu_fault->onset_s) total += 1;
          v = total;
          break;
        case Kind::kNvlinkCrc:
          if (hit && fk == K::kNvlinkError) total += std::floor(50 + 450 * rng_.Uniform());
          v = total;
          break;
        case Kind::kPcieWidth:
          v = hit && fk == K::kPcieDowngrade ? 8 : 16;
          break;
        case Kind::kPcieWidthMax:
          v = 16;
          break;
        case Kind::kPcieGen:
        case Kind::kPcieGenMax:
          v = 5;
          break;
        case Kind::kCpuIdle:
          total += std::clamp(p.cpu_idle + rng_.Normal(0, 0.02), 0.0, 1.0);
          v = std::round(total * 100) / 100;
          break;
        case Kind::kNetRx:
        case Kind::kNetTx: {
          double share = 1;
          if (gpu_fault && fk == K::kNicDown) {
            share = s.index == fg % job_.nics ? 0 : job_.nics / std::max(1.0, job_.nics - 1.0);
          }
          total += std::floor(noisy(p.net * share, 6, 0.04));
          v = total;
          break;
        }
        case Kind::kNetUp:
          v = gpu_fault && fk == K::kNicDown && s.index == fg % job_.nics ? 0 : 1;
          break;
        case Kind::kPfc: {
          const double f = gpu_fault && fk == K::kPcieDowngrade ? 200 : 1;
          total += std::floor(noisy(p.pfc * f, 8, 0.2));
          v = total;
          break;
        }
        case Kind::kStep:
          if (crash || dead) continue;  // the process that exported it is gone
          if (!hung && !stalled && (t % 4 == 0 || mc.step_time == 0)) {
            double compute = job_.iteration_s * kComputeShare;
            if (gpu_fault && fk == K::kStraggler) compute *= 1 + gpu_fault->severity;
            mc.step_time = compute * mc.offset[7] * (1 + rng_.Normal(0, 0.01));
          }
          v = mc.step_time;
          break;
      }
      out.emplace_back(&s, v);
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
