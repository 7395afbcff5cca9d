// Metric keys: "<benchmark>/<metric>[:<index>]", the key grammar of SuperBench's summaries.
//
//   gpu-gemm/bf16_tflops:3       GPU 3
//   cpu-stream/triad_gbps        the whole node
//   gpu-copy/p2p_gbps:0-3        the link from GPU 0 to GPU 3
//   bert_models/pytorch-bert-base/steptime_train_float32   (the metric may contain '/')
//   nccl-bw:ib/allreduce_busbw   (the benchmark may carry an ":annotation")
//
// The index names the component (GPU, NIC, disk, NUMA node) or the link between two, so that a
// verdict can point at it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "vigil/core/status.h"

namespace vigil {

// A component ("3") or a link between two components ("0-3").
struct ComponentIndex {
  int first = 0;
  std::optional<int> second;  // set for a link

  bool operator==(const ComponentIndex&) const = default;
  std::string ToString() const;
};

struct MetricKey {
  std::string benchmark;  // text before the first '/', with any ":annotation"
  std::string metric;     // text after it, without the index
  std::optional<ComponentIndex> index;

  // Parses a key. InvalidArgument naming the key when the benchmark or metric is empty, when the
  // key holds a control character, or when an index does not fit an int. A ':' suffix that is not
  // a number or a pair of numbers is part of the metric name, as SuperBench treats it.
  static Result<MetricKey> Parse(std::string_view key);

  // The benchmark name without its ":annotation" ("nccl-bw:ib" gives "nccl-bw").
  std::string_view BenchmarkName() const;

  // The key without its index: the name shared by all components of one metric.
  std::string BaseName() const;

  // The canonical text: the index without leading zeros ("m:03" prints as "m:3").
  std::string ToString() const;
  bool operator==(const MetricKey&) const = default;
};

}  // namespace vigil
