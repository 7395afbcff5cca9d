// What a metric key says about itself, for criteria learned from the fleet: which population it
// belongs to (its family), which component of the node it measures, which way is better, and its
// place in a sweep. Keys follow ARCHITECTURE.md: "<benchmark>/<metric>[:<index>]".
#pragma once

#include <string>
#include <string_view>

namespace vigil::validate {

enum class Direction { kHigher, kLower, kZero, kEither };  // kZero: return codes must be 0

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
MetricAnatomy Anatomize(std::string_view key);

std::string_view DirectionName(Direction d);

// The benchmark of a key as the validator groups it: the text before the last '/'
// ("gpt_models/pytorch-gpt2-large/return_code" -> "gpt_models/pytorch-gpt2-large").
std::string BenchmarkOfKey(std::string_view key);

}  // namespace vigil::validate
