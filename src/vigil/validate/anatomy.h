// What a metric key says about itself, for criteria learned from the fleet: which population it
// belongs to (its family), which component of the node it measures, which way is better, and its
// place in a sweep. Keys follow ARCHITECTURE.md: "<benchmark>/<metric>[:<index>]".
#pragma once

#include <string>
#include <string_view>

namespace vigil::validate {

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
  std::string family;     // the key without its index: one population over all components
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

}  // namespace vigil::validate
