// `vigil plan impact --slow` is text a user writes: parsing it never crashes or throws, an error
// names the flag, and ratios that parse are in (0, 1], so that a degraded profile keeps finite,
// positive figures and the step model prices it.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "vigil/plan/impact.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const vigil::Result<vigil::plan::Ratios> r = vigil::plan::ParseSlowdowns(text);
  if (!r.ok()) {
    if (r.status().message().rfind("--slow: ", 0) != 0) std::abort();
    return 0;
  }
  for (const auto& [component, ratio] : *r) {
    if (!(ratio > 0 && ratio <= 1)) std::abort();
  }
  static const vigil::plan::HardwareProfile hw = *vigil::plan::DatasheetProfile("h100");
  static const vigil::plan::ModelSpec model = vigil::plan::GptModel(4, 256, 4);
  vigil::plan::Layout l;
  l.gpus = l.dp = 16;
  l.global_batch = 16;
  const vigil::plan::HardwareProfile degraded = vigil::plan::Degrade(hw, *r);
  const vigil::plan::TrainPrediction healthy = vigil::plan::PredictTrain(model, l, hw);
  const vigil::plan::TrainPrediction slow = vigil::plan::PredictTrain(model, l, degraded);
  if (!(std::isfinite(slow.step_time_s) && slow.step_time_s >= healthy.step_time_s)) std::abort();
  return 0;
}
