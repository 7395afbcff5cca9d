// `vigil plan train` between its flags and its printing: the model file and the profile read, the
// layout checked, the prediction made, and its JSON and text (docs/plan.md).
#pragma once

#include <string>
#include <vector>

#include "vigil/core/json.h"
#include "vigil/core/status.h"
#include "vigil/plan/hardware.h"
#include "vigil/plan/model_spec.h"
#include "vigil/plan/train.h"

namespace vigil::plan {

struct TrainRequest {
  std::string model_path;             // the model description file (YAML or JSON)
  std::string gpu = "h100";           // the datasheet row
  std::vector<std::string> hardware;  // measured results over it; empty: the datasheet alone
  Layout layout;                    // its recompute, precision and attention: from the texts below
  std::string recompute = "none";   // none, selective, full
  std::string precision = "bf16";   // bf16, fp8
  std::string attention = "flash";  // flash, unfused
};

struct TrainAnswer {
  ModelSpec model;
  HardwareProfile hw;
  Layout layout;
  TrainPrediction prediction;
};

// Reads, checks and predicts. InvalidArgument for a malformed model file (file:line: field), an
// unknown GPU, unreadable results, or a layout CheckLayout refuses (naming the constraint).
// `hw`: the profile of request.gpu and request.hardware when the caller has built it already
// (ProfilesFor); null: built here.
Result<TrainAnswer> AnswerTrain(const TrainRequest& request, const HardwareProfile* hw = nullptr);

// The answer as JSON: step_time_s, tokens_per_s, tflops_per_gpu, mfu, memory_gib_per_gpu, fits,
// and the breakdowns, layout and profile (docs/plan.md lists every field).
Json TrainJson(const TrainAnswer& answer);

// The answer as text: the headline figures, where the step's time goes and the memory per GPU.
std::string TrainText(const TrainAnswer& answer);

// Json of a layout and of a profile, which `plan search` prints too.
Json LayoutJson(const Layout& layout);
// "TP 8 x PP 8 (VPP 1) x DP 16 x CP 1, EP 1": the layout's parallelism, as the text answers give
// it.
std::string LayoutText(const Layout& layout);
Json ProfileJson(const HardwareProfile& hw);

}  // namespace vigil::plan
