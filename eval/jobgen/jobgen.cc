// jobgen: the per-machine telemetry of one synchronous distributed training job, as dcgm-exporter,
// node-exporter and the trainer's own /metrics endpoint would expose it to Prometheus, with
// labelled faults (labels.csv) and every injected benign event (benign.csv).
//
// The model is described in eval/jobgen/README.md. In short: the job is a sequence of segments
// (training iterations and job-wide pauses) generated ahead of the scrape clock; every machine's
// GPUs and host go through phases inside each segment (data stall, waiting for peers, pipelined
// compute, exposed all-reduce, optimizer, checkpoint, ...), and each scrape integrates the phase
// rates over the window the exporter averages over. Scrapes of all (machine, exporter) targets are
// merged in time order through a heap, so the output streams in timestamp order.
//
// Standard library, fmt and CLI11 only: nothing from src/vigil.

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <queue>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace jobgen {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int kMaxGpus = 8;
constexpr int kHcas = 4;
constexpr double kLookbackS = 300.0;     // Prometheus query_range lookback delta
constexpr double kDcgmWindowS = 1.0;     // dcgm-exporter collection interval (averaging window)
constexpr double kScrapeMissP = 0.005;   // independent scrape failures
constexpr double kRestartPerHour = 0.1;  // exporter restarts per machine-hour (both exporters)
constexpr double kGB = 1e9;

// ------------------------------------------------------------------------------------------------
// Deterministic randomness: splitmix64 streams, so that results do not depend on the standard
// library's distributions (which differ between implementations).

uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(Mix(seed)) {}
  Rng(uint64_t seed, uint64_t stream)
      : state_(Mix(Mix(seed) ^ Mix(stream * 0x632be59bd9b4e019ULL))) {}
  uint64_t Next() { return Mix(state_++); }
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  double Uniform(double lo, double hi) { return lo + (hi - lo) * Uniform(); }
  int Int(int lo, int hi) {  // inclusive
    return lo + static_cast<int>(Next() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool Chance(double p) { return Uniform() < p; }
  double Normal() {
    const double u1 = std::max(Uniform(), 1e-300);
    const double u2 = Uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  }
  double LogNormal(double sigma) { return std::exp(sigma * Normal()); }
  double Exponential(double mean) { return -mean * std::log(std::max(Uniform(), 1e-300)); }

 private:
  uint64_t state_;
};

// ------------------------------------------------------------------------------------------------
// Options.

enum class Format { kCsv, kOpenMetrics };
enum class StepExport { kGauge, kEvent };

struct Options {
  int machines = 64;               // machines in the job, 8..1024
  int gpus = 8;                    // GPUs per machine, 1..8
  double duration_s = 1800;        // length of the data
  uint64_t seed = 1;               // everything is a function of the seed and the options
  std::string out;                 // output directory, created if needed
  Format format = Format::kCsv;    // csv: telemetry.csv; openmetrics: telemetry.om
  double interval_s = 15;          // scrape interval of every target
  double dcgm_interval_s = 0;      // 0: interval_s
  double node_interval_s = 0;      // 0: interval_s
  bool aligned = false;            // all scrapes on the same grid instants
  double grid_s = 0;               // >0: re-sample as query_range with this step
  int stages = 1;                  // pipeline stages (machines of a stage alike)
  bool groups = false;             // CSV group column = stage
  int faults = 1;                  // random faults, each on a distinct machine
  std::vector<std::string> kinds;  // allowed fault kinds (empty: all applicable)
  double fault_from = 0.2;         // fraction of the duration (<=1) or seconds
  double fault_to = 0.6;           // idem
  double benign_rate = 2;          // single-machine benign events per machine-hour
  double benign_min_s = 1;         // their shortest duration
  double benign_max_s = 60;        // their longest duration
  StepExport step_export = StepExport::kGauge;
  double start = 1790000000;   // Unix time of the first instant
  double straggler_min = 0.2;  // straggler slow-down, fraction of compute time
  double straggler_max = 1.4;
  double watchdog_s = 600;  // NCCL/torch watchdog: peers of a dead rank die after this
  int cpus = 16;            // logical CPUs exported in openmetrics node_cpu_seconds_total
};

// ------------------------------------------------------------------------------------------------
// Metrics, series and their layout.

enum class Exporter { kDcgm = 0, kNode = 1, kTrainer = 2 };

enum class ValueFmt { kInt, kOne, kTwo, kFour };

enum Metric : uint16_t {
  kGpuUtil,
  kPower,
  kTensor,
  kGrEngine,
  kTemp,
  kNvTx,
  kNvRx,
  kPcieTx,
  kPcieRx,
  kXid,
  kEccDbe,
  kLinkWidth,
  kLinkMaxWidth,
  kCrc,
  kGpuMetricCount,
  kCpuIdle = kGpuMetricCount,  // CSV only
  kCpuSeconds,                 // openmetrics only
  kIbRx,
  kIbTx,
  kNetUp,
  kStep,
  kMetricCount
};

struct MetricInfo {
  std::string_view name;    // CSV metric / OpenMetrics sample name
  std::string_view family;  // OpenMetrics family (MetricFamily name)
  std::string_view type;    // OpenMetrics type
  ValueFmt fmt;
};

constexpr std::array<MetricInfo, kMetricCount> kMetrics = {{
    {"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_GPU_UTIL", "gauge", ValueFmt::kOne},
    {"DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_POWER_USAGE", "gauge", ValueFmt::kTwo},
    {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge",
     ValueFmt::kFour},
    {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge", ValueFmt::kFour},
    {"DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_GPU_TEMP", "gauge", ValueFmt::kInt},
    {"DCGM_FI_PROF_NVLINK_TX_BYTES", "DCGM_FI_PROF_NVLINK_TX_BYTES", "gauge", ValueFmt::kInt},
    {"DCGM_FI_PROF_NVLINK_RX_BYTES", "DCGM_FI_PROF_NVLINK_RX_BYTES", "gauge", ValueFmt::kInt},
    {"DCGM_FI_PROF_PCIE_TX_BYTES", "DCGM_FI_PROF_PCIE_TX_BYTES", "gauge", ValueFmt::kInt},
    {"DCGM_FI_PROF_PCIE_RX_BYTES", "DCGM_FI_PROF_PCIE_RX_BYTES", "gauge", ValueFmt::kInt},
    {"DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_XID_ERRORS", "gauge", ValueFmt::kInt},
    // OpenMetrics counters need a lower-case _total suffix; these keep the exporter's name and
    // are typed unknown there.
    {"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "unknown", ValueFmt::kInt},
    {"DCGM_FI_DEV_PCIE_LINK_WIDTH", "DCGM_FI_DEV_PCIE_LINK_WIDTH", "gauge", ValueFmt::kInt},
    {"DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH", "DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH", "gauge", ValueFmt::kInt},
    {"DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL",
     "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "unknown", ValueFmt::kInt},
    {"cpu_idle", "cpu_idle", "gauge", ValueFmt::kFour},
    {"node_cpu_seconds_total", "node_cpu_seconds", "counter", ValueFmt::kTwo},
    {"node_infiniband_port_data_received_bytes_total", "node_infiniband_port_data_received_bytes",
     "counter", ValueFmt::kInt},
    {"node_infiniband_port_data_transmitted_bytes_total",
     "node_infiniband_port_data_transmitted_bytes", "counter", ValueFmt::kInt},
    {"node_network_up", "node_network_up", "gauge", ValueFmt::kInt},
    {"training_step_seconds", "training_step_seconds", "gauge", ValueFmt::kFour},
}};

constexpr std::array<std::string_view, 4> kCpuModes = {"user", "system", "iowait", "idle"};

// Every series has a dense id: machine * per_machine + local. The local layout is
//   [GPU g, metric j]   g * kGpuMetricCount + j
//   cpu                 cpu_idle (CSV) or cpus x modes node_cpu_seconds_total (openmetrics)
//   IB rx, IB tx, network_up per HCA
//   training_step_seconds
struct Layout {
  int gpus = 8;
  int cpu_series = 1;
  int per_machine = 0;
  int cpu_base = 0, ibrx_base = 0, ibtx_base = 0, up_base = 0, step_local = 0;

  Layout(int gpus_in, int cpu_series_in) : gpus(gpus_in), cpu_series(cpu_series_in) {
    cpu_base = gpus * kGpuMetricCount;
    ibrx_base = cpu_base + cpu_series;
    ibtx_base = ibrx_base + kHcas;
    up_base = ibtx_base + kHcas;
    step_local = up_base + kHcas;
    per_machine = step_local + 1;
  }
  uint32_t Id(int machine, int local) const {
    return static_cast<uint32_t>(machine * per_machine + local);
  }
  // The metric and component index (GPU, HCA or CPU*modes+mode; -1 for none) of a local id.
  std::pair<Metric, int> Describe(int local, bool openmetrics) const {
    if (local < cpu_base) {
      return {static_cast<Metric>(local % kGpuMetricCount), local / kGpuMetricCount};
    }
    if (local < ibrx_base) {
      return openmetrics ? std::pair{kCpuSeconds, local - cpu_base} : std::pair{kCpuIdle, -1};
    }
    if (local < ibtx_base) return {kIbRx, local - ibrx_base};
    if (local < up_base) return {kIbTx, local - ibtx_base};
    if (local < step_local) return {kNetUp, local - up_base};
    return {kStep, -1};
  }
};

// ------------------------------------------------------------------------------------------------
// Output sinks. A sample's value is NaN when the scrape failed (CSV: empty value).

class Writer {
 public:
  explicit Writer(const std::string& path) : file_(std::fopen(path.c_str(), "wb")) {
    if (file_ == nullptr) {
      throw std::runtime_error(fmt::format("cannot open {}: {}", path, std::strerror(errno)));
    }
    buf_.reserve(kFlushBytes + 4096);
  }
  ~Writer() {
    if (file_ != nullptr) std::fclose(file_);
  }
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  fmt::memory_buffer& buf() { return buf_; }
  void MaybeFlush() {
    if (buf_.size() >= kFlushBytes) Flush();
  }
  void Flush() {
    if (buf_.size() > 0 && std::fwrite(buf_.data(), 1, buf_.size(), file_) != buf_.size()) {
      throw std::runtime_error("write failed");
    }
    buf_.clear();
  }
  void Close() {
    Flush();
    if (std::fclose(file_) != 0) throw std::runtime_error("close failed");
    file_ = nullptr;
  }

 private:
  static constexpr size_t kFlushBytes = 1 << 20;
  std::FILE* file_;
  fmt::memory_buffer buf_;
};

void AppendTime(fmt::memory_buffer& b, double t) {
  const auto ms = static_cast<int64_t>(std::llround(t * 1000.0));
  fmt::format_to(std::back_inserter(b), "{}.{:03}", ms / 1000, ms % 1000);
}

void AppendValue(fmt::memory_buffer& b, ValueFmt f, double v) {
  auto it = std::back_inserter(b);
  switch (f) {
    case ValueFmt::kInt:
      fmt::format_to(it, "{:.0f}", v);
      break;
    case ValueFmt::kOne:
      fmt::format_to(it, "{:.1f}", v);
      break;
    case ValueFmt::kTwo:
      fmt::format_to(it, "{:.2f}", v);
      break;
    case ValueFmt::kFour:
      fmt::format_to(it, "{:.4f}", v);
      break;
  }
}

class Sink {
 public:
  virtual ~Sink() = default;
  virtual void Sample(uint32_t series, double t, double value) = 0;
  // Called with increasing t before samples at t or later; grid re-sampling emits up to t.
  virtual void Advance(double /*t*/) {}
  virtual void Finish() = 0;
};

struct Naming {
  std::vector<std::string> machines;
  std::vector<int> stage_of;
  Layout layout;
  bool openmetrics = false;
};

std::string ComponentName(Metric m, int idx) {
  if (idx < 0) return "";
  if (m < kGpuMetricCount) return fmt::format("gpu{}", idx);
  if (m == kIbRx || m == kIbTx || m == kNetUp) return fmt::format("mlx5_{}", idx);
  return fmt::format("cpu{}", idx);
}

class CsvSink final : public Sink {
 public:
  CsvSink(const std::string& path, const Naming& naming, bool groups)
      : w_(path), naming_(naming), groups_(groups) {
    for (int local = 0; local < naming.layout.per_machine; ++local) {
      const auto [metric, idx] = naming.layout.Describe(local, false);
      metric_of_.push_back(metric);
      component_.push_back(ComponentName(metric, idx));
    }
    fmt::format_to(std::back_inserter(w_.buf()), "timestamp,machine,metric,value,component{}\n",
                   groups_ ? ",group" : "");
  }
  void Sample(uint32_t series, double t, double value) override {
    const int per = naming_.layout.per_machine;
    const int machine = static_cast<int>(series) / per;
    const int local = static_cast<int>(series) % per;
    const Metric metric = metric_of_[local];
    auto& b = w_.buf();
    AppendTime(b, t);
    b.push_back(',');
    b.append(naming_.machines[machine]);
    b.push_back(',');
    b.append(kMetrics[metric].name);
    b.push_back(',');
    if (!std::isnan(value)) AppendValue(b, kMetrics[metric].fmt, value);
    b.push_back(',');
    b.append(component_[local]);
    if (groups_) fmt::format_to(std::back_inserter(b), ",{}", naming_.stage_of[machine]);
    b.push_back('\n');
    w_.MaybeFlush();
  }
  void Finish() override { w_.Close(); }

 private:
  Writer w_;
  const Naming& naming_;
  bool groups_;
  std::vector<Metric> metric_of_;
  std::vector<std::string> component_;
};

// OpenMetrics needs each family's samples together, and each series' samples together in time
// order. Samples arrive in global time order, so each family goes to its own spill file of fixed
// records; Finish() writes the families one by one, scattering each spill file by series in
// passes that keep at most kPassRecords records in memory.
class OpenMetricsSink final : public Sink {
 public:
  OpenMetricsSink(const std::string& dir, const Naming& naming, double start)
      : dir_(dir), naming_(naming), start_(start) {
    const int per = naming.layout.per_machine;
    for (int local = 0; local < per; ++local) {
      const auto [metric, idx] = naming.layout.Describe(local, true);
      metric_of_.push_back(metric);
      index_of_.push_back(idx);
    }
    counts_.assign(static_cast<size_t>(per) * naming.machines.size(), 0);
    for (int m = 0; m < kMetricCount; ++m) {
      spill_[m] = nullptr;
    }
  }
  ~OpenMetricsSink() override {
    for (int m = 0; m < kMetricCount; ++m) {
      if (spill_[m] != nullptr) {
        std::fclose(spill_[m]);
        std::filesystem::remove(SpillPath(m));
      }
    }
  }
  void Sample(uint32_t series, double t, double value) override {
    if (std::isnan(value)) return;  // a failed scrape has no sample at all
    const Metric metric = metric_of_[series % naming_.layout.per_machine];
    std::FILE*& f = spill_[metric];
    if (f == nullptr) {
      f = std::fopen(SpillPath(metric).c_str(), "w+b");
      if (f == nullptr) throw std::runtime_error("cannot open spill file " + SpillPath(metric));
    }
    Record r{series, static_cast<uint32_t>(std::llround((t - start_) * 1000.0)), value};
    if (std::fwrite(&r, sizeof r, 1, f) != 1) throw std::runtime_error("spill write failed");
    ++counts_[series];
  }
  void Finish() override {
    Writer w(dir_ + "/telemetry.om");
    const int per = naming_.layout.per_machine;
    const auto total_series = static_cast<uint32_t>(counts_.size());
    for (int metric = 0; metric < kMetricCount; ++metric) {
      std::FILE* f = spill_[metric];
      if (f == nullptr) continue;
      const MetricInfo& info = kMetrics[metric];
      fmt::format_to(std::back_inserter(w.buf()), "# TYPE {} {}\n", info.family, info.type);
      // Series of this family in id order, grouped into passes.
      uint32_t first = 0;
      while (first < total_series) {
        uint64_t in_pass = 0;
        uint32_t last = first;
        std::vector<uint64_t> offset;
        while (last < total_series && (in_pass == 0 || in_pass + counts_[last] <= kPassRecords)) {
          if (metric_of_[last % per] == metric) {
            offset.push_back(in_pass);
            in_pass += counts_[last];
          } else {
            offset.push_back(in_pass);
          }
          ++last;
        }
        if (in_pass > 0) {
          std::vector<Record> recs(in_pass);
          std::vector<uint64_t> fill = offset;
          std::rewind(f);
          std::vector<Record> chunk(1 << 16);
          size_t n = 0;
          while ((n = std::fread(chunk.data(), sizeof(Record), chunk.size(), f)) > 0) {
            for (size_t i = 0; i < n; ++i) {
              const Record& r = chunk[i];
              if (r.series >= first && r.series < last) recs[fill[r.series - first]++] = r;
            }
          }
          uint32_t cur = std::numeric_limits<uint32_t>::max();
          std::string labels;
          for (const Record& r : recs) {
            if (r.series != cur) {
              cur = r.series;
              labels = Labels(cur);
            }
            auto& b = w.buf();
            b.append(info.name);
            b.append(labels);
            b.push_back(' ');
            AppendValue(b, info.fmt, r.value);
            b.push_back(' ');
            AppendTime(b, start_ + r.ms / 1000.0);
            b.push_back('\n');
            w.MaybeFlush();
          }
        }
        first = last;
      }
      std::fclose(f);
      spill_[metric] = nullptr;
      std::filesystem::remove(SpillPath(metric));
    }
    w.buf().append(std::string_view("# EOF\n"));
    w.Close();
  }

 private:
  struct Record {
    uint32_t series;
    uint32_t ms;  // since --start
    double value;
  };
  static constexpr uint64_t kPassRecords = 8u << 20;  // 128 MiB of records per pass

  std::string SpillPath(int metric) const { return fmt::format("{}/.spill-{}.bin", dir_, metric); }

  std::string Labels(uint32_t series) const {
    const int per = naming_.layout.per_machine;
    const int machine = static_cast<int>(series) / per;
    const int local = static_cast<int>(series) % per;
    const Metric metric = metric_of_[local];
    const int idx = index_of_[local];
    const std::string& host = naming_.machines[machine];
    if (metric < kGpuMetricCount) {
      return fmt::format(
          "{{gpu=\"{}\",UUID=\"GPU-{:08x}-{:04x}\",device=\"nvidia{}\",modelName=\"NVIDIA H100 "
          "80GB HBM3\",Hostname=\"{}\",instance=\"{}:9400\",job=\"dcgm-exporter\"}}",
          idx, static_cast<uint32_t>(Mix(static_cast<uint64_t>(machine))), idx * 0x1111 + 0x0a0b,
          idx, host, host);
    }
    if (metric == kCpuSeconds) {
      return fmt::format("{{cpu=\"{}\",instance=\"{}:9100\",job=\"node\",mode=\"{}\"}}", idx / 4,
                         host, kCpuModes[idx % 4]);
    }
    if (metric == kIbRx || metric == kIbTx) {
      return fmt::format("{{device=\"mlx5_{}\",instance=\"{}:9100\",job=\"node\",port=\"1\"}}", idx,
                         host);
    }
    if (metric == kNetUp) {
      return fmt::format("{{device=\"mlx5_{}\",instance=\"{}:9100\",job=\"node\"}}", idx, host);
    }
    return fmt::format("{{instance=\"{}:8000\",job=\"trainer\"}}", host);
  }

  std::string dir_;
  const Naming& naming_;
  double start_;
  std::vector<Metric> metric_of_;
  std::vector<int> index_of_;
  std::vector<uint64_t> counts_;
  std::array<std::FILE*, kMetricCount> spill_{};
};

// Re-samples every series onto a grid as query_range does: at each grid instant the latest sample
// at or before it within the lookback. A failed scrape leaves a staleness marker, as Prometheus
// does for every series of a target whose scrape fails; a stale latest sample gives an empty value.
class GridSink final : public Sink {
 public:
  GridSink(std::unique_ptr<Sink> inner, double start, double end, double step, size_t series)
      : inner_(std::move(inner)), next_(start), end_(end), step_(step), start_(start) {
    last_t_.assign(series, -std::numeric_limits<double>::infinity());
    last_v_.assign(series, kNaN);
  }
  void Sample(uint32_t series, double t, double value) override {
    last_t_[series] = t;
    last_v_[series] = value;
  }
  void Advance(double t) override {
    while (next_ < t && next_ < end_) {
      for (size_t s = 0; s < last_t_.size(); ++s) {
        if (next_ - last_t_[s] < kLookbackS) {
          inner_->Sample(static_cast<uint32_t>(s), next_, last_v_[s]);
        }
      }
      ++k_;
      next_ = start_ + step_ * static_cast<double>(k_);
    }
  }
  void Finish() override {
    Advance(end_);
    inner_->Finish();
  }

 private:
  std::unique_ptr<Sink> inner_;
  double next_, end_, step_, start_;
  int64_t k_ = 0;
  std::vector<double> last_t_;
  std::vector<double> last_v_;
};

// ------------------------------------------------------------------------------------------------
// Faults and benign events.

enum class FaultKind {
  kStraggler,
  kStragglerGradual,
  kNvlinkDegraded,
  kGpuLost,
  kXidFatal,
  kHang,
  kMachineDown,
  kNicFlap,
  kPcieDowngrade,
  kHostSlow,
  kSlowByPlacementThenWorse,
  kCount
};

constexpr std::array<std::string_view, static_cast<size_t>(FaultKind::kCount)> kFaultNames = {
    "straggler",
    "straggler_gradual",
    "nvlink_degraded",
    "gpu_lost",
    "xid_fatal",
    "hang",
    "machine_down",
    "nic_flap",
    "pcie_downgrade",
    "host_slow",
    "slow_by_placement_then_worse"};

bool IsFatal(FaultKind k) {
  return k == FaultKind::kGpuLost || k == FaultKind::kXidFatal || k == FaultKind::kHang ||
         k == FaultKind::kMachineDown;
}

struct Fault {
  FaultKind kind = FaultKind::kStraggler;
  int machine = 0;
  double drawn_onset = 0;  // when it was drawn to start
  double onset = kNaN;     // when it materialised (first telemetry affected); NaN: not yet
  double end = kNaN;       // NaN: lasts to the end of the data
  int gpu = -1;            // -1: the host (straggler) or not GPU-specific
  int hca = 0;
  double size = 0;    // slow-down fraction, or factor, depending on the kind
  double ramp_s = 0;  // straggler_gradual: time to full size
  int xid = 0;
  bool host_variant = false;                     // hang: host blocked instead of GPU spinning
  std::vector<std::pair<double, double>> downs;  // nic_flap: relative [from, to) intervals
  double crc_rate = 0;                           // nvlink_degraded: CRC errors per second
};

enum class BenignKind {
  kCron,
  kNoisyNeighbour,
  kClockDip,
  kNetBurst,
  kExporterHiccup,
  kExporterRestart
};
constexpr std::array<std::string_view, 6> kBenignNames = {"cron_cpu_busy",   "noisy_neighbour",
                                                          "gpu_clock_dip",   "network_burst",
                                                          "exporter_hiccup", "exporter_restart"};

struct MachineEvent {
  BenignKind kind;
  double start, end;
  int gpu = 0;
  Exporter exporter = Exporter::kDcgm;
  double size = 0;
};

struct BenignRow {
  std::string machine;
  double start, end;
  std::string kind;
};

enum class JobEventKind { kCheckpoint, kEval, kLoadStall, kCollectiveHang, kBatchRamp };
constexpr std::array<std::string_view, 5> kJobEventNames = {
    "checkpoint", "evaluation", "dataloader_stall", "collective_hang", "batch_size_ramp"};

struct JobEvent {
  JobEventKind kind;
  double time;
  double duration;
};

// ------------------------------------------------------------------------------------------------
// The job: static per-machine and per-GPU parameters.

struct GpuStatic {
  double speed;      // compute time multiplier (>1 slower)
  double p_idle;     // W with no process
  double p_spin;     // W spinning in NCCL kernels
  double p_compute;  // W at full tensor load
  double temp_off;   // C above the machine's inlet at zero power
  double r_th;       // C per W
  double nv_rate;    // NVLink bytes/s per direction in tensor-parallel compute
};

struct MachineStatic {
  int stage = 0;
  double hw = 1;             // compute time multiplier of the machine
  double inlet = 25;         // C
  double tensor_eff = 0.45;  // tensor-pipe activity while computing
  double cpu_base = 0.2;     // dataloader CPU share
  double ib_bw = 80 * kGB;   // all-reduce bandwidth, bytes/s, all HCAs together
  double step_delay = 0.01;  // logging delay of training_step_seconds after the iteration
  double crc_base = 0;       // background CRC errors per second (most machines: 0)
  std::array<GpuStatic, kMaxGpus> gpu{};
  std::vector<double> cpu_weight;  // per exported CPU, mean 1
};

// What a machine does during a phase of a segment.
enum class State : uint8_t {
  kIdle,        // no training process (or excluded)
  kHostWait,    // process alive, no kernels (data stall, host blocked)
  kSpin,        // NCCL kernels spinning, waiting for a peer
  kPipe,        // pipelined forward/backward compute (busy fraction per GPU), waits spinning
  kAllReduce,   // exposed data-parallel gradient all-reduce
  kOptimizer,   // optimizer step
  kCheckpoint,  // state copied to host and written out
  kEval,        // evaluation forward passes
  kInit,        // process start, checkpoint load
  kHungSpin,    // a hung kernel: util 100, no progress
  kAbsent       // machine down: no series at all
};

enum class SegKind : uint8_t {
  kIter,
  kInit,
  kCheckpoint,
  kEval,
  kLoadStall,
  kCollHang,
  kFatalStall,
  kDead
};

enum class Role : uint8_t { kNormal, kExcluded, kCulprit, kDown };

struct Segment {
  SegKind kind = SegKind::kIter;
  double start = 0, end = 0;
  // kIter: global phase lengths.
  double x_max = 0, pipe = 0, allreduce = 0, opt = 0;
  double ib_pipe_rate = 0, ib_ar_rate = 0;  // per unit of machine bandwidth
  int culprit = -1;
  State culprit_state = State::kIdle;
  std::vector<float> x;     // per machine: own data stall (kIter) or entry offset (pauses)
  std::vector<float> eff;   // per machine: kernel density while computing (host_slow < 1)
  std::vector<float> busy;  // per machine x GPU: compute seconds within the pipe phase
  std::vector<Role> role;
};

struct Phase {
  double a, b;
  State state;
};

struct GpuRates {
  double util = 0, gr = 0, tensor = 0, power = 0, nv_tx = 0, nv_rx = 0, pcie_tx = 0, pcie_rx = 0;
};

struct HostRates {
  double user = 0, sys = 0, iowait = 0;
  std::array<double, kHcas> ib_rx{}, ib_tx{};
};

// The machine's fault and benign modifiers at one instant.
struct Mods {
  std::array<double, kMaxGpus> slow{};  // extra compute fraction per GPU
  std::array<bool, kMaxGpus> nv_degraded{};
  std::array<bool, kMaxGpus> pcie_half{};
  std::array<double, kMaxGpus> power_scale{};
  std::array<bool, kHcas> hca_up{};
  double host_stretch = 0;  // host_slow: fraction of compute added, with idle gaps
  double data_extra = 0;    // host_slow: exposed data-loading stall, fraction of compute
  double host_factor = 1;   // noisy neighbour
  double nv_penalty = 0;    // fraction of compute added by a degraded NVLink
  double cpu_extra = 0;     // CPU share added by benign events and host_slow
};

class Job {
 public:
  explicit Job(const Options& o);

  void Run();

 private:
  // Setup.
  void BuildMachines();
  void DrawFaults();
  void DrawBenign();
  void DrawJobEvents();

  // Segments.
  void EnsureUntil(double t);
  void GenerateNext();
  void PushIteration(double s, double limit);
  void PushPause(SegKind kind, double s, double e, int culprit = -1,
                 State culprit_state = State::kIdle, bool continued = false);
  void Materialise(double s);
  void MaterialiseVisible(double until, double now);
  double NextRemoval(double s, double until) const;
  Mods ModsAt(int m, double t) const;
  int Phases(const Segment& seg, int m, double a, double b, std::array<Phase, 6>& out) const;
  GpuRates RatesGpu(const Segment& seg, int m, int g, State st, const Mods& mods) const;
  HostRates RatesHost(const Segment& seg, int m, State st, const Mods& mods) const;
  void Integrate(int m, double a, double b, bool gpus, std::array<GpuRates, kMaxGpus>* g_acc,
                 HostRates* h_acc) const;

  // Scrapes.
  bool Missed(int m, Exporter e, double t, Rng& rng);
  void ScrapeDcgm(int m, double t, bool missed);
  void ScrapeNode(int m, double t, bool missed);
  void ScrapeTrainer(int m, double t, bool missed);
  void FlushSteps(double t);
  void WriteLabels() const;
  void WriteBenign();

  const Options& o_;
  const double t0_, t_end_;
  Rng rng_;
  std::vector<MachineStatic> ms_;
  std::vector<double> stage_w_;
  Naming naming_;
  std::unique_ptr<Sink> sink_;

  // Job constants.
  int microbatches_ = 8;
  double base_iter_ = 1.5, mb_time_ = 0.1, ar_total_ = 0.3, ar_overlap_ = 0.7, opt_time_ = 0.05;
  double ramp_at_ = kNaN;  // batch-size ramp: half the microbatches before it

  std::vector<Fault> faults_;
  std::vector<int> fault_of_;  // per machine, index into faults_ or -1
  std::vector<std::vector<MachineEvent>> mevents_;
  std::vector<JobEvent> jevents_;
  size_t next_jevent_ = 0;
  std::vector<BenignRow> benign_;

  // Segment generation state.
  std::deque<Segment> segs_;
  double cursor_;
  double train_start_;  // start of the current run's training (warm-up reference)
  bool first_iter_ = true;
  std::vector<Role> role_;
  std::vector<double> drift_;  // slow per-machine compute drift (AR(1))
  Rng gen_rng_;
  // Scheduled after a fatal fault: stall until kill, dead until restart, init until training.
  double kill_at_ = kNaN, restart_at_ = kNaN, train_at_ = kNaN;
  double fatal_onset_ = kNaN;  // when the fatal fault that stopped the job struck
  int culprit_ = -1;
  State culprit_state_ = State::kIdle;

  // Step events: (time, machine, value); NaN value = the process ended.
  struct StepEvent {
    double t;
    int machine;
    double value;
    bool operator>(const StepEvent& o) const { return t != o.t ? t > o.t : machine > o.machine; }
  };
  std::priority_queue<StepEvent, std::vector<StepEvent>, std::greater<>> steps_;
  std::vector<double> last_step_;

  // Scrape-side state.
  std::vector<Rng> target_rng_;
  std::vector<double> temp_, temp_t_;
  std::vector<double> crc_cum_, crc_base_, ecc_;
  std::vector<int> xid_;
  std::vector<uint8_t> gpu_gone_;  // 0 present, 1 XID reported once, 2 absent
  std::vector<double> node_last_;
  std::vector<std::array<double, kHcas>> ib_rx_, ib_tx_, ib_rx_base_, ib_tx_base_;
  std::vector<std::vector<double>> cpu_cum_, cpu_base_;
  std::vector<std::array<bool, 3>> restart_pending_;
};

Job::Job(const Options& o)
    : o_(o),
      t0_(o.start),
      t_end_(o.start + o.duration_s),
      rng_(o.seed, 1),
      naming_{{},
              {},
              Layout(o.gpus, o.format == Format::kOpenMetrics ? o.cpus * 4 : 1),
              o.format == Format::kOpenMetrics},
      cursor_(o.start),
      train_start_(o.start),
      gen_rng_(o.seed, 2) {
  BuildMachines();
  DrawJobEvents();
  DrawFaults();
  DrawBenign();
  const size_t n = static_cast<size_t>(o.machines);
  const size_t ng = n * static_cast<size_t>(o.gpus);
  role_.assign(n, Role::kNormal);
  drift_.assign(n, 0.0);
  last_step_.assign(n, kNaN);
  temp_.assign(ng, kNaN);
  temp_t_.assign(ng, o.start);
  crc_cum_.assign(ng, 0);
  crc_base_.assign(ng, 0);
  ecc_.assign(ng, 0);
  xid_.assign(ng, 0);
  gpu_gone_.assign(ng, 0);
  node_last_.assign(n, o.start);
  ib_rx_.assign(n, {});
  ib_tx_.assign(n, {});
  ib_rx_base_.assign(n, {});
  ib_tx_base_.assign(n, {});
  restart_pending_.assign(n, {false, false, false});
  if (o.format == Format::kOpenMetrics) {
    cpu_cum_.assign(n, std::vector<double>(static_cast<size_t>(o.cpus) * 4, 0.0));
    cpu_base_ = cpu_cum_;
  }
  // Counters start from a machine's uptime, not from zero.
  for (size_t m = 0; m < n; ++m) {
    Rng r(o.seed, 100000 + m);
    const double uptime = r.Uniform(3600, 40 * 86400.0);
    for (int h = 0; h < kHcas; ++h) {
      ib_rx_[m][h] = uptime * r.Uniform(0.2, 2) * kGB;
      ib_tx_[m][h] = ib_rx_[m][h] * r.Uniform(0.9, 1.1);
    }
    if (!cpu_cum_.empty()) {
      for (int c = 0; c < o.cpus; ++c) {
        const double busy = r.Uniform(0.05, 0.3);
        cpu_cum_[m][c * 4 + 0] = uptime * busy * 0.8;
        cpu_cum_[m][c * 4 + 1] = uptime * busy * 0.18;
        cpu_cum_[m][c * 4 + 2] = uptime * busy * 0.02;
        cpu_cum_[m][c * 4 + 3] = uptime * (1 - busy);
      }
    }
    for (int g = 0; g < o.gpus; ++g) {
      crc_cum_[m * o.gpus + g] = ms_[m].crc_base > 0 ? std::floor(r.Uniform(0, 500)) : 0;
    }
  }
  for (size_t m = 0; m < n; ++m) {
    for (int e = 0; e < 3; ++e) target_rng_.emplace_back(o.seed, 200000 + m * 3 + e);
  }
}

void Job::BuildMachines() {
  Rng r(o_.seed, 10);
  const int n = o_.machines;
  // Stage loads: differ by up to ~4x; the heaviest has weight 1.
  stage_w_.assign(o_.stages, 1.0);
  if (o_.stages > 1) {
    for (auto& w : stage_w_) w = r.Uniform(0.25, 1.0);
    const int heavy = r.Int(0, o_.stages - 1);
    int light = r.Int(0, o_.stages - 2);
    if (light >= heavy) ++light;
    stage_w_[heavy] = 1.0;
    stage_w_[light] = r.Uniform(0.25, 0.4);
  }
  std::vector<double> stage_tensor(o_.stages);
  for (auto& t : stage_tensor) t = r.Uniform(0.32, 0.55);
  const int width = std::max(3, static_cast<int>(std::to_string(n - 1).size()));
  ms_.resize(n);
  for (int m = 0; m < n; ++m) {
    MachineStatic& s = ms_[m];
    s.stage = static_cast<int>(static_cast<int64_t>(m) * o_.stages / n);
    s.hw = r.LogNormal(0.025);
    s.inlet = 24 + 3 * r.Normal() + (m % 16) * 0.2;  // rack position
    s.tensor_eff = stage_tensor[s.stage] * r.LogNormal(0.02);
    s.cpu_base = r.Uniform(0.12, 0.32);
    s.ib_bw = 4 * r.Uniform(18, 24) * kGB;
    s.step_delay = r.Uniform(0.002, 0.03);
    s.crc_base = r.Chance(0.05) ? r.Uniform(0.0005, 0.005) : 0;
    for (int g = 0; g < o_.gpus; ++g) {
      GpuStatic& gs = s.gpu[g];
      gs.speed = r.LogNormal(0.015);
      gs.p_idle = 68 + 6 * r.Uniform();
      gs.p_spin = (150 + 20 * r.Uniform());
      gs.p_compute = 640 * r.LogNormal(0.035);
      gs.temp_off = 2 + (g % 4) * 1.5 + 1.5 * r.Normal();
      gs.r_th = 0.052 * r.LogNormal(0.05);
      gs.nv_rate = 55 * kGB * r.LogNormal(0.03);
    }
    for (int c = 0; c < o_.cpus; ++c) s.cpu_weight.push_back(r.Uniform(0.3, 1.7));
    naming_.machines.push_back(fmt::format("gpu-node-{:0{}}", m, width));
    naming_.stage_of.push_back(s.stage);
  }
  // Job constants: iteration length, gradient accumulation, all-reduce share and overlap.
  microbatches_ = std::array{4, 8, 16}[r.Int(0, 2)];
  base_iter_ = r.Uniform(0.9, 2.4);
  double sum_w = 0;
  for (double w : stage_w_) sum_w += w;
  mb_time_ = base_iter_ / (microbatches_ - 1 + sum_w);
  ar_total_ = base_iter_ * r.Uniform(0.15, 0.35);
  ar_overlap_ = r.Uniform(0.5, 0.85);
  opt_time_ = base_iter_ * r.Uniform(0.02, 0.05);
  if (r.Chance(0.6)) ramp_at_ = t0_ + o_.duration_s * r.Uniform(0.1, 0.4);
}

void Job::DrawJobEvents() {
  Rng r(o_.seed, 20);
  // Checkpoints every 10-25 minutes, evaluation every 15-40 minutes, occasional stalls and hangs.
  const double ckpt_every = r.Uniform(600, 1500);
  for (double t = t0_ + r.Uniform(0.4, 1.0) * ckpt_every; t < t_end_; t += ckpt_every) {
    jevents_.push_back({JobEventKind::kCheckpoint, t, r.Uniform(20, 120)});
  }
  const double eval_every = r.Uniform(900, 2400);
  for (double t = t0_ + r.Uniform(0.5, 1.0) * eval_every; t < t_end_; t += eval_every) {
    jevents_.push_back({JobEventKind::kEval, t, r.Uniform(30, 150)});
  }
  for (double t = t0_ + r.Exponential(1800); t < t_end_; t += r.Exponential(1800)) {
    jevents_.push_back({JobEventKind::kLoadStall, t, r.Uniform(5, 60)});
  }
  for (double t = t0_ + r.Exponential(5400); t < t_end_; t += r.Exponential(5400)) {
    jevents_.push_back({JobEventKind::kCollectiveHang, t, r.Uniform(30, 300)});
  }
  if (!std::isnan(ramp_at_)) jevents_.push_back({JobEventKind::kBatchRamp, ramp_at_, 0});
  std::sort(jevents_.begin(), jevents_.end(),
            [](const JobEvent& a, const JobEvent& b) { return a.time < b.time; });
}

void Job::DrawFaults() {
  Rng r(o_.seed, 30);
  std::vector<FaultKind> pool;
  for (size_t k = 0; k < kFaultNames.size(); ++k) {
    const auto kind = static_cast<FaultKind>(k);
    const bool listed =
        o_.kinds.empty() ||
        std::find(o_.kinds.begin(), o_.kinds.end(), std::string(kFaultNames[k])) != o_.kinds.end();
    if (!listed) continue;
    if (kind == FaultKind::kSlowByPlacementThenWorse && o_.stages < 2) continue;
    pool.push_back(kind);
  }
  fault_of_.assign(o_.machines, -1);
  if (pool.empty() || o_.faults == 0) return;
  const auto resolve = [&](double f) { return f <= 1.0 ? f * o_.duration_s : f; };
  const double from = t0_ + resolve(o_.fault_from), to = t0_ + resolve(o_.fault_to);
  // Heavier-than-median stages, for slow_by_placement_then_worse.
  std::vector<double> sorted_w = stage_w_;
  std::sort(sorted_w.begin(), sorted_w.end());
  const double median_w = sorted_w[sorted_w.size() / 2];
  for (int i = 0; i < o_.faults; ++i) {
    Fault f;
    f.kind = pool[r.Int(0, static_cast<int>(pool.size()) - 1)];
    int m = 0;
    do {
      m = r.Int(0, o_.machines - 1);
      if (f.kind == FaultKind::kSlowByPlacementThenWorse) {
        // A machine of a stage that is already slow by placement.
        int tries = 0;
        while (stage_w_[ms_[m].stage] < median_w && tries++ < 1000) m = r.Int(0, o_.machines - 1);
      }
    } while (fault_of_[m] >= 0);
    f.machine = m;
    f.drawn_onset = r.Uniform(from, to);
    f.gpu = r.Int(0, o_.gpus - 1);
    f.hca = r.Int(0, kHcas - 1);
    switch (f.kind) {
      case FaultKind::kStraggler:
        f.size = r.Uniform(o_.straggler_min, o_.straggler_max);
        if (r.Chance(0.3)) f.gpu = -1;
        break;
      case FaultKind::kStragglerGradual:
        f.size = r.Uniform(o_.straggler_min, o_.straggler_max);
        f.ramp_s = r.Uniform(120, 1200);
        if (r.Chance(0.2)) f.gpu = -1;
        break;
      case FaultKind::kNvlinkDegraded:
        f.size = r.Uniform(0.03, 0.10);  // job slow-down
        f.crc_rate = std::exp(r.Uniform(std::log(2.0), std::log(300.0)));
        break;
      case FaultKind::kXidFatal:
        f.xid = std::array{48, 63, 64, 74, 79, 94, 95}[r.Int(0, 6)];
        break;
      case FaultKind::kGpuLost:
        f.xid = 79;
        break;
      case FaultKind::kHang:
        f.host_variant = r.Chance(0.4);
        break;
      case FaultKind::kNicFlap: {
        double t = 0;
        const int flaps = r.Int(1, 4);
        for (int k = 0; k < flaps; ++k) {
          const double down = r.Uniform(10, 180);
          f.downs.emplace_back(t, t + down);
          t += down + r.Uniform(10, 300);
        }
        if (r.Chance(0.4)) f.downs.back().second = std::numeric_limits<double>::infinity();
        break;
      }
      case FaultKind::kPcieDowngrade:
        f.size = r.Uniform(0.005, 0.03);
        break;
      case FaultKind::kHostSlow:
        f.size = r.Uniform(0.3, 2.0);
        break;
      case FaultKind::kSlowByPlacementThenWorse:
        f.size = r.Uniform(1.0, 3.0);  // a further 2-4x
        break;
      case FaultKind::kMachineDown:
      case FaultKind::kCount:
        break;
    }
    fault_of_[m] = static_cast<int>(faults_.size());
    faults_.push_back(f);
  }
  // A fatal fault stops the job for the watchdog and a restart (about 15 minutes), during which
  // stragglers cannot show: the drawn onsets go to the non-fatal faults first.
  std::vector<double> onsets;
  for (const Fault& f : faults_) onsets.push_back(f.drawn_onset);
  std::sort(onsets.begin(), onsets.end());
  std::vector<size_t> order(faults_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return IsFatal(faults_[a].kind) < IsFatal(faults_[b].kind);
  });
  for (size_t i = 0; i < order.size(); ++i) faults_[order[i]].drawn_onset = onsets[i];
}

void Job::DrawBenign() {
  mevents_.resize(o_.machines);
  const double hours = o_.duration_s / 3600.0;
  const double dcgm_iv = o_.dcgm_interval_s, node_iv = o_.node_interval_s;
  for (int m = 0; m < o_.machines; ++m) {
    Rng r(o_.seed, 40000 + m);
    auto& ev = mevents_[m];
    const auto count = [&](double rate) {
      // Poisson by exponential gaps.
      int n = 0;
      for (double t = r.Exponential(1.0 / rate); t < hours; t += r.Exponential(1.0 / rate)) ++n;
      return n;
    };
    const int n = o_.benign_rate > 0 ? count(o_.benign_rate) : 0;
    for (int i = 0; i < n; ++i) {
      MachineEvent e{};
      e.kind = static_cast<BenignKind>(r.Int(0, 4));
      e.start = t0_ + r.Uniform(0, o_.duration_s);
      e.end = e.start + r.Uniform(o_.benign_min_s, o_.benign_max_s);
      e.gpu = r.Int(0, o_.gpus - 1);
      switch (e.kind) {
        case BenignKind::kCron:
          e.size = r.Uniform(0.2, 0.6);
          break;
        case BenignKind::kNoisyNeighbour:
          e.size = r.Uniform(0.03, 0.12);
          break;
        case BenignKind::kClockDip:
          e.size = r.Uniform(0.08, 0.3);
          break;
        case BenignKind::kNetBurst:
          e.size = r.Uniform(3, 20) * kGB;
          break;
        case BenignKind::kExporterHiccup: {
          e.exporter = r.Chance(0.5) ? Exporter::kDcgm : Exporter::kNode;
          const double iv = e.exporter == Exporter::kDcgm ? dcgm_iv : node_iv;
          e.end = e.start + iv * r.Int(1, 2);
          break;
        }
        case BenignKind::kExporterRestart:
          break;
      }
      ev.push_back(e);
    }
    const int restarts = count(kRestartPerHour);
    for (int i = 0; i < restarts; ++i) {
      MachineEvent e{};
      e.kind = BenignKind::kExporterRestart;
      e.exporter = r.Chance(0.5) ? Exporter::kDcgm : Exporter::kNode;
      e.start = t0_ + r.Uniform(0, o_.duration_s);
      e.end = e.start + r.Uniform(5, 30);
      ev.push_back(e);
    }
    std::sort(ev.begin(), ev.end(),
              [](const MachineEvent& a, const MachineEvent& b) { return a.start < b.start; });
    for (const auto& e : ev) {
      std::string kind(kBenignNames[static_cast<int>(e.kind)]);
      if (e.kind == BenignKind::kExporterHiccup || e.kind == BenignKind::kExporterRestart) {
        kind += e.exporter == Exporter::kDcgm ? ":dcgm" : ":node";
      } else if (e.kind == BenignKind::kClockDip) {
        kind += fmt::format(":gpu{}", e.gpu);
      }
      benign_.push_back({naming_.machines[m], e.start, std::min(e.end, t_end_), kind});
    }
  }
}

// ------------------------------------------------------------------------------------------------
// Modifiers of one machine at one instant: its fault (if materialised) and benign events.

Mods Job::ModsAt(int m, double t) const {
  Mods mods;
  mods.power_scale.fill(1.0);
  mods.hca_up.fill(true);
  const int fi = fault_of_[m];
  if (fi >= 0) {
    const Fault& f = faults_[fi];
    if (!std::isnan(f.onset) && t >= f.onset) {
      const double since = t - f.onset;
      switch (f.kind) {
        case FaultKind::kStraggler:
        case FaultKind::kStragglerGradual: {
          double size = f.size;
          if (f.kind == FaultKind::kStragglerGradual) size *= std::min(1.0, since / f.ramp_s);
          if (f.gpu < 0) {
            for (int g = 0; g < o_.gpus; ++g) mods.slow[g] += size;
          } else {
            mods.slow[f.gpu] += size;
          }
          break;
        }
        case FaultKind::kSlowByPlacementThenWorse:
          for (int g = 0; g < o_.gpus; ++g) mods.slow[g] += f.size;
          break;
        case FaultKind::kNvlinkDegraded:
          mods.nv_degraded[f.gpu] = true;
          mods.nv_penalty += f.size;
          break;
        case FaultKind::kPcieDowngrade:
          mods.pcie_half[f.gpu] = true;
          mods.nv_penalty += f.size;  // slower host copies: a small compute stretch
          break;
        case FaultKind::kHostSlow:
          mods.host_stretch += 0.5 * f.size;
          mods.data_extra += 0.5 * f.size;
          mods.cpu_extra += 0.35 + 0.2 * std::min(1.0, f.size);
          break;
        case FaultKind::kNicFlap:
          for (const auto& [a, b] : f.downs) {
            if (since >= a && since < b) mods.hca_up[f.hca] = false;
          }
          break;
        default:
          break;
      }
    }
  }
  for (const MachineEvent& e : mevents_[m]) {
    if (e.start > t) break;
    if (t >= e.end) continue;
    switch (e.kind) {
      case BenignKind::kCron:
        mods.cpu_extra += e.size;
        break;
      case BenignKind::kNoisyNeighbour:
        mods.host_factor *= 1 + e.size;
        mods.cpu_extra += 0.3;
        break;
      case BenignKind::kClockDip:
        mods.slow[e.gpu] += e.size;
        mods.power_scale[e.gpu] *= 1 - 0.6 * e.size;
        break;
      default:
        break;
    }
  }
  return mods;
}

// ------------------------------------------------------------------------------------------------
// Segment generation.

void Job::EnsureUntil(double t) {
  while (segs_.empty() || segs_.back().end <= t) GenerateNext();
  // Keep what the longest scrape window can still need.
  const double keep = t - std::max({o_.interval_s, o_.dcgm_interval_s, o_.node_interval_s}) - 5.0;
  while (segs_.size() > 2 && segs_[1].end < keep) segs_.pop_front();
}

void Job::PushPause(SegKind kind, double s, double e, int culprit, State culprit_state,
                    bool continued) {
  Segment seg;
  seg.kind = kind;
  seg.start = s;
  seg.end = e;
  seg.culprit = culprit;
  seg.culprit_state = culprit_state;
  seg.role = role_;
  if (culprit >= 0 && seg.role[culprit] == Role::kNormal) seg.role[culprit] = Role::kCulprit;
  seg.x.assign(o_.machines, 0.0f);
  // Machines enter a job-wide pause within a second or two of each other (a pause continued
  // from the segment before has been entered already).
  if (kind != SegKind::kInit && kind != SegKind::kDead && !continued) {
    const double spread = kind == SegKind::kFatalStall ? 3.0 : 1.5;
    for (auto& x : seg.x) x = static_cast<float>(gen_rng_.Uniform(0, spread));
  }
  segs_.push_back(std::move(seg));
}

void Job::Materialise(double s) {
  for (Fault& f : faults_) {
    if (std::isnan(f.onset) && f.drawn_onset <= s && !IsFatal(f.kind) &&
        role_[f.machine] == Role::kNormal) {
      f.onset = s;
      if (f.kind == FaultKind::kNicFlap && std::isfinite(f.downs.back().second)) {
        f.end = s + f.downs.back().second;
      }
    }
  }
}

// While the job is not training, a fault whose signs are in hardware series (link state, link
// width, CRC or XID counters, a GPU or machine gone, host CPU) still starts when drawn; the others
// (stragglers, hangs) wait for training to resume. A GPU or machine lost takes its machine out of
// the job, which a segment carries from its start: it is materialised once `now` has reached its
// drawn onset (the segment before ends there: NextRemoval).
void Job::MaterialiseVisible(double until, double now) {
  for (Fault& f : faults_) {
    if (!std::isnan(f.onset) || f.drawn_onset >= until || role_[f.machine] != Role::kNormal) {
      continue;
    }
    switch (f.kind) {
      case FaultKind::kNicFlap:
      case FaultKind::kPcieDowngrade:
      case FaultKind::kNvlinkDegraded:
      case FaultKind::kHostSlow:
        f.onset = f.drawn_onset;
        if (f.kind == FaultKind::kNicFlap && std::isfinite(f.downs.back().second)) {
          f.end = f.onset + f.downs.back().second;
        }
        break;
      case FaultKind::kGpuLost:
      case FaultKind::kXidFatal:
      case FaultKind::kMachineDown:
        // The job is already down: the machine is left out of the restart.
        if (f.drawn_onset > now) break;
        f.onset = f.drawn_onset;
        role_[f.machine] = f.kind == FaultKind::kMachineDown ? Role::kDown : Role::kExcluded;
        steps_.push({f.onset, f.machine, kNaN});
        break;
      default:
        break;
    }
  }
}

// The earliest drawn onset in (s, until) of a fault that takes its machine out of the job (a GPU
// or machine lost) while the job is down; `until` if none.
double Job::NextRemoval(double s, double until) const {
  double next = until;
  for (const Fault& f : faults_) {
    const bool removes = f.kind == FaultKind::kGpuLost || f.kind == FaultKind::kXidFatal ||
                         f.kind == FaultKind::kMachineDown;
    if (removes && std::isnan(f.onset) && role_[f.machine] == Role::kNormal && f.drawn_onset > s &&
        f.drawn_onset < next) {
      next = f.drawn_onset;
    }
  }
  return next;
}

void Job::GenerateNext() {
  const double s = cursor_;
  // After a fatal fault: stall until the watchdog, dead until the restart, then init.
  if (!std::isnan(kill_at_)) {
    const double phase_end = s < kill_at_ ? kill_at_ : s < restart_at_ ? restart_at_ : train_at_;
    MaterialiseVisible(phase_end, s);
    // A phase is cut where a drawn fault takes a machine out, so that it goes at its onset.
    const double end = NextRemoval(s, phase_end);
    if (s < kill_at_) {
      PushPause(SegKind::kFatalStall, s, end, culprit_, culprit_state_,
                /*continued=*/s > fatal_onset_);
      cursor_ = end;
      if (end < kill_at_) return;
      // Every rank's process ends at the kill: training_step_seconds goes away.
      for (int m = 0; m < o_.machines; ++m) steps_.push({kill_at_, m, kNaN});
      benign_.push_back({"*", kill_at_, restart_at_, "job_killed_by_watchdog"});
      return;
    }
    if (culprit_ >= 0) {
      const Fault& f = faults_[fault_of_[culprit_]];
      role_[culprit_] = f.kind == FaultKind::kMachineDown ? Role::kDown : Role::kExcluded;
      culprit_ = -1;
    }
    if (s < restart_at_) {
      PushPause(SegKind::kDead, s, end);
      cursor_ = end;
      return;
    }
    PushPause(SegKind::kInit, s, end);
    if (s == restart_at_) benign_.push_back({"*", restart_at_, train_at_, "job_restart_init"});
    cursor_ = end;
    if (end < train_at_) return;
    train_start_ = train_at_;
    first_iter_ = true;
    kill_at_ = restart_at_ = train_at_ = kNaN;
    return;
  }
  if (s == t0_) {
    // Job start: process start, NCCL init, checkpoint load.
    const double init = gen_rng_.Uniform(30, 90);
    // (A GPU or machine lost during the job's first init is out from its start.)
    MaterialiseVisible(s + init, s + init);
    PushPause(SegKind::kInit, s, s + init);
    benign_.push_back({"*", s, s + init, "job_init"});
    cursor_ = s + init;
    train_start_ = cursor_;
    return;
  }
  // Job-wide events whose time has come (skipped if they fell while the job was down).
  while (next_jevent_ < jevents_.size() && jevents_[next_jevent_].time <= s) {
    const JobEvent& je = jevents_[next_jevent_++];
    if (s - je.time > 30) continue;
    if (je.kind == JobEventKind::kBatchRamp) {
      benign_.push_back({"*", s, s, std::string(kJobEventNames[static_cast<int>(je.kind)])});
      continue;
    }
    const SegKind kind = je.kind == JobEventKind::kCheckpoint  ? SegKind::kCheckpoint
                         : je.kind == JobEventKind::kEval      ? SegKind::kEval
                         : je.kind == JobEventKind::kLoadStall ? SegKind::kLoadStall
                                                               : SegKind::kCollHang;
    PushPause(kind, s, s + je.duration);
    benign_.push_back(
        {"*", s, s + je.duration, std::string(kJobEventNames[static_cast<int>(je.kind)])});
    cursor_ = s + je.duration;
    return;
  }
  // The next fatal fault, if any.
  double fatal_at = std::numeric_limits<double>::infinity();
  int fatal = -1;
  for (size_t i = 0; i < faults_.size(); ++i) {
    const Fault& f = faults_[i];
    if (IsFatal(f.kind) && std::isnan(f.onset) && role_[f.machine] == Role::kNormal &&
        f.drawn_onset < fatal_at) {
      fatal_at = f.drawn_onset;
      fatal = static_cast<int>(i);
    }
  }
  Materialise(s);
  if (fatal >= 0 && fatal_at <= s + 1e-9) {
    Fault& f = faults_[fatal];
    f.onset = s;
    fatal_onset_ = s;
    culprit_ = f.machine;
    switch (f.kind) {
      case FaultKind::kHang:
        culprit_state_ = f.host_variant ? State::kHostWait : State::kHungSpin;
        break;
      case FaultKind::kMachineDown:
        culprit_state_ = State::kAbsent;
        role_[f.machine] = Role::kDown;
        break;
      default:
        culprit_state_ = State::kIdle;  // the process died
        break;
    }
    kill_at_ = s + o_.watchdog_s;
    restart_at_ = kill_at_ + gen_rng_.Uniform(60, 180);
    train_at_ = restart_at_ + gen_rng_.Uniform(30, 90);
    if (f.kind != FaultKind::kHang && f.kind != FaultKind::kMachineDown) {
      // The failing rank's process ends at once.
      steps_.push({s, f.machine, kNaN});
    }
    if (f.kind == FaultKind::kMachineDown) steps_.push({s, f.machine, kNaN});
    GenerateNext();
    return;
  }
  PushIteration(s, fatal_at);
}

void Job::PushIteration(double s, double limit) {
  const int n = o_.machines, ng = o_.gpus;
  Segment seg;
  seg.kind = SegKind::kIter;
  seg.start = s;
  seg.role = role_;
  seg.x.resize(n);
  seg.eff.resize(n);
  seg.busy.resize(static_cast<size_t>(n) * ng);
  const int mb = (!std::isnan(ramp_at_) && s < ramp_at_) ? microbatches_ / 2 : microbatches_;
  // Warm-up after each (re)start: the first iteration compiles and autotunes, the next ones are
  // slower while caches and the allocator settle.
  double warm = 1.0 + 0.6 * std::exp(-(s - train_start_) / 90.0);
  if (first_iter_) warm *= gen_rng_.Uniform(4, 10);
  first_iter_ = false;
  std::vector<double> stage_max(o_.stages, 0.0);
  std::vector<double> own(n, 0.0);
  double x_max = 0;
  int up_min = kHcas;
  for (int m = 0; m < n; ++m) {
    if (role_[m] != Role::kNormal) continue;
    const MachineStatic& st = ms_[m];
    const Mods mods = ModsAt(m, s);
    drift_[m] = 0.995 * drift_[m] + 0.1 * 0.01 * gen_rng_.Normal();
    double noise = 1 + 0.012 * gen_rng_.Normal() + drift_[m];
    if (gen_rng_.Chance(0.004)) noise += gen_rng_.Uniform(0.1, 0.3);  // GC pause, Python hiccup
    const double nominal = mb * mb_time_ * stage_w_[st.stage] * st.hw * warm;
    double c_max = 0;
    for (int g = 0; g < ng; ++g) {
      const double c = nominal * st.gpu[g].speed * (1 + mods.slow[g]) * noise * mods.host_factor *
                       (1 + mods.host_stretch);
      seg.busy[static_cast<size_t>(m) * ng + g] = static_cast<float>(c);
      c_max = std::max(c_max, c);
    }
    // Tensor parallelism inside the machine: every GPU waits for the slowest each layer.
    const double c_m = c_max * (1 + mods.nv_penalty);
    const double x = 0.004 + 0.003 * std::abs(gen_rng_.Normal()) + mods.data_extra * nominal;
    seg.x[m] = static_cast<float>(x);
    seg.eff[m] = static_cast<float>(1.0 / (1 + mods.host_stretch));
    x_max = std::max(x_max, x);
    stage_max[st.stage] = std::max(stage_max[st.stage], c_m / mb);
    own[m] = x + c_m;
    int up = 0;
    for (bool u : mods.hca_up) up += u;
    up_min = std::min(up_min, up);
  }
  // 1F1B pipeline: the slowest stage sets the pace, plus filling and draining the pipeline.
  double slowest = 0, sum = 0;
  for (double p : stage_max) {
    slowest = std::max(slowest, p);
    sum += p;
  }
  const double pipe = (mb - 1) * slowest + sum;
  const double bw_factor = kHcas / static_cast<double>(std::max(1, up_min));
  const double ar = (1 - ar_overlap_) * ar_total_ * bw_factor * (1 + 0.03 * gen_rng_.Normal());
  const double opt = opt_time_ * (1 + 0.05 * std::abs(gen_rng_.Normal()));
  seg.x_max = x_max;
  seg.pipe = pipe;
  seg.allreduce = std::max(0.0, ar);
  seg.opt = opt;
  // Per unit of machine bandwidth: the all-reduce bytes, partly overlapped with the pipe.
  seg.ib_pipe_rate = ar_overlap_ * ar_total_ / pipe;
  seg.ib_ar_rate = 1.0 / bw_factor;
  double end = s + x_max + pipe + seg.allreduce + opt;
  const bool cut = limit < end;
  seg.end = cut ? std::max(limit, s + 1e-3) : end;
  if (!cut) {
    for (int m = 0; m < n; ++m) {
      if (role_[m] != Role::kNormal) continue;
      const double step = own[m] + opt;
      steps_.push({end + ms_[m].step_delay * (0.5 + gen_rng_.Uniform()), m, step});
    }
  }
  cursor_ = seg.end;
  segs_.push_back(std::move(seg));
}

// The phases of machine m inside seg, clipped to [a, b].
int Job::Phases(const Segment& seg, int m, double a, double b, std::array<Phase, 6>& out) const {
  int n = 0;
  const auto add = [&](double p0, double p1, State st) {
    p0 = std::max(p0, a);
    p1 = std::min(p1, b);
    if (p1 > p0) out[n++] = {p0, p1, st};
  };
  const double s = seg.start, e = seg.end;
  const Role role = seg.role[m];
  if (role == Role::kDown) {
    add(s, e, State::kAbsent);
    return n;
  }
  if (role == Role::kExcluded) {
    add(s, e, State::kIdle);
    return n;
  }
  if (role == Role::kCulprit) {
    add(s, e, seg.culprit_state);
    return n;
  }
  const double entry = s + seg.x[m];
  switch (seg.kind) {
    case SegKind::kIter: {
      const double p0 = s + seg.x_max, p1 = p0 + seg.pipe, p2 = p1 + seg.allreduce;
      add(s, entry, State::kHostWait);
      add(entry, p0, State::kSpin);
      add(p0, std::min(p1, e), State::kPipe);
      add(p1, std::min(p2, e), State::kAllReduce);
      add(p2, e, State::kOptimizer);
      break;
    }
    case SegKind::kInit:
      add(s, e, State::kInit);
      break;
    case SegKind::kDead:
      add(s, e, State::kIdle);
      break;
    case SegKind::kCheckpoint:
      add(s, entry, State::kAllReduce);
      add(entry, e, State::kCheckpoint);
      break;
    case SegKind::kEval:
      add(s, entry, State::kAllReduce);
      add(entry, e, State::kEval);
      break;
    case SegKind::kLoadStall:
      add(s, entry, State::kAllReduce);
      add(entry, e, State::kHostWait);
      break;
    case SegKind::kCollHang:
    case SegKind::kFatalStall:
      add(s, entry, State::kPipe);
      add(entry, e, State::kSpin);
      break;
  }
  return n;
}

GpuRates Job::RatesGpu(const Segment& seg, int m, int g, State st, const Mods& mods) const {
  const GpuStatic& gs = ms_[m].gpu[g];
  GpuRates r;
  const double ib_per_gpu = ms_[m].ib_bw / o_.gpus;
  switch (st) {
    case State::kAbsent:
    case State::kIdle:
      r.power = gs.p_idle;
      r.pcie_tx = r.pcie_rx = 2e6;
      break;
    case State::kHostWait:
      r.power = gs.p_idle + 25;
      r.pcie_rx = 0.3 * kGB;
      break;
    case State::kSpin:
      r.util = 100;
      r.gr = 0.97;
      r.tensor = 0.0;
      r.power = gs.p_spin;
      r.pcie_tx = r.pcie_rx = 5e6;
      break;
    case State::kHungSpin:
      r.util = 100;
      r.gr = 0.99;
      r.power = gs.p_spin + 35;
      break;
    case State::kPipe: {
      const double beta =
          seg.kind == SegKind::kIter
              ? std::min(1.0, seg.busy[static_cast<size_t>(m) * o_.gpus + g] / seg.pipe)
              : 0.85;
      const double eff = seg.kind == SegKind::kIter ? seg.eff[m] : 1.0;
      const double active = beta * eff;  // kernels resident while computing
      r.util = 100 * (1 - beta * (1 - eff));
      r.gr = 0.97 * (1 - beta * (1 - eff));
      r.tensor = active * ms_[m].tensor_eff;
      r.power = gs.p_spin + active * (gs.p_compute - gs.p_spin);
      r.nv_tx = r.nv_rx = active * gs.nv_rate;
      r.pcie_rx = 1.2 * kGB + seg.ib_pipe_rate * ib_per_gpu * 0.5;
      r.pcie_tx = 0.2 * kGB + seg.ib_pipe_rate * ib_per_gpu * 0.5;
      if (o_.stages > 1) {
        r.pcie_rx += 0.4 * kGB;
        r.pcie_tx += 0.4 * kGB;
      }
      break;
    }
    case State::kAllReduce:
      r.util = 100;
      r.gr = 0.98;
      r.tensor = 0.01;
      r.power = gs.p_spin + 90;
      r.nv_tx = r.nv_rx = 2.2 * gs.nv_rate;
      r.pcie_tx = r.pcie_rx = seg.ib_ar_rate * ib_per_gpu;
      break;
    case State::kOptimizer:
      r.util = 100;
      r.gr = 0.95;
      r.tensor = 0.03;
      r.power = 0.6 * gs.p_compute;
      break;
    case State::kCheckpoint:
      r.util = 4;
      r.gr = 0.03;
      r.power = gs.p_idle + 45;
      r.pcie_tx = 11 * kGB;
      r.pcie_rx = 0.1 * kGB;
      break;
    case State::kEval:
      r.util = 100;
      r.gr = 0.9;
      r.tensor = 0.7 * ms_[m].tensor_eff;
      r.power = 0.75 * gs.p_compute;
      r.nv_tx = r.nv_rx = 0.5 * gs.nv_rate;
      r.pcie_rx = 0.5 * kGB;
      break;
    case State::kInit:
      r.util = 8;
      r.gr = 0.05;
      r.power = gs.p_idle + 30;
      r.pcie_rx = 9 * kGB;
      r.pcie_tx = 0.1 * kGB;
      break;
  }
  r.power *= mods.power_scale[g];
  if (mods.nv_degraded[g]) {
    // Traffic the NVLink cannot carry goes through host memory.
    const double lost = 0.95 * r.nv_tx;
    r.nv_tx *= 0.05;
    r.nv_rx *= 0.05;
    r.pcie_tx += 0.3 * lost;
    r.pcie_rx += 0.3 * lost;
  }
  if (mods.pcie_half[g]) {
    r.pcie_tx *= 0.5;
    r.pcie_rx *= 0.5;
  }
  return r;
}

HostRates Job::RatesHost(const Segment& seg, int m, State st, const Mods& mods) const {
  const MachineStatic& ms = ms_[m];
  HostRates h;
  double ib = 0.02 * kGB, ib_tx_extra = 0, ib_rx_extra = 0;
  switch (st) {
    case State::kAbsent:
    case State::kIdle:
      h.user = 0.01;
      h.sys = 0.01;
      break;
    case State::kHostWait:
    case State::kSpin:
    case State::kHungSpin:
    case State::kOptimizer:
      h.user = ms.cpu_base;
      h.sys = 0.04;
      h.iowait = 0.005;
      if (st == State::kHostWait && seg.kind == SegKind::kLoadStall) h.iowait = 0.15;
      break;
    case State::kPipe:
      h.user = ms.cpu_base;
      h.sys = 0.04;
      h.iowait = 0.005;
      ib += seg.ib_pipe_rate * ms.ib_bw + (o_.stages > 1 ? 3 * kGB : 0);
      break;
    case State::kAllReduce:
      h.user = ms.cpu_base;
      h.sys = 0.05;
      ib += seg.ib_ar_rate * ms.ib_bw;
      break;
    case State::kCheckpoint:
      h.user = ms.cpu_base + 0.25;
      h.sys = 0.12;
      h.iowait = 0.08;
      ib_tx_extra = 7 * kGB;
      break;
    case State::kEval:
      h.user = ms.cpu_base * 0.7;
      h.sys = 0.03;
      ib = 0.5 * kGB;
      break;
    case State::kInit:
      h.user = 0.35;
      h.sys = 0.1;
      h.iowait = 0.1;
      ib_rx_extra = 6 * kGB;
      break;
  }
  h.user += mods.cpu_extra;
  const double total = h.user + h.sys + h.iowait;
  if (total > 0.98) {
    const double k = 0.98 / total;
    h.user *= k;
    h.sys *= k;
    h.iowait *= k;
  }
  int up = 0;
  for (bool u : mods.hca_up) up += u;
  for (int k = 0; k < kHcas; ++k) {
    if (!mods.hca_up[k] || up == 0) continue;
    h.ib_rx[k] = (ib + ib_rx_extra) / up;
    h.ib_tx[k] = (ib + ib_tx_extra) / up;
  }
  return h;
}

// Integrals over [a, b] of machine m's rates (value x seconds).
void Job::Integrate(int m, double a, double b, bool gpus, std::array<GpuRates, kMaxGpus>* g_acc,
                    HostRates* h_acc) const {
  std::array<Phase, 6> ph;
  for (const Segment& seg : segs_) {
    if (seg.end <= a) continue;
    if (seg.start >= b) break;
    const int n = Phases(seg, m, a, b, ph);
    if (n == 0) continue;
    const Mods mods = ModsAt(m, std::max(seg.start, a));
    for (int i = 0; i < n; ++i) {
      const double dt = ph[i].b - ph[i].a;
      if (gpus) {
        for (int g = 0; g < o_.gpus; ++g) {
          const GpuRates r = RatesGpu(seg, m, g, ph[i].state, mods);
          GpuRates& acc = (*g_acc)[g];
          acc.util += r.util * dt;
          acc.gr += r.gr * dt;
          acc.tensor += r.tensor * dt;
          acc.power += r.power * dt;
          acc.nv_tx += r.nv_tx * dt;
          acc.nv_rx += r.nv_rx * dt;
          acc.pcie_tx += r.pcie_tx * dt;
          acc.pcie_rx += r.pcie_rx * dt;
        }
      }
      if (h_acc != nullptr) {
        const HostRates r = RatesHost(seg, m, ph[i].state, mods);
        h_acc->user += r.user * dt;
        h_acc->sys += r.sys * dt;
        h_acc->iowait += r.iowait * dt;
        for (int k = 0; k < kHcas; ++k) {
          h_acc->ib_rx[k] += r.ib_rx[k] * dt;
          h_acc->ib_tx[k] += r.ib_tx[k] * dt;
        }
      }
    }
  }
  if (h_acc != nullptr) {
    // Network bursts are independent of the job's phases.
    for (const MachineEvent& e : mevents_[m]) {
      if (e.start >= b) break;
      if (e.kind != BenignKind::kNetBurst || e.end <= a) continue;
      const double dt = std::min(e.end, b) - std::max(e.start, a);
      for (int k = 0; k < kHcas; ++k) {
        h_acc->ib_rx[k] += e.size / kHcas * dt;
        h_acc->ib_tx[k] += e.size / kHcas * 0.3 * dt;
      }
    }
  }
}

// ------------------------------------------------------------------------------------------------
// Scrapes.

bool Job::Missed(int m, Exporter e, double t, Rng& rng) {
  bool missed = rng.Chance(kScrapeMissP);
  if (missed) {
    benign_.push_back({naming_.machines[m], t, t,
                       e == Exporter::kDcgm   ? "scrape_failure:dcgm"
                       : e == Exporter::kNode ? "scrape_failure:node"
                                              : "scrape_failure:trainer"});
  }
  for (const MachineEvent& ev : mevents_[m]) {
    if (ev.start > t) break;
    if (t >= ev.end || ev.exporter != e) continue;
    if (ev.kind == BenignKind::kExporterHiccup) missed = true;
    if (ev.kind == BenignKind::kExporterRestart) {
      missed = true;
      restart_pending_[m][static_cast<int>(e)] = true;
    }
  }
  return missed;
}

void Job::ScrapeDcgm(int m, double t, bool missed) {
  const int ng = o_.gpus;
  const Layout& L = naming_.layout;
  // dcgm-exporter reports its latest collection, made on its own 1 s cycle; activity gauges are
  // averages over the collection interval before it.
  const double phase = ms_[m].step_delay * 37.0;
  const double tc = phase + std::floor((t - phase) / kDcgmWindowS) * kDcgmWindowS;
  std::array<GpuRates, kMaxGpus> acc{};
  // Before the first collection the window is what there is since the start.
  const double wa = std::max(tc - kDcgmWindowS, t0_);
  const double wb = std::max(tc, t0_ + kDcgmWindowS);
  Integrate(m, wa, wb, true, &acc, nullptr);
  Rng& rng = target_rng_[m * 3];
  const bool reset = restart_pending_[m][0] && !missed;
  if (reset) restart_pending_[m][0] = false;
  const int fi = fault_of_[m];
  const Fault* f = fi >= 0 ? &faults_[fi] : nullptr;
  const bool fault_on = f != nullptr && !std::isnan(f->onset) && t >= f->onset;
  for (int g = 0; g < ng; ++g) {
    const size_t gi = static_cast<size_t>(m) * ng + g;
    const GpuStatic& gs = ms_[m].gpu[g];
    const GpuRates& r = acc[g];
    const double w = wb - wa;
    // Temperature: first-order lag on power, tau 45 s.
    const double target = ms_[m].inlet + gs.temp_off + gs.r_th * r.power / w;
    if (std::isnan(temp_[gi])) {
      temp_[gi] = ms_[m].inlet + gs.temp_off + gs.r_th * gs.p_idle;
      temp_t_[gi] = t0_;
    }
    const double dt = std::max(0.0, t - temp_t_[gi]);
    temp_[gi] += (target - temp_[gi]) * (1 - std::exp(-dt / 45.0));
    temp_t_[gi] = t;
    // Counters advance whether or not the scrape succeeds.
    double crc_rate = ms_[m].crc_base;
    if (fault_on && f->kind == FaultKind::kNvlinkDegraded && f->gpu == g) crc_rate += f->crc_rate;
    crc_cum_[gi] += crc_rate * dt * (0.5 + rng.Uniform());
    int width = 16;
    if (fault_on && f->kind == FaultKind::kPcieDowngrade && f->gpu == g) width = 8;
    if (fault_on && (f->kind == FaultKind::kXidFatal || f->kind == FaultKind::kGpuLost) &&
        f->gpu == g && xid_[gi] == 0) {
      xid_[gi] = f->xid;
      if (f->xid == 48) ecc_[gi] += 1;
    }
    if (reset) crc_base_[gi] = crc_cum_[gi];
    bool gone_now = false;
    if (fault_on && f->kind == FaultKind::kGpuLost && f->gpu == g) {
      if (gpu_gone_[gi] == 2) continue;  // fell off the bus: no series at all
      gone_now = true;
    }
    if (gone_now) {
      // The scrape that sees the XID is the last that has this GPU; it reports only the XID.
      if (!missed) {
        sink_->Sample(L.Id(m, g * kGpuMetricCount + kXid), t, xid_[gi]);
        gpu_gone_[gi] = 2;
      }
      continue;
    }
    std::array<double, kGpuMetricCount> v{};
    if (!missed) {
      v[kGpuUtil] = std::clamp(r.util / w + 0.6 * rng.Normal(), 0.0, 100.0);
      v[kPower] = std::max(20.0, r.power / w * (1 + 0.008 * rng.Normal()));
      v[kTensor] = std::clamp(r.tensor / w + 0.004 * rng.Normal(), 0.0, 1.0);
      v[kGrEngine] = std::clamp(r.gr / w + 0.004 * rng.Normal(), 0.0, 1.0);
      v[kTemp] = std::round(temp_[gi] + 0.3 * rng.Normal());
      v[kNvTx] = std::max(0.0, r.nv_tx / w * (1 + 0.01 * rng.Normal()));
      v[kNvRx] = std::max(0.0, r.nv_rx / w * (1 + 0.01 * rng.Normal()));
      v[kPcieTx] = std::max(0.0, r.pcie_tx / w * (1 + 0.02 * rng.Normal()));
      v[kPcieRx] = std::max(0.0, r.pcie_rx / w * (1 + 0.02 * rng.Normal()));
      v[kXid] = xid_[gi];
      v[kEccDbe] = ecc_[gi];
      v[kLinkWidth] = width;
      v[kLinkMaxWidth] = 16;
      v[kCrc] = std::floor(crc_cum_[gi] - crc_base_[gi]);
    } else {
      v.fill(kNaN);
    }
    for (int j = 0; j < kGpuMetricCount; ++j) {
      sink_->Sample(L.Id(m, g * kGpuMetricCount + j), t, v[j]);
    }
  }
}

void Job::ScrapeNode(int m, double t, bool missed) {
  const Layout& L = naming_.layout;
  HostRates acc{};
  const double a = node_last_[m];
  Integrate(m, a, t, false, nullptr, &acc);
  const double dt = std::max(1e-9, t - a);
  node_last_[m] = t;
  Rng& rng = target_rng_[m * 3 + 1];
  for (int k = 0; k < kHcas; ++k) {
    ib_rx_[m][k] += acc.ib_rx[k];
    ib_tx_[m][k] += acc.ib_tx[k];
  }
  const bool openmetrics = o_.format == Format::kOpenMetrics;
  if (openmetrics) {
    const MachineStatic& ms = ms_[m];
    for (int c = 0; c < o_.cpus; ++c) {
      const double wgt = ms.cpu_weight[c] * (1 + 0.05 * rng.Normal());
      const double user = std::min(0.97, acc.user / dt * wgt) * dt;
      const double sys = std::min(0.3, acc.sys / dt * wgt) * dt;
      const double iow = std::min(0.5, acc.iowait / dt * wgt) * dt;
      double* cum = &cpu_cum_[m][c * 4];
      cum[0] += user;
      cum[1] += sys;
      cum[2] += iow;
      cum[3] += std::max(0.0, dt - user - sys - iow);
    }
  }
  const bool reset = restart_pending_[m][1] && !missed;
  if (reset) {
    restart_pending_[m][1] = false;
    ib_rx_base_[m] = ib_rx_[m];
    ib_tx_base_[m] = ib_tx_[m];
    if (openmetrics) cpu_base_[m] = cpu_cum_[m];
  }
  const Mods mods = ModsAt(m, t);
  if (openmetrics) {
    for (int i = 0; i < o_.cpus * 4; ++i) {
      sink_->Sample(L.Id(m, L.cpu_base + i), t, missed ? kNaN : cpu_cum_[m][i] - cpu_base_[m][i]);
    }
  } else {
    const double busy = (acc.user + acc.sys + acc.iowait) / dt;
    const double idle = std::clamp(1 - busy + 0.01 * rng.Normal(), 0.0, 1.0);
    sink_->Sample(L.Id(m, L.cpu_base), t, missed ? kNaN : idle);
  }
  for (int k = 0; k < kHcas; ++k) {
    sink_->Sample(L.Id(m, L.ibrx_base + k), t,
                  missed ? kNaN : std::floor(ib_rx_[m][k] - ib_rx_base_[m][k]));
  }
  for (int k = 0; k < kHcas; ++k) {
    sink_->Sample(L.Id(m, L.ibtx_base + k), t,
                  missed ? kNaN : std::floor(ib_tx_[m][k] - ib_tx_base_[m][k]));
  }
  for (int k = 0; k < kHcas; ++k) {
    sink_->Sample(L.Id(m, L.up_base + k), t, missed ? kNaN : (mods.hca_up[k] ? 1.0 : 0.0));
  }
}

void Job::ScrapeTrainer(int m, double t, bool missed) {
  if (std::isnan(last_step_[m])) return;  // no process, or no step yet: no endpoint
  sink_->Sample(naming_.layout.Id(m, naming_.layout.step_local), t, missed ? kNaN : last_step_[m]);
}

void Job::FlushSteps(double t) {
  while (!steps_.empty() && steps_.top().t <= t) {
    const StepEvent e = steps_.top();
    steps_.pop();
    if (e.t >= t_end_) continue;
    last_step_[e.machine] = e.value;
    if (o_.step_export == StepExport::kEvent && !std::isnan(e.value)) {
      sink_->Advance(e.t);
      sink_->Sample(naming_.layout.Id(e.machine, naming_.layout.step_local), e.t, e.value);
    }
  }
}

void Job::Run() {
  std::filesystem::create_directories(o_.out);
  const size_t series = static_cast<size_t>(o_.machines) * naming_.layout.per_machine;
  std::unique_ptr<Sink> base;
  if (o_.format == Format::kCsv) {
    base = std::make_unique<CsvSink>(o_.out + "/telemetry.csv", naming_, o_.groups);
  } else {
    base = std::make_unique<OpenMetricsSink>(o_.out, naming_, t0_);
  }
  if (o_.grid_s > 0) {
    sink_ = std::make_unique<GridSink>(std::move(base), t0_, t_end_, o_.grid_s, series);
  } else {
    sink_ = std::move(base);
  }
  // Targets: (machine, exporter), each with its own phase in the interval.
  struct Next {
    double t;
    int target;
    bool operator>(const Next& o) const { return t != o.t ? t > o.t : target > o.target; }
  };
  std::priority_queue<Next, std::vector<Next>, std::greater<>> heap;
  const int n_targets = o_.machines * (o_.step_export == StepExport::kGauge ? 3 : 2);
  std::vector<double> iv(n_targets), phase(n_targets);
  std::vector<int64_t> k(n_targets, 0);
  Rng pr(o_.seed, 50);
  for (int i = 0; i < n_targets; ++i) {
    const int e = i % (o_.step_export == StepExport::kGauge ? 3 : 2);
    iv[i] = e == 0 ? o_.dcgm_interval_s : e == 1 ? o_.node_interval_s : o_.interval_s;
    phase[i] = o_.aligned ? 0.0 : pr.Uniform(0, iv[i]);
    heap.push({t0_ + phase[i], i});
  }
  const int per = o_.step_export == StepExport::kGauge ? 3 : 2;
  while (!heap.empty()) {
    const Next nx = heap.top();
    heap.pop();
    if (nx.t >= t_end_) continue;
    EnsureUntil(nx.t);
    FlushSteps(nx.t);
    sink_->Advance(nx.t);
    const int m = nx.target / per;
    const auto e = static_cast<Exporter>(nx.target % per);
    const int fi = fault_of_[m];
    const bool down = fi >= 0 && faults_[fi].kind == FaultKind::kMachineDown &&
                      !std::isnan(faults_[fi].onset) && nx.t >= faults_[fi].onset;
    if (!down) {
      Rng& rng = target_rng_[m * 3 + static_cast<int>(e)];
      const bool missed = Missed(m, e, nx.t, rng);
      switch (e) {
        case Exporter::kDcgm:
          ScrapeDcgm(m, nx.t, missed);
          break;
        case Exporter::kNode:
          ScrapeNode(m, nx.t, missed);
          break;
        case Exporter::kTrainer:
          ScrapeTrainer(m, nx.t, missed);
          break;
      }
    }
    ++k[nx.target];
    double next = t0_ + phase[nx.target] + static_cast<double>(k[nx.target]) * iv[nx.target];
    if (!o_.aligned) next += target_rng_[m * 3 + static_cast<int>(e)].Uniform(0.003, 0.1);
    heap.push({next, nx.target});
  }
  EnsureUntil(t_end_);
  FlushSteps(t_end_);
  sink_->Finish();
  WriteLabels();
  WriteBenign();
}

void Job::WriteLabels() const {
  Writer w(o_.out + "/labels.csv");
  // The drawn parameters behind each label, for scoring faults by the size they reached.
  Writer d(o_.out + "/faults.csv");
  auto it = std::back_inserter(w.buf());
  auto dt = std::back_inserter(d.buf());
  fmt::format_to(it, "machine,onset,kind,end\n");
  fmt::format_to(dt, "machine,onset,kind,size,ramp_s,gpu\n");
  std::vector<const Fault*> done;
  for (const Fault& f : faults_) {
    if (!std::isnan(f.onset) && f.onset < t_end_) done.push_back(&f);
  }
  std::sort(done.begin(), done.end(),
            [](const Fault* a, const Fault* b) { return a->onset < b->onset; });
  for (const Fault* f : done) {
    const std::string_view kind = kFaultNames[static_cast<int>(f->kind)];
    fmt::format_to(it, "{},", naming_.machines[f->machine]);
    AppendTime(w.buf(), f->onset);
    fmt::format_to(it, ",{},", kind);
    if (!std::isnan(f->end) && f->end < t_end_) AppendTime(w.buf(), f->end);
    w.buf().push_back('\n');
    fmt::format_to(dt, "{},", naming_.machines[f->machine]);
    AppendTime(d.buf(), f->onset);
    fmt::format_to(dt, ",{},{:.4f},{:.1f},{}\n", kind, f->size, f->ramp_s, f->gpu);
  }
  if (done.size() < faults_.size()) {
    fmt::print(stderr, "jobgen: {} fault(s) did not start before the end of the data\n",
               faults_.size() - done.size());
  }
  w.Close();
  d.Close();
}

void Job::WriteBenign() {
  std::stable_sort(benign_.begin(), benign_.end(),
                   [](const BenignRow& a, const BenignRow& b) { return a.start < b.start; });
  Writer w(o_.out + "/benign.csv");
  auto it = std::back_inserter(w.buf());
  fmt::format_to(it, "machine,start,end,kind\n");
  for (const BenignRow& r : benign_) {
    if (r.start >= t_end_) continue;
    fmt::format_to(it, "{},", r.machine);
    AppendTime(w.buf(), r.start);
    w.buf().push_back(',');
    AppendTime(w.buf(), std::min(r.end, t_end_));
    fmt::format_to(it, ",{}\n", r.kind);
  }
  w.Close();
}

// ------------------------------------------------------------------------------------------------
// Command line.

// "90", "90s", "30m", "1h", "1.5h" -> seconds; nullopt if malformed.
std::optional<double> ParseDuration(const std::string& s) {
  if (s.empty()) return std::nullopt;
  double mult = 1;
  std::string num = s;
  switch (s.back()) {
    case 's':
      num.pop_back();
      break;
    case 'm':
      mult = 60;
      num.pop_back();
      break;
    case 'h':
      mult = 3600;
      num.pop_back();
      break;
    default:
      break;
  }
  try {
    size_t used = 0;
    const double v = std::stod(num, &used);
    if (used != num.size() || !std::isfinite(v) || v < 0) return std::nullopt;
    return v * mult;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

int Main(int argc, char** argv) {
  Options o;
  CLI::App app{
      "jobgen: telemetry of one synchronous training job (dcgm-exporter, node-exporter, the "
      "trainer's step time) with labelled faults. See eval/jobgen/README.md."};
  std::string duration = "30m", format = "csv", step_export = "gauge", kinds;
  std::string fault_from = "0.2", fault_to = "0.6";
  std::string interval = "15", dcgm_iv, node_iv, grid, benign_min = "1", benign_max = "60";
  std::string watchdog = "10m";
  app.add_option("--machines", o.machines, "machines in the job (8..1024)")
      ->check(CLI::Range(8, 1024));
  app.add_option("--gpus", o.gpus, "GPUs per machine (1..8)")->check(CLI::Range(1, 8));
  app.add_option("--duration", duration, "length of the data: 90s, 30m, 1h (default 30m)");
  app.add_option("--seed", o.seed, "random seed: the output is a function of seed and options");
  app.add_option("--out", o.out, "output directory (created)")->required();
  app.add_option("--format", format, "csv (telemetry.csv) or openmetrics (telemetry.om)");
  app.add_option("--interval", interval, "scrape interval of every target, 1..60 s (default 15)");
  app.add_option("--dcgm-interval", dcgm_iv, "dcgm-exporter scrape interval (default --interval)");
  app.add_option("--node-interval", node_iv, "node-exporter scrape interval (default --interval)");
  app.add_flag("--aligned", o.aligned,
               "all scrapes on the same grid instants (default: staggered, jittered)");
  bool stagger = false;
  app.add_flag("--stagger", stagger,
               "staggered scrapes with per-target phase and jitter (the default)");
  app.add_option("--grid", grid,
                 "re-sample every series onto this step, as Prometheus query_range (5 min "
                 "lookback; a failed scrape is a staleness marker)");
  app.add_option("--stages", o.stages, "pipeline stages; their loads differ by up to ~4x")
      ->check(CLI::Range(1, 64));
  app.add_flag("--groups", o.groups, "add a CSV group column: the machine's pipeline stage");
  app.add_option("--faults", o.faults, "random faults, each on a distinct machine (default 1)")
      ->check(CLI::Range(0, 1024));
  app.add_option("--kinds", kinds, "comma-separated fault kinds to draw from (default all)");
  app.add_option("--fault-from", fault_from,
                 "earliest onset: a fraction of the duration (<=1) or a duration (default 0.2)");
  app.add_option("--fault-to", fault_to, "latest onset, as --fault-from (default 0.6)");
  app.add_option("--benign-rate", o.benign_rate,
                 "single-machine benign events per machine-hour (default 2)")
      ->check(CLI::Range(0.0, 1000.0));
  app.add_option("--benign-min", benign_min, "shortest benign event (default 1s)");
  app.add_option("--benign-max", benign_max, "longest benign event (default 60s)");
  app.add_option("--step-export", step_export,
                 "training_step_seconds: gauge (scraped) or event (one row per iteration)");
  app.add_option("--start", o.start, "Unix time of the first instant (default 1790000000)");
  app.add_option("--straggler-min", o.straggler_min,
                 "smallest straggler slow-down, fraction of compute time (default 0.2)")
      ->check(CLI::Range(0.0, 100.0));
  app.add_option("--straggler-max", o.straggler_max, "largest straggler slow-down (default 1.4)")
      ->check(CLI::Range(0.0, 100.0));
  app.add_option("--watchdog", watchdog,
                 "how long peers of a dead or hung rank wait before the job is killed (10m)");
  app.add_option("--cpus", o.cpus, "CPUs in openmetrics node_cpu_seconds_total (default 16)")
      ->check(CLI::Range(1, 256));
  try {
    app.parse(argc, argv);
    if (stagger && o.aligned) {
      fmt::print(stderr, "jobgen: --stagger: cannot be combined with --aligned\n");
      return 2;
    }
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "jobgen: {}\n", e.what());
    return 2;
  }
  try {
    const auto need = [](const std::string& flag, const std::string& v) {
      const auto d = ParseDuration(v);
      if (!d) throw UsageError(fmt::format("{}: not a duration: '{}'", flag, v));
      return *d;
    };
    o.duration_s = need("--duration", duration);
    if (o.duration_s < 60 || o.duration_s > 7 * 86400.0) {
      throw UsageError("--duration: must be between 1m and 7 days");
    }
    o.interval_s = need("--interval", interval);
    o.dcgm_interval_s = dcgm_iv.empty() ? o.interval_s : need("--dcgm-interval", dcgm_iv);
    o.node_interval_s = node_iv.empty() ? o.interval_s : need("--node-interval", node_iv);
    for (const auto& [flag, v] :
         {std::pair{"--interval", o.interval_s}, std::pair{"--dcgm-interval", o.dcgm_interval_s},
          std::pair{"--node-interval", o.node_interval_s}}) {
      if (v < 1 || v > 60) throw UsageError(fmt::format("{}: must be 1..60 s", flag));
    }
    if (!grid.empty()) {
      o.grid_s = need("--grid", grid);
      if (o.grid_s < 0.1) throw UsageError("--grid: must be at least 0.1 s");
    }
    if (format == "csv") {
      o.format = Format::kCsv;
    } else if (format == "openmetrics") {
      o.format = Format::kOpenMetrics;
    } else {
      throw UsageError("--format: must be csv or openmetrics");
    }
    if (step_export == "gauge") {
      o.step_export = StepExport::kGauge;
    } else if (step_export == "event") {
      o.step_export = StepExport::kEvent;
    } else {
      throw UsageError("--step-export: must be gauge or event");
    }
    o.fault_from = need("--fault-from", fault_from);
    o.fault_to = need("--fault-to", fault_to);
    const auto abs = [&](double f) { return f <= 1.0 ? f * o.duration_s : f; };
    if (abs(o.fault_from) > abs(o.fault_to)) throw UsageError("--fault-from: after --fault-to");
    if (abs(o.fault_to) > o.duration_s) throw UsageError("--fault-to: after the end of the data");
    o.benign_min_s = need("--benign-min", benign_min);
    o.benign_max_s = need("--benign-max", benign_max);
    if (o.benign_min_s > o.benign_max_s) throw UsageError("--benign-min: above --benign-max");
    if (o.straggler_min > o.straggler_max) {
      throw UsageError("--straggler-min: above --straggler-max");
    }
    o.watchdog_s = need("--watchdog", watchdog);
    if (o.stages > o.machines) throw UsageError("--stages: more stages than machines");
    if (o.faults > o.machines) throw UsageError("--faults: more faults than machines");
    if (!kinds.empty()) {
      size_t pos = 0;
      while (pos <= kinds.size()) {
        const size_t comma = std::min(kinds.find(',', pos), kinds.size());
        const std::string k = kinds.substr(pos, comma - pos);
        if (std::find(kFaultNames.begin(), kFaultNames.end(), k) == kFaultNames.end()) {
          throw UsageError(fmt::format("--kinds: unknown fault kind '{}'", k));
        }
        if (k == "slow_by_placement_then_worse" && o.stages < 2) {
          throw UsageError("--kinds: slow_by_placement_then_worse needs --stages 2 or more");
        }
        o.kinds.push_back(k);
        pos = comma + 1;
      }
    }
  } catch (const UsageError& e) {
    fmt::print(stderr, "jobgen: {}\n", e.what());
    return 2;
  }
  try {
    Job job(o);
    job.Run();
  } catch (const std::exception& e) {
    fmt::print(stderr, "jobgen: {}\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace jobgen

int main(int argc, char** argv) { return jobgen::Main(argc, argv); }
