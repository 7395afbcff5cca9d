#include "vigil/results/anatomy.h"

#include <fmt/format.h>
#include <re2/re2.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <memory>
#include <utility>

namespace vigil {
namespace {

bool Contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

// Whether `name` holds `word`. A word written with a leading '_' ("_us", "_lat") is a unit or an
// abbreviation: it must also end where a word ends, not run on into a letter ("_us" is in
// "read_lat_us" and "lat_us_p99", not in "by_gpu0_using_sm", SuperBench v0.4's gpu-copy-bw).
bool HasWord(std::string_view name, std::string_view word) {
  if (!word.starts_with('_')) return Contains(name, word);
  for (size_t at = name.find(word); at != std::string_view::npos; at = name.find(word, at + 1)) {
    const size_t end = at + word.size();
    if (end == name.size() || !std::isalpha(static_cast<unsigned char>(name[end]))) return true;
  }
  return false;
}

Direction DirectionOf(std::string_view name) {
  if (Contains(name, "return_code")) return Direction::kZero;
  // Counters of gpu-health (ECC errors, remapped rows, retired pages, throttle flags) are lower
  // when better; its PCIe link generation and width higher.
  static constexpr std::array<std::string_view, 13> kLower = {
      "time",  "latency", "overhead", "_lat",  "_us",     "_ms",     "duration",
      "error", "_ns",     "ecc_",     "remap", "retired", "throttle"};
  static constexpr std::array<std::string_view, 13> kHigher = {
      "bw",   "bandwidth", "flops", "iops",  "throughput", "gbps",    "tflops",
      "_ops", "score",     "rate",  "speed", "pcie_width", "pcie_gen"};
  for (std::string_view w : kLower) {
    if (HasWord(name, w)) return Direction::kLower;
  }
  for (std::string_view w : kHigher) {
    if (HasWord(name, w)) return Direction::kHigher;
  }
  return Direction::kEither;
}

// The readings with a fixed meaning (docs/run.md): gpu-health's and
// gpu-stress's from NVML, gpu-presence's from PCI, gpu-memtest's; judged by what they mean rather
// than by their name's words; kEither (not one of them) otherwise.
Direction HealthDirection(std::string_view benchmark, std::string_view name) {
  static constexpr std::pair<std::string_view, Direction> kHealth[] = {
      {"ecc_uncorrected_volatile", Direction::kClear},
      {"row_remap_pending", Direction::kClear},
      {"row_remap_failure", Direction::kClear},
      {"retired_pages_pending", Direction::kClear},
      {"throttle_hw_", Direction::kClear},
      {"throttle_sw_thermal", Direction::kClear},
      // Lifetime counts of errors corrected or repaired (rows remapped), a power cap, the
      // present draw: records, not faults. An idle GPU trains its link down a generation.
      {"ecc_corrected_", Direction::kInfo},
      {"ecc_uncorrected_aggregate", Direction::kInfo},
      {"remapped_rows_", Direction::kInfo},
      {"throttle_sw_power_cap", Direction::kInfo},
      {"power_w", Direction::kInfo},
      {"pcie_gen_max", Direction::kHigher},
      {"pcie_gen", Direction::kInfo},
      {"temperature", Direction::kLower}};
  // Under load the link runs at the generation it trained to: a slower one than its peers' is
  // a link that trained down.
  static constexpr std::pair<std::string_view, Direction> kStress[] = {
      {"throttled", Direction::kClear},
      {"miscompares", Direction::kClear},  // silent data corruption
      {"peak_temperature", Direction::kLower},
      {"pcie_gen", Direction::kHigher}};
  const auto find = [&](const auto& table) {
    for (const auto& [part, d] : table) {
      if (name.rfind(part, 0) == 0) return d;
    }
    return Direction::kEither;
  };
  // A GPU on PCI that the driver does not reach, a link short of lanes; words that mismatched.
  static constexpr std::pair<std::string_view, Direction> kPresence[] = {
      {"missing", Direction::kClear}, {"pcie_lanes_missing", Direction::kClear}};
  static constexpr std::pair<std::string_view, Direction> kMemtest[] = {
      {"errors", Direction::kClear}, {"tested_gib", Direction::kInfo}};
  // Vigil's host-health: the memory a node has, against its peers'; a filesystem nearly full.
  static constexpr std::pair<std::string_view, Direction> kHost[] = {
      {"memory_total_gib", Direction::kHigher}, {"memory_available_gib", Direction::kInfo},
      {"root_free_gib", Direction::kInfo},      {"scratch_free_gib", Direction::kInfo},
      {"root_full", Direction::kClear},         {"scratch_full", Direction::kClear}};
  if (benchmark == "gpu-health") return find(kHealth);
  if (benchmark == "gpu-stress") return find(kStress);
  if (benchmark == "gpu-presence") return find(kPresence);
  if (benchmark == "gpu-memtest") return find(kMemtest);
  if (benchmark == "host-health") return find(kHost);
  return Direction::kEither;
}

// How many GPUs SuperBench v0.3's gpu-sm-copy-bw spreads its 32 ranks over: every shipped
// configuration runs it as CUDA_VISIBLE_DEVICES=$((rank % 8)), so rank r measures GPU r % 8.
constexpr int kSmCopyGpus = 8;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// The run of digits at s[at...], or "" when there is none.
std::string_view DigitsAt(std::string_view s, size_t at) {
  if (at >= s.size()) return {};
  size_t end = at;
  while (end < s.size() && IsDigit(s[end])) ++end;
  return s.substr(at, end - at);
}

// The HCA of an ib-loopback metric when its name holds it: "IB_write_8388608_Avg_4" (SuperBench
// v0.3 and before) or "ib_write_8388608_ib4_bw" (v0.4, v0.5); "" otherwise (v0.6 and later put
// it in the ":index").
std::string_view HcaInName(std::string_view name) {
  if (const size_t at = name.rfind("_Avg_"); at != std::string_view::npos) {
    std::string_view d = DigitsAt(name, at + 5);
    if (!d.empty() && at + 5 + d.size() == name.size()) return d;
  }
  if (name.ends_with("_bw")) {
    if (const size_t at = name.rfind("_ib"); at != std::string_view::npos) {
      std::string_view d = DigitsAt(name, at + 3);
      if (!d.empty() && at + 3 + d.size() + 3 == name.size()) return d;
    }
  }
  return {};
}

// The NVLink path between GPUs `a` and `b`, whichever way the copy ran: "NVLink 0-4" for both
// "gpu0_to_gpu4" and "gpu4_to_gpu0", so that a pair's metrics in both directions are one
// component's.
std::string LinkName(std::string_view a, std::string_view b) {
  const auto number = [](std::string_view g) {
    return std::strtol(std::string(g).c_str(), nullptr, 10);
  };
  if (number(b) < number(a)) std::swap(a, b);
  return fmt::format("NVLink {}-{}", a, b);
}

// One end of a copy in gpu-copy-bw's tag: "cpu", "gpu_all" or "gpu<N>" (N in *gpu).
bool CopyEnd(std::string_view& s, std::string_view* gpu, bool* all) {
  *gpu = {};
  *all = false;
  if (s.starts_with("cpu")) {
    s.remove_prefix(3);
    return true;
  }
  if (s.starts_with("gpu_all")) {
    s.remove_prefix(7);
    *all = true;
    return true;
  }
  if (!s.starts_with("gpu")) return false;
  *gpu = DigitsAt(s, 3);
  if (gpu->empty()) return false;
  s.remove_prefix(3 + gpu->size());
  return true;
}

// gpu-copy-bw's tags: "<src>_(to|and)_<dst>_..." with each end "cpu", "gpu<N>" or "gpu_all"
// (v0.4: "cpu_to_gpu0_by_gpu0_using_sm_under_numa0_bw"; v0.6 on:
// "gpu0_to_gpu1_write_by_sm_bw", "gpu_all_to_gpu3_write_by_sm_bw"). "" when the name is not one.
std::string CopyComponent(std::string_view name) {
  std::string_view a, b;
  bool a_all = false, b_all = false;
  std::string_view s = name;
  if (!CopyEnd(s, &a, &a_all)) return "";
  if (s.starts_with("_to_")) {
    s.remove_prefix(4);
  } else if (s.starts_with("_and_")) {
    s.remove_prefix(5);
  } else {
    return "";
  }
  if (!CopyEnd(s, &b, &b_all) || !(s.empty() || s.starts_with('_'))) return "";
  const bool a_cpu = a.empty() && !a_all, b_cpu = b.empty() && !b_all;
  if (a_cpu && b_cpu) return "";
  if (a_cpu || b_cpu) return fmt::format("PCIe {}", a_cpu ? b : a);  // host <-> GPU
  if (a_all && b_all) return "NVLink";
  if (a_all || b_all) return fmt::format("NVLink {}", a_all ? b : a);  // one GPU <-> all peers
  if (a == b) return fmt::format("HBM {}", a);  // a GPU copying within its own memory
  return LinkName(a, b);
}

// nvbandwidth's matrix cells: "<test>_cpu<R>_gpu<C>_<bw|lat>" (host <-> GPU C) and
// "<test>_gpu<R>_gpu<C>_<bw|lat>" (GPU R <-> GPU C; all_to_one and one_to_all have one row, their
// column is the GPU). "" for the sums ("<test>_sum_bw") and other names.
std::string NvbandwidthComponent(std::string_view name) {
  for (size_t at = name.find("_cpu"); at != std::string_view::npos;
       at = name.find("_cpu", at + 1)) {
    const std::string_view r = DigitsAt(name, at + 4);
    if (r.empty() || name.substr(at + 4 + r.size()).rfind("_gpu", 0) != 0) continue;
    const std::string_view c = DigitsAt(name, at + 8 + r.size());
    if (!c.empty()) return fmt::format("PCIe {}", c);
  }
  for (size_t at = name.find("_gpu"); at != std::string_view::npos;
       at = name.find("_gpu", at + 1)) {
    const std::string_view r = DigitsAt(name, at + 4);
    if (r.empty() || name.substr(at + 4 + r.size()).rfind("_gpu", 0) != 0) continue;
    const std::string_view c = DigitsAt(name, at + 8 + r.size());
    if (c.empty()) continue;
    if (name.starts_with("all_to_one") || name.starts_with("one_to_all")) {
      return fmt::format("NVLink {}", c);
    }
    return LinkName(r, c);
  }
  return "";
}

// The block device of a disk-benchmark metric: "nvme0n1_rand_read_write_read_iops" -> "nvme0n1"
// (fio's job names start with "seq_" or "rand_"); "" when the name has none.
std::string_view DiskOf(std::string_view name) {
  for (std::string_view job : {"_seq_", "_rand_"}) {
    if (const size_t at = name.find(job); at != std::string_view::npos && at > 0) {
      return name.substr(0, at);
    }
  }
  return {};
}

// The component a key names, by where its benchmark puts the index (docs/validate.md,
// "Components"). `benchmark` is without its ":annotation"; `name` is the metric's last '/' part
// without the index.
std::string ComponentOf(std::string_view benchmark, std::string_view name, std::string_view index) {
  const auto numbered = [](std::string_view kind, std::string_view i) {
    return fmt::format("{} {}", kind, i);
  };
  const bool rank = !index.empty() && DigitsAt(index, 0).size() == index.size();
  // SuperBench's benchmarks, whose indexes do not all sit in the ":index".
  if (benchmark == "ib-loopback") {
    if (std::string_view hca = HcaInName(name); !hca.empty()) return numbered("NIC", hca);
    if (rank) return numbered("NIC", index);
  } else if (benchmark == "ib-traffic") {
    // A ":<rank>" after the pair's ":<server>_<client>" is the local rank, and the rank's HCA is
    // mlx5_<rank> in SuperBench's configurations; the pair alone names two hosts, not a NIC.
    if (rank) return numbered("NIC", index);
    return std::string(benchmark);
  } else if (benchmark == "mem-bw") {
    if (rank) {
      const bool device = name.starts_with("d2d") || name.starts_with("D2D");
      return numbered(device ? "HBM" : "PCIe", index);
    }
  } else if (benchmark == "gpu-sm-copy-bw") {
    if (rank) {
      return fmt::format("PCIe {}",
                         std::strtol(std::string(index).c_str(), nullptr, 10) % kSmCopyGpus);
    }
  } else if (benchmark == "gpu-copy-bw") {
    if (std::string c = CopyComponent(name); !c.empty()) return c;
  } else if (benchmark == "nvbandwidth") {
    if (std::string c = NvbandwidthComponent(name); !c.empty()) return c;
    return std::string(benchmark);
  } else if (benchmark == "disk-benchmark") {
    if (std::string_view disk = DiskOf(name); !disk.empty()) return numbered("disk", disk);
  } else if (benchmark == "host-health") {
    if (name.starts_with("memory")) return "memory";
    return name.starts_with("root") ? "filesystem /" : "filesystem scratch";
  } else if (benchmark == "gpu-burn") {
    // "gpu_3_pass"
    if (name.starts_with("gpu_")) {
      if (std::string_view g = DigitsAt(name, 4); !g.empty()) return numbered("GPU", g);
    }
  } else if (benchmark == "nccl-bw" || benchmark == "rccl-bw") {
    return "NVLink";  // the node's collective: rank 0 of one process, not a component
  } else if (benchmark.ends_with("_models") || benchmark.starts_with("model-benchmarks")) {
    return std::string(benchmark);  // a whole model trains on the whole node
  }
  // By substring, first match wins: SuperBench's GPU benchmarks come before "nic", which
  // "pytorch-computation-communication-overlap" holds.
  static constexpr std::pair<std::string_view, std::string_view> kKinds[] = {
      {"gemm", "GPU"},      {"kernel-launch", "GPU"}, {"cublas", "GPU"},   {"cudnn", "GPU"},
      {"pytorch-", "GPU"},  {"matmul", "GPU"},        {"tensorrt", "GPU"}, {"ort-inference", "GPU"},
      {"gpu-burn", "GPU"},  {"gpu-stream", "GPU"},    {"gpu-hbm", "GPU"},  {"mem-bw", "PCIe"},
      {"gpu-copy", "PCIe"}, {"pcie", "PCIe"},         {"gpu-", "GPU"},     {"ib-", "NIC"},
      {"nic", "NIC"},       {"disk", "disk"},         {"cpu", "NUMA"}};
  std::string_view kind;
  for (const auto& [prefix, k] : kKinds) {
    if (Contains(benchmark, prefix)) {
      kind = k;
      break;
    }
  }
  if (index.empty()) {
    if (Contains(benchmark, "nccl")) return "NVLink";
    return std::string(benchmark);
  }
  if (kind.empty()) return fmt::format("{}:{}", benchmark, index);
  if (Contains(index, "-")) return fmt::format("link {}", index);
  return numbered(kind, index);
}

// What a SuperBench benchmark measures when a metric's name does not say: SuperBench v0.3 named
// GEMM figures by data type alone ("gemm-flops/FP32:3", FLOPS), ib-loopback's by size and HCA
// ("IB_write_8388608_Avg_4", bandwidth), gpu-sm-copy-bw's by direction ("dtoh:12", bandwidth), and
// cuBLAS and cuDNN figures by their call ("name_cublasSgemm_m_1024_...", a time). kEither for other
// benchmarks.
Direction BenchmarkDirection(std::string_view benchmark) {
  static constexpr std::pair<std::string_view, Direction> kMeasures[] = {
      {"gemm-flops", Direction::kHigher},
      {"ib-loopback", Direction::kHigher},
      {"gpu-sm-copy-bw", Direction::kHigher},
      {"gpu-copy-bw", Direction::kHigher},
      {"mem-bw", Direction::kHigher},
      {"cublas-function", Direction::kLower},
      {"cudnn-function", Direction::kLower},
      {"kernel-launch", Direction::kLower},
      {"pytorch-sharding-matmul", Direction::kLower},
      {"pytorch-matmul", Direction::kLower}};
  for (const auto& [b, d] : kMeasures) {
    if (benchmark == b) return d;
  }
  return Direction::kEither;
}

// The name of a key whose component's index lives in its name, with that index replaced (and the
// indexes that follow from it: a GPU's NUMA node, a host's CPU), so that every component's value
// of one quantity is one family, as the ":index" keys' are: "gpu3_to_gpu3_by_sm_bw" ->
// "gpu{i}_to_gpu{i}_by_sm_bw" (HBM), "gpu0_to_gpu4_write_by_sm_bw" ->
// "gpu{i}_to_gpu{j}_write_by_sm_bw" (NVLink), "cpu_to_gpu5_by_dma_under_numa2_bw" ->
// "cpu_to_gpu{i}_by_dma_under_numa*_bw", "ib_write_8388608_ib4_bw" -> "ib_write_8388608_ib{i}_bw",
// "IB_write_8388608_Avg_4" -> "IB_write_8388608_Avg_{i}", "nvme2n1_rand_read_write_read_iops" ->
// "{disk}_rand_read_write_read_iops", "gpu_3_pass" -> "gpu_{i}_pass". The name itself for every
// other key.
std::string NameFamily(std::string_view benchmark, std::string_view name) {
  if (benchmark == "ib-loopback") {
    const std::string_view hca = HcaInName(name);
    if (hca.empty()) return std::string(name);
    const size_t at = static_cast<size_t>(hca.data() - name.data());
    return fmt::format("{}{{i}}{}", name.substr(0, at), name.substr(at + hca.size()));
  }
  if (benchmark == "disk-benchmark") {
    const std::string_view disk = DiskOf(name);
    return disk.empty() ? std::string(name) : "{disk}" + std::string(name.substr(disk.size()));
  }
  const bool by_gpu = (benchmark == "gpu-copy-bw" && !CopyComponent(name).empty()) ||
                      (benchmark == "nvbandwidth" && !NvbandwidthComponent(name).empty()) ||
                      (benchmark == "gpu-burn" && name.starts_with("gpu_"));
  if (!by_gpu) return std::string(name);
  std::string out;
  std::vector<std::string_view> gpus;  // distinct GPU numbers in order: {i}, {j}
  for (size_t k = 0; k < name.size();) {
    const auto tag = [&](std::string_view t) {
      return name.substr(k, t.size()) == t && !DigitsAt(name, k + t.size()).empty();
    };
    std::string_view t;
    for (std::string_view c : {"gpu_", "gpu", "numa", "cpu"}) {
      if (tag(c)) {
        t = c;
        break;
      }
    }
    if (t.empty()) {
      out += name[k++];
      continue;
    }
    const std::string_view digits = DigitsAt(name, k + t.size());
    out += t;
    if (t.starts_with("gpu")) {
      auto it = std::find(gpus.begin(), gpus.end(), digits);
      if (it == gpus.end()) it = gpus.insert(gpus.end(), digits);
      out += it - gpus.begin() == 0 ? "{i}" : it - gpus.begin() == 1 ? "{j}" : "{k}";
    } else {
      out += '*';
    }
    k += t.size() + digits.size();
  }
  return out;
}

}  // namespace

MetricAnatomy Anatomize(std::string_view key) {
  MetricAnatomy a;
  const size_t slash = key.find('/');
  const size_t colon = key.rfind(':');
  const bool has_index = colon != std::string_view::npos && colon > slash;
  const std::string_view whole = has_index ? key.substr(0, colon) : key;  // without the index
  a.index = has_index ? std::string(key.substr(colon + 1)) : "";
  std::string_view benchmark = key.substr(0, slash);
  benchmark = benchmark.substr(0, benchmark.find(':'));
  std::string lower(slash == std::string_view::npos ? std::string_view() : whole.substr(slash + 1));
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  a.direction = HealthDirection(benchmark, lower);
  if (a.direction == Direction::kEither) a.direction = DirectionOf(lower);
  if (a.direction == Direction::kEither) a.direction = BenchmarkDirection(benchmark);
  const size_t last_slash = whole.rfind('/');
  const std::string_view last =
      last_slash == std::string_view::npos ? std::string_view() : whole.substr(last_slash + 1);
  a.component = ComponentOf(benchmark, last, a.index);
  a.family = last_slash == std::string_view::npos
                 ? std::string(whole)
                 : std::string(whole.substr(0, last_slash + 1)) + NameFamily(benchmark, last);
  const std::string_view name = slash == std::string_view::npos
                                    ? std::string_view()
                                    : std::string_view(a.family).substr(slash + 1);
  // A sweep size: a run of at least three digits standing alone between '_' or '-' separators.
  for (size_t i = 0; i < name.size();) {
    if (!IsDigit(name[i])) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < name.size() && IsDigit(name[j])) ++j;
    const bool alone = (i == 0 || name[i - 1] == '_' || name[i - 1] == '-') &&
                       (j == name.size() || name[j] == '_' || name[j] == '-');
    if (alone && j - i >= 3 && j - i <= 15) {
      const size_t at = slash + 1 + i;
      a.curve = a.family.substr(0, at) + "{size}" + a.family.substr(slash + 1 + j);
      a.size = std::strtod(std::string(name.substr(i, j - i)).c_str(), nullptr);
      break;
    }
    i = j;
  }
  return a;
}

std::string BenchmarkOfKey(std::string_view key) {
  return std::string(key.substr(0, key.rfind('/')));
}

std::string_view DirectionName(Direction d) {
  switch (d) {
    case Direction::kHigher:
      return "higher";
    case Direction::kLower:
      return "lower";
    case Direction::kZero:
      return "zero";
    case Direction::kEither:
      return "either";
    case Direction::kClear:
      return "clear";
    case Direction::kInfo:
      return "info";
  }
  return "either";
}

bool IsLearned(Direction d) {
  return d == Direction::kHigher || d == Direction::kLower || d == Direction::kEither;
}

const std::vector<NamingGeneration>& NamingGenerations() {
  // From SuperBench's sources at the tags named: the metric names each benchmark adds.
  static const std::vector<NamingGeneration> kAll = {
      {"ib-loopback",
       "v0.3",
       R"(IB_(write|read|send)_\d+_Avg_\d+)",
       {"IB_write_8388608_Avg_0", "IB_read_8388608_Avg_0", "IB_send_8388608_Avg_0"}},
      {"ib-loopback",
       "v0.4-v0.5",
       R"(ib_(write|read|send)_\d+_ib\d+_bw)",
       {"ib_write_8388608_ib0_bw", "ib_read_8388608_ib0_bw", "ib_send_8388608_ib0_bw"}},
      {"ib-loopback",
       "v0.6+",
       R"(ib_(write|read|send)_bw_\d+)",
       {"ib_write_bw_8388608", "ib_read_bw_8388608", "ib_send_bw_8388608"}},
      {"mem-bw", "v0.3", R"((H2D|D2H|D2D)_Mem_BW)", {"H2D_Mem_BW", "D2H_Mem_BW", "D2D_Mem_BW"}},
      {"mem-bw", "v0.4+", R"((h2d|d2h|d2d)_bw)", {"h2d_bw", "d2h_bw", "d2d_bw"}},
      {"kernel-launch", "v0.3", R"((event|wall)_overhead)", {"event_overhead", "wall_overhead"}},
      {"kernel-launch", "v0.4+", R"((event|wall)_time)", {"event_time", "wall_time"}},
      {"gemm-flops",
       "v0.3",
       R"((FP64|FP32|FP16|FP64_TC|TF32_TC|FP16_TC|BF16_TC|INT8_TC|INT4_TC))",
       {"FP64", "FP32", "FP16", "FP64_TC", "TF32_TC", "FP16_TC", "BF16_TC", "INT8_TC", "INT4_TC"}},
      {"gemm-flops",
       "v0.4+",
       R"([a-z0-9]+(_tc|_xdlops)?_(flops|iops))",
       {"fp64_flops", "fp32_flops", "fp16_flops", "fp64_tc_flops", "tf32_tc_flops", "fp16_tc_flops",
        "bf16_tc_flops", "int8_tc_iops", "int4_tc_iops"}},
      {"gpu-sm-copy-bw", "v0.3", R"(htod|dtoh)", {"htod", "dtoh"}},
      {"pytorch-computation-communication-overlap",
       "v0.3",
       R"((mul|matmul)_cost)",
       {"mul_cost", "matmul_cost"}},
      {"pytorch-computation-communication-overlap",
       "v0.4+",
       R"((mul|matmul)_time)",
       {"mul_time", "matmul_time"}},
      {"pytorch-sharding-matmul", "v0.3", R"(allreduce|allgather)", {"allreduce", "allgather"}},
      {"pytorch-sharding-matmul",
       "v0.4+",
       R"((allreduce|allgather)_time)",
       {"allreduce_time", "allgather_time"}},
      {"*_models",
       "v0.3",
       R"((steptime|throughput)_(train|inference)_b?float\d+)",
       {"steptime_train_float32", "throughput_train_float32", "steptime_train_float16",
        "throughput_train_float16", "steptime_inference_float32", "throughput_inference_float32",
        "steptime_inference_float16", "throughput_inference_float16"}},
      {"*_models",
       "v0.4+",
       R"((fp\d+|bf16)_(train|inference)_(step_time|throughput))",
       {"fp32_train_step_time", "fp32_train_throughput", "fp16_train_step_time",
        "fp16_train_throughput", "fp32_inference_step_time", "fp32_inference_throughput",
        "fp16_inference_step_time", "fp16_inference_throughput"}},
  };
  return kAll;
}

const NamingGeneration* NamingGenerationOf(std::string_view key) {
  const std::vector<NamingGeneration>& all = NamingGenerations();
  static const std::vector<std::unique_ptr<RE2>> kCompiled = [&] {
    std::vector<std::unique_ptr<RE2>> out;
    for (const NamingGeneration& g : all) out.push_back(std::make_unique<RE2>(g.pattern));
    return out;
  }();
  std::string_view benchmark = key.substr(0, key.find('/'));
  benchmark = benchmark.substr(0, benchmark.find(':'));
  const bool model = benchmark.ends_with("_models");
  const size_t colon = key.rfind(':');
  const size_t slash = key.rfind('/');
  if (slash == std::string_view::npos) return nullptr;
  std::string_view name = key.substr(slash + 1);
  if (colon != std::string_view::npos && colon > slash) name = name.substr(0, colon - slash - 1);
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].benchmark != benchmark && !(model && all[i].benchmark == "*_models")) continue;
    if (RE2::FullMatch(name, *kCompiled[i])) return &all[i];
  }
  return nullptr;
}

}  // namespace vigil
