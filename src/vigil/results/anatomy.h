// What a metric key says about itself, for criteria learned from the fleet: which population it
// belongs to (its family), which component of the node it measures, which way is better, and its
// place in a sweep. Keys follow ARCHITECTURE.md: "<benchmark>/<metric>[:<index>]".
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace vigil {

// How a metric is judged. From the fleet's own distribution: kHigher and kLower (better that
// way) and kEither. By a fixed rule: kZero, a benchmark's return code, must be 0 (otherwise the
// benchmark failed); kClear, a health counter or flag that must be 0 on a sound part (an
// uncorrectable ECC error since the driver loaded, a pending or failed row remap, a hardware
// slowdown). Never: kInfo, a reading kept for people (corrected ECC errors, errors the hardware
// has repaired, power, an idle PCIe link's generation).
enum class Direction { kHigher, kLower, kZero, kEither, kClear, kInfo };

// Whether the fleet's distribution judges a metric of this direction.
bool IsLearned(Direction d);

struct MetricAnatomy {
  // The key without its index: one population over all components. Where a benchmark puts the
  // component's index in the name (gpu-copy-bw, v0.3-v0.5 ib-loopback, disk-benchmark...), the
  // name with it replaced: "gpu-copy-bw/gpu{i}_to_gpu{j}_write_by_sm_bw" (docs/validate.md).
  std::string family;
  std::string index;      // "3", "0-3" or "" (the node as a whole)
  std::string component;  // "GPU 3", "PCIe 3", "NIC 5", "link 0-3", "NVLink", "gemm-flops"...
  Direction direction = Direction::kEither;
  // A sweep point: the family with its size replaced by "{size}", and the size; empty when the
  // metric is not part of a sweep.
  std::string curve;
  double size = 0;
};

// Parses a key. Direction comes from the name: return_code -> zero; time, latency, overhead,
// steptime and the like -> lower; bandwidth, flops, iops, throughput -> higher; else either.
// gpu-health's and gpu-stress's readings have directions of their own (clear, info, ...).
MetricAnatomy Anatomize(std::string_view key);

std::string_view DirectionName(Direction d);

// The benchmark of a key as the validator groups it: the text before the last '/'
// ("gpt_models/pytorch-gpt2-large/return_code" -> "gpt_models/pytorch-gpt2-large").
std::string BenchmarkOfKey(std::string_view key);

// SuperBench renamed the metrics of some benchmarks between releases (docs/validate.md, "SuperBench
// naming generations"): ib-loopback's "IB_write_8388608_Avg_4" (v0.3), "ib_write_8388608_ib4_bw"
// (v0.4, v0.5) and "ib_write_bw_8388608" (v0.6 on), mem-bw's "H2D_Mem_BW" and "h2d_bw", ...
struct NamingGeneration {
  std::string_view benchmark;  // "ib-loopback", or "*_models" for every model benchmark
  std::string_view releases;   // "v0.3", "v0.4-v0.5", "v0.4+", "v0.6+"
  std::string_view pattern;    // RE2, anchored, over the metric's last '/' part without its index
  std::vector<std::string_view> examples;  // metric names (last '/' part) in this generation
};

// Every generation Vigil knows, benchmark by benchmark, oldest first. Thread-safe.
const std::vector<NamingGeneration>& NamingGenerations();

// The generation whose names the key's metric has, or null when its benchmark did not change
// names or the name is none of them. Thread-safe.
const NamingGeneration* NamingGenerationOf(std::string_view key);

}  // namespace vigil
