// A jobs file (`vigil plan reconfigure --jobs`) is a file an operator writes: reading it never
// crashes or throws, an error names the file and a line, and jobs that read can be planned.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "vigil/plan/reconfigure.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto jobs = vigil::plan::ParseJobs(text, "jobs.yaml");
  if (!jobs.ok()) {
    if (jobs.status().message().rfind("jobs.yaml:", 0) != 0) std::abort();
    return 0;
  }
  // A job's curve is its points or its model (whose points come later, from files), never both.
  std::vector<vigil::plan::JobCurve> with_points;
  for (const vigil::plan::JobCurve& j : *jobs) {
    if (j.points.empty() == !j.model || j.weight < 0 || j.transition_s < 0) std::abort();
    if (j.model && (j.model->sizes.empty() || j.model->global_batch < 1)) std::abort();
    if (!j.model) with_points.push_back(j);
  }
  if (with_points.empty()) return 0;
  // A small cluster keeps each run fast; the plan never uses more than it has.
  const auto plan = vigil::plan::PlanReconfiguration(with_points, 512, 3600);
  if (plan.ok() && plan->gpus_used > 512) std::abort();
  return 0;
}
