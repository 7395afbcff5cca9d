// Layouts the plan tests share, Megatron-LM's as its published tables run them, and the H100.
#pragma once

#include <cstdint>

#include "vigil/plan/hardware.h"
#include "vigil/plan/train.h"

namespace vigil::plan {

// The H100's datasheet profile.
inline HardwareProfile H100() { return *DatasheetProfile("h100"); }

// `gpus` split into tensor x pipeline x data parallelism, a global batch of `batch` sequences,
// full recomputation of activations.
inline Layout Megatron(int64_t gpus, int64_t tp, int64_t pp, int64_t batch) {
  Layout l;
  l.gpus = gpus;
  l.tp = tp;
  l.pp = pp;
  l.dp = gpus / (tp * pp);
  l.global_batch = batch;
  l.recompute = Recompute::kFull;
  return l;
}

}  // namespace vigil::plan
