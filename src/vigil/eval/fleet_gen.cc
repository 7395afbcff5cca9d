#include "vigil/eval/fleet_gen.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "vigil/core/lines.h"
#include "vigil/core/random.h"
#include "vigil/core/text.h"
#include "vigil/results/anatomy.h"

namespace vigil::eval {
namespace {

constexpr int kGpus = 8;
constexpr int kNics = 8;

// A per-GPU or per-NIC metric: NDv4 mean, and the spread of one component in one run.
struct Figure {
  const char* benchmark;
  const char* name;
  double mean;
  double jitter;  // relative standard deviation, run to run and part to part
};

// Means from ndv4-quickscan/baseline.json; jitters modelled on SuperBench's own 8x A100 test
// results (GEMM about 0.3% between GPUs, kernel launch about 3%).
constexpr Figure kGemm[] = {
    {"gemm-flops", "fp64_flops", 9030.9323, 0.003},
    {"gemm-flops", "fp32_flops", 18353.002, 0.003},
    {"gemm-flops", "fp16_flops", 33858.0635, 0.003},
    {"gemm-flops", "fp64_tc_flops", 18947.2453, 0.003},
    {"gemm-flops", "tf32_tc_flops", 128225.0141, 0.004},
    {"gemm-flops", "bf16_tc_flops", 265900.55, 0.004},
    {"gemm-flops", "fp16_tc_flops", 280435.1458, 0.004},
    {"gemm-flops", "int8_tc_iops", 473072.78125, 0.004},
    {"gemm-flops", "int4_tc_iops", 975854.4755, 0.004},
};
constexpr Figure kMemBw[] = {{"mem-bw", "h2d_bw", 25.9247, 0.01},
                             {"mem-bw", "d2h_bw", 26.0322, 0.01}};
constexpr Figure kLaunch[] = {{"kernel-launch", "event_time", 0.0057, 0.03},
                              {"kernel-launch", "wall_time", 0.0096, 0.03}};
constexpr double kIbPeak = 23.68471956;  // GB/s at 8 MiB
constexpr double kNcclPeak = 235.0457;   // busbw GB/s at 8 GiB
constexpr double kGpt[] = {41.8, 27.2};  // fp16, fp32 samples/s
constexpr const char* kBenchmarks[] = {"gemm-flops",  "mem-bw",  "kernel-launch",
                                       "ib-loopback", "nccl-bw", "gpt_models/pytorch-gpt2-large"};

struct Class {
  const char* hardware;
  double compute, pcie, network, launch;  // multipliers of the NDv4 figures
};
constexpr Class kClasses[] = {{"8x NVIDIA A100-SXM4-80GB", 1, 1, 1, 1},
                              {"8x NVIDIA H100 80GB HBM3", 3.0, 2.0, 2.0, 0.8}};

// Message sizes of a sweep: `n` points log-spaced from `lo` to `hi` bytes, rounded to integers.
std::vector<double> Sizes(int n, double lo, double hi) {
  std::vector<double> s;
  for (int i = 0; i < n; ++i) {
    const double f = n == 1 ? 1.0 : static_cast<double>(i) / (n - 1);
    s.push_back(std::round(lo * std::pow(hi / lo, f)));
  }
  s.erase(std::unique(s.begin(), s.end()), s.end());
  return s;
}

struct Defect {
  DefectKind kind = DefectKind::kGpu;
  int part = 0;  // GPU or NIC index
  double size = 0;
  std::string benchmark;  // fail, missing
};

constexpr std::pair<DefectKind, std::string_view> kDefectKinds[] = {
    {DefectKind::kGpu, "gpu"},        {DefectKind::kPcie, "pcie"},
    {DefectKind::kNic, "nic"},        {DefectKind::kNicLarge, "nic-large"},
    {DefectKind::kNvlink, "nvlink"},  {DefectKind::kFail, "fail"},
    {DefectKind::kMissing, "missing"}};

}  // namespace

std::string_view DefectKindName(DefectKind kind) {
  for (const auto& [k, name] : kDefectKinds) {
    if (k == kind) return name;
  }
  return "gpu";  // not reached: every enumerator is in kDefectKinds
}

Result<DefectKind> ParseDefectKind(std::string_view text) {
  for (const auto& [k, name] : kDefectKinds) {
    if (name == text) return k;
  }
  return Status::InvalidArgument(fmt::format(
      "expected gpu, pcie, nic, nic-large, nvlink, fail or missing, got {}", Quote(text)));
}

namespace {

// The ranges of the options (fleet_gen.h).
constexpr int64_t kMaxNodes = 10'000'000;
constexpr int kMaxSweepPoints = 1000;
// Metrics per node: 9 per sweep point (8 NICs' ib-loopback and one nccl-bw), and 114 others
// (8 GPUs x (9 GEMM + 2 mem-bw + 2 kernel-launch), 2 GPT throughputs, 6 return codes, less none).
constexpr double kMetricsPerSweepPoint = 9;
constexpr double kOtherMetrics = 114;

// The sweeps' message sizes, bytes: ib-loopback's (4 KiB to 8 MiB) and nccl-bw's (1 MiB to 8 GiB),
// as SuperBench's defaults run them.
constexpr double kIbSmallest = 4096, kIbLargest = 8388608;
constexpr double kNcclSmallest = 1 << 20, kNcclLargest = 8589934592.0;
// ib-loopback is latency-bound below about 16 KiB (its bandwidth's half point), and runs vary
// more below 64 KiB (kIbSmallJitter) than above (kIbLargeJitter); a link trained at a lower rate
// is slow from 64 KiB on.
constexpr double kIbHalfPoint = 16384, kIbLarge = 65536;
constexpr double kIbSmallJitter = 0.015, kIbLargeJitter = 0.003;
// nccl-bw reaches half its bus bandwidth at 64 MiB, bandwidth-bound (where an NVLink defect shows)
// from there.
constexpr double kNcclHalfPoint = 67108864.0;
constexpr double kNcclJitter = 0.005, kGptJitter = 0.01;

// Healthy variation: a node-wide offset (cooling, CPU, firmware) within about a percent (its
// relative standard deviation, doubled on a noisy node, as every jitter is), and each GPU's silicon
// within the node.
constexpr double kNodeOffset = 0.003, kNoisyNodeOffset = 0.006;
constexpr double kNoisyJitterScale = 2.0;
constexpr double kGpuSilicon = 0.002;

// The sizes of planted defects (the share of performance lost), and their kinds.
constexpr double kDefectSizes[] = {0.03, 0.05, 0.10, 0.20, 0.50};
constexpr DefectKind kPlantedKinds[] = {DefectKind::kGpu,    DefectKind::kPcie,
                                        DefectKind::kNic,    DefectKind::kNicLarge,
                                        DefectKind::kNvlink, DefectKind::kFail};

Status CheckFleetGenOptions(const FleetGenOptions& o) {
  if (o.nodes < 1 || o.nodes > kMaxNodes) {
    return Status::InvalidArgument("--nodes must be between 1 and 10,000,000");
  }
  for (double r : {o.defect_rate, o.noisy_rate, o.missing_rate, o.second_class}) {
    if (!(r >= 0 && r <= 1)) return Status::InvalidArgument("rates must be between 0 and 1");
  }
  if (o.sweep_points < 1 || o.sweep_points > kMaxSweepPoints) {
    return Status::InvalidArgument("--sweep-points must be between 1 and 1000");
  }
  const double values =
      static_cast<double>(o.nodes) * (kMetricsPerSweepPoint * o.sweep_points + kOtherMetrics);
  if (values > kMaxFleetValues) {
    return Status::InvalidArgument(fmt::format(
        "--nodes x metrics per node (9 x --sweep-points + 114) is {:.3g} values, more than the "
        "{:.0e} one generated fleet may hold",
        values, kMaxFleetValues));
  }
  return Status::Ok();
}

// One node being generated: its class, its healthy variation and its planted defects, drawn from
// its own random stream in a fixed order (so that a node's values do not depend on the others').
class NodeGen {
 public:
  NodeGen(const FleetGenOptions& o, int64_t n) : rng_(o.seed, static_cast<uint64_t>(n)) {
    cls_ = &kClasses[rng_.Bernoulli(o.second_class) ? 1 : 0];
    const bool noisy = rng_.Bernoulli(o.noisy_rate);
    jitter_scale_ = noisy ? kNoisyJitterScale : 1.0;
    node_factor_ = 1 + rng_.Normal(0, noisy ? kNoisyNodeOffset : kNodeOffset);
    PlantDefects(o);
  }

  const Class& cls() const { return *cls_; }
  const std::vector<Defect>& defects() const { return defects_; }

  // The node's row: each benchmark's metrics, in SuperBench's order.
  FleetRow Row(std::string node, const std::vector<double>& ib_sizes,
               const std::vector<double>& nccl_sizes) {
    row_ = FleetRow{};
    row_.node = std::move(node);
    row_.hardware = cls_->hardware;
    Emit("gemm-flops", Gemm());
    Emit("mem-bw", PerGpu(kMemBw, cls_->pcie, DefectKind::kPcie));
    Emit("kernel-launch", PerGpu(kLaunch, cls_->launch, std::nullopt));
    Emit("ib-loopback", IbLoopback(ib_sizes));
    Emit("nccl-bw", NcclBw(nccl_sizes));
    Emit("gpt_models/pytorch-gpt2-large", Gpt());
    return std::move(row_);
  }

 private:
  using Metrics = std::vector<std::pair<std::string, double>>;

  void PlantDefects(const FleetGenOptions& o) {
    if (rng_.Bernoulli(o.defect_rate)) {
      Defect d;
      d.kind = kPlantedKinds[rng_.Below(std::size(kPlantedKinds))];
      d.part = static_cast<int>(rng_.Below(kGpus));
      d.size =
          d.kind == DefectKind::kFail ? 1.0 : kDefectSizes[rng_.Below(std::size(kDefectSizes))];
      if (d.kind == DefectKind::kFail) {
        d.benchmark = kBenchmarks[rng_.Below(std::size(kBenchmarks))];
      }
      defects_.push_back(d);
    }
    if (rng_.Bernoulli(o.missing_rate)) {
      Defect d{DefectKind::kMissing, 0, 1.0, kBenchmarks[rng_.Below(std::size(kBenchmarks))]};
      if (defects_.empty() || defects_[0].benchmark != d.benchmark) defects_.push_back(d);
    }
  }

  // The share of performance that defects of `kind` on `part` (any part: -1) leave.
  double Loss(DefectKind kind, int part) const {
    double f = 1;
    for (const Defect& d : defects_) {
      if (d.kind == kind && (part < 0 || d.part == part)) f *= 1 - d.size;
    }
    return f;
  }

  // The defect that keeps `benchmark` from running (failed or missing), or null.
  const Defect* Down(std::string_view benchmark) const {
    for (const Defect& d : defects_) {
      if (d.benchmark == benchmark) return &d;
    }
    return nullptr;
  }

  // One run's factor: 1 off by a normal of relative standard deviation `rel` (doubled when noisy).
  double Noise(double rel) { return 1 + rng_.Normal(0, rel * jitter_scale_); }

  // A benchmark's metrics and its return code into the row: none when missing, only the return
  // code (1) when failed.
  void Emit(std::string_view benchmark, Metrics m) {
    const Defect* d = Down(benchmark);
    if (d != nullptr && d->kind == DefectKind::kMissing) return;
    if (d == nullptr) {
      for (auto& kv : m) row_.values.push_back(std::move(kv));
    }
    row_.values.emplace_back(fmt::format("{}/return_code", benchmark), d == nullptr ? 0 : 1);
  }

  Metrics Gemm() {
    Metrics m;
    for (int g = 0; g < kGpus; ++g) {
      const double part = 1 + rng_.Normal(0, kGpuSilicon);  // this GPU's silicon, within the node
      for (const Figure& f : kGemm) {
        m.emplace_back(fmt::format("{}/{}:{}", f.benchmark, f.name, g),
                       f.mean * cls_->compute * node_factor_ * part * Noise(f.jitter) *
                           Loss(DefectKind::kGpu, g));
      }
    }
    return m;
  }

  // Per-GPU figures times the class's `scale`, each GPU slowed by its defects of `kind` if any.
  template <size_t N>
  Metrics PerGpu(const Figure (&figures)[N], double scale, std::optional<DefectKind> kind) {
    Metrics m;
    for (int g = 0; g < kGpus; ++g) {
      for (const Figure& f : figures) {
        const double v = f.mean * scale * Noise(f.jitter);
        m.emplace_back(fmt::format("{}/{}:{}", f.benchmark, f.name, g),
                       kind ? v * Loss(*kind, g) : v);
      }
    }
    return m;
  }

  Metrics IbLoopback(const std::vector<double>& sizes) {
    Metrics m;
    for (int nic = 0; nic < kNics; ++nic) {
      for (double s : sizes) {
        const double shape = s / (s + kIbHalfPoint) / (kIbLargest / (kIbLargest + kIbHalfPoint));
        const double jitter = s < kIbLarge ? kIbSmallJitter : kIbLargeJitter;
        double v = kIbPeak * cls_->network * shape * Noise(jitter) * Loss(DefectKind::kNic, nic);
        if (s >= kIbLarge) v *= Loss(DefectKind::kNicLarge, nic);
        m.emplace_back(fmt::format("ib-loopback/ib_write_{}_bw:{}", s, nic), v);
      }
    }
    return m;
  }

  Metrics NcclBw(const std::vector<double>& sizes) {
    Metrics m;
    for (double s : sizes) {
      const double shape =
          s / (s + kNcclHalfPoint) / (kNcclLargest / (kNcclLargest + kNcclHalfPoint));
      double v = kNcclPeak * cls_->network * shape * node_factor_ * Noise(kNcclJitter);
      if (s >= kNcclHalfPoint) v *= Loss(DefectKind::kNvlink, -1);  // bandwidth-bound sizes only
      m.emplace_back(fmt::format("nccl-bw/allreduce_{}_busbw", s), v);
    }
    return m;
  }

  Metrics Gpt() {
    Metrics m;
    m.emplace_back("gpt_models/pytorch-gpt2-large/fp16_train_throughput",
                   kGpt[0] * cls_->compute * node_factor_ * Noise(kGptJitter));
    m.emplace_back("gpt_models/pytorch-gpt2-large/fp32_train_throughput",
                   kGpt[1] * cls_->compute * node_factor_ * Noise(kGptJitter));
    return m;
  }

  Rng rng_;
  const Class* cls_ = nullptr;
  double jitter_scale_ = 1, node_factor_ = 1;
  std::vector<Defect> defects_;
  FleetRow row_;
};

// The component a planted defect is found in, as Anatomize names it.
std::string DefectComponent(const Defect& d) {
  switch (d.kind) {
    case DefectKind::kGpu:
      return fmt::format("GPU {}", d.part);
    case DefectKind::kPcie:
      return fmt::format("PCIe {}", d.part);
    case DefectKind::kNic:
    case DefectKind::kNicLarge:
      return fmt::format("NIC {}", d.part);
    case DefectKind::kNvlink:
      return "NVLink";
    case DefectKind::kFail:
    case DefectKind::kMissing:
      return Anatomize(d.benchmark + "/return_code").component;
  }
  return "";
}

}  // namespace

Result<GeneratedFleet> GenerateFleet(const FleetGenOptions& o) {
  VIGIL_RETURN_IF_ERROR(CheckFleetGenOptions(o));
  const std::vector<double> ib_sizes = Sizes(o.sweep_points, kIbSmallest, kIbLargest);
  const std::vector<double> nccl_sizes = Sizes(o.sweep_points, kNcclSmallest, kNcclLargest);
  GeneratedFleet out;
  const int width = static_cast<int>(std::to_string(o.nodes).size());
  for (int64_t n = 0; n < o.nodes; ++n) {
    NodeGen gen(o, n);
    const std::string node = fmt::format("node-{:0{}}", n, width);
    out.rows.push_back(gen.Row(node, ib_sizes, nccl_sizes));
    for (const Defect& d : gen.defects()) {
      out.truth.push_back(PlantedDefect{node, DefectComponent(d), d.kind, d.size});
    }
  }
  return out;
}

std::string FormatTruth(const std::vector<PlantedDefect>& truth) {
  std::string out = "node,component,kind,size\n";
  for (const PlantedDefect& d : truth) {
    out += fmt::format("{},{},{},{}\n", d.node, d.component, DefectKindName(d.kind), d.size);
  }
  return out;
}

Result<std::vector<PlantedDefect>> ParseTruth(std::string_view text, std::string_view source) {
  std::vector<PlantedDefect> out;
  LineReader lines(text);
  std::string_view line;
  bool header = true;
  while (lines.Next(line)) {
    if (Trim(line).empty()) continue;
    const auto bad = [&](std::string_view what) {
      return Status::InvalidArgument(fmt::format("{}:{}: {}", source, lines.line_no(), what));
    };
    if (header) {
      if (Trim(line) != "node,component,kind,size") {
        return bad("expected the header \"node,component,kind,size\"");
      }
      header = false;
      continue;
    }
    std::vector<std::string_view> f = Split(line, ',');
    for (std::string_view& field : f) field = Trim(field);
    if (f.size() != 4) return bad(fmt::format("expected 4 fields, found {}", f.size()));
    PlantedDefect d{std::string(f[0]), std::string(f[1]), DefectKind::kGpu, 0};
    const auto [end, ec] = std::from_chars(f[3].data(), f[3].data() + f[3].size(), d.size);
    if (ec != std::errc() || end != f[3].data() + f[3].size() || !(d.size > 0 && d.size <= 1)) {
      return bad(fmt::format("field size: {} is not a number in (0, 1]", Quote(f[3])));
    }
    if (d.node.empty() || d.component.empty()) return bad("empty node or component");
    const Result<DefectKind> kind = ParseDefectKind(f[2]);
    if (!kind.ok()) return bad(fmt::format("field kind: {}", kind.status().message()));
    d.kind = *kind;
    out.push_back(std::move(d));
  }
  if (header) return Status::InvalidArgument(fmt::format("{}: empty truth file", source));
  return out;
}

NodeResults NodeDocumentOf(const FleetRow& row, int samples, uint64_t seed) {
  Rng rng(seed, 0);
  NodeResults doc;
  doc.node = row.node;
  doc.vigil_version = "generated";
  doc.suite = "quick";
  doc.start_time = "2026-11-22T08:00:00.000Z";
  doc.end_time = "2026-11-22T08:01:30.000Z";
  doc.inventory.hostname = row.node;
  doc.inventory.cpu_model = "AMD EPYC 7V12 64-Core Processor";
  doc.inventory.sockets = 2;
  doc.inventory.cores = 96;
  doc.inventory.threads = 96;
  doc.inventory.numa_nodes = 4;
  doc.inventory.memory_bytes = 1.9e12;
  doc.inventory.kernel = "5.15.0";
  doc.inventory.os = "Ubuntu 22.04";
  if (const size_t x = row.hardware.find("x "); x != std::string::npos) {
    const int gpus = std::atoi(row.hardware.substr(0, x).c_str());
    doc.inventory.gpu_driver = "550.54.15";
    for (int g = 0; g < gpus; ++g) {
      doc.inventory.gpus.push_back(
          GpuInfo{g, row.hardware.substr(x + 2), fmt::format("0000:{:02x}:00.0", 0x10 * (g + 1))});
    }
  }
  for (const auto& [key, value] : row.values) {
    const std::string bench = BenchmarkOfKey(key);
    auto it = std::find_if(doc.benchmarks.begin(), doc.benchmarks.end(),
                           [&](const BenchmarkRecord& r) { return r.name == bench; });
    if (it == doc.benchmarks.end()) {
      BenchmarkRecord r;
      r.name = bench;
      r.component = bench.rfind("gpu", 0) == 0 ? "gpu" : "node";
      r.duration_s = 5;
      doc.benchmarks.push_back(std::move(r));
      it = doc.benchmarks.end() - 1;
    }
    if (key == bench + "/return_code") {
      it->return_code = static_cast<int>(value);
      if (value != 0) it->status = BenchStatus::kFailed;
      continue;
    }
    Metric m;
    m.key = *MetricKey::Parse(key);
    m.value = value;
    for (int s = 0; s < samples; ++s)
      m.samples.push_back(value * (1 + 0.01 * (rng.Uniform() - 0.5)));
    it->metrics.push_back(std::move(m));
  }
  return doc;
}

}  // namespace vigil::eval
