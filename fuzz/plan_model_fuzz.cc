// A model description is a file a user writes: reading it never crashes or throws, an error names
// the file and a line, and a model that reads has a shape the step model can price (finite,
// positive figures for the simplest layout).
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "vigil/plan/model_spec.h"
#include "vigil/plan/train.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const vigil::Result<vigil::plan::ModelSpec> m = vigil::plan::ParseModelSpec(text, "model.yaml");
  if (!m.ok()) {
    if (m.status().message().rfind("model.yaml:", 0) != 0) std::abort();
    return 0;
  }
  if (m->hidden % m->heads != 0 || m->heads % m->kv_heads != 0 || m->top_k > m->experts) {
    std::abort();
  }
  static const vigil::plan::HardwareProfile hw = *vigil::plan::DatasheetProfile("h100");
  vigil::plan::Layout l;
  l.ep = m->experts;
  l.dp = m->experts;
  l.gpus = m->experts;
  l.global_batch = m->experts;
  if (!vigil::plan::CheckLayout(*m, l, hw).ok()) return 0;
  const vigil::plan::TrainPrediction p = vigil::plan::PredictTrain(*m, l, hw);
  if (!(std::isfinite(p.step_time_s) && p.step_time_s > 0 && std::isfinite(p.memory.Total()) &&
        p.hardware_flops >= p.model_flops)) {
    std::abort();
  }
  return 0;
}
