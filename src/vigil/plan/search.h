// The strategy search of `vigil plan search` (issue 26 part 3): every valid parallel layout of a
// model on a number of GPUs within a memory limit, ranked by the training step model's predicted
// throughput; on a cluster of two GPU types (or of healthy and degraded nodes), pipeline stages
// placed by speed as AMP does (Li et al. 2022), blocks split between the types so that their
// stages take equal time (docs/plan.md, "Strategy search").
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "vigil/core/status.h"
#include "vigil/plan/hardware.h"
#include "vigil/plan/model_spec.h"
#include "vigil/plan/train.h"

namespace vigil::plan {

struct SearchRequest {
  ModelSpec model;
  HardwareProfile hw;          // the (first) GPU type
  int64_t gpus = 0;            // all GPUs, of both types
  int64_t global_batch = 0;    // sequences per step
  int64_t micro_batch = 0;     // sequences per micro-batch; 0: each of 1, 2, 4 and 8
  double memory_limit_gb = 0;  // per GPU; 0: each type's own memory
  Precision precision = Precision::kBf16;
  Attention attention = Attention::kFlash;
  bool sequence_parallel = true;          // Layout::sequence_parallel of every layout
  std::optional<HardwareProfile> second;  // a second GPU type (or degraded nodes), if any
  int64_t second_gpus = 0;                // how many of the GPUs are of the second type
  size_t top = 10;                        // layouts to keep, best first
};

struct Candidate {
  Layout layout;
  TrainPrediction prediction;
  // On a mixed cluster: the stages and blocks per stage of each type ({0, 0} for the second
  // when it has none), and the same layout's prediction with the blocks spread evenly (what a
  // placement blind to speed gets).
  StageGroup first, second;
  std::optional<TrainPrediction> even;
};

struct SearchResult {
  std::vector<Candidate> best;  // by tokens/s, highest first; at most `top`
  int64_t layouts = 0;          // valid layouts evaluated
  int64_t fitting = 0;          // of them, those within the memory limit
};

// Every layout: TP a divisor of the heads up to a node's GPUs, PP a divisor of the layers, VPP a
// divisor of the blocks per stage (up to 8; 1 on a mixed cluster), CP a power of two (up to 8),
// DP what is left, EP a divisor of the experts and of DP, micro-batches of 1, 2, 4 or 8
// sequences (or the request's one size), each recomputation, ZeRO 0 to 3. On a mixed cluster a
// layout counts when a whole number of its stages fills the second type's GPUs. InvalidArgument
// when the request is malformed, or when no layout fits (naming the least memory any layout needs).
// Pure; thread-safe.
Result<SearchResult> SearchLayouts(const SearchRequest& request, const TrainAssumptions& a = {});

// The blocks per stage of each type that make the slowest stage fastest: `stages_second` stages on
// the second type, the rest on the first, their blocks adding up to the model's layers.
// {first, second} with layers 0 where no split gives every stage at least one block.
std::pair<StageGroup, StageGroup> BalanceStages(const ModelSpec& model, const Layout& layout,
                                                const HardwareProfile& first,
                                                const HardwareProfile& second,
                                                int64_t stages_second,
                                                const TrainAssumptions& a = {});

}  // namespace vigil::plan
