// A jobs file (`vigil plan reconfigure --jobs`) is a file an operator writes: reading it never
// crashes or throws, an error names the file and a line, and jobs that read can be planned.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "vigil/plan/reconfigure.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto jobs = vigil::plan::ParseJobs(text, "jobs.yaml");
  if (!jobs.ok()) {
    if (jobs.status().message().rfind("jobs.yaml:", 0) != 0) std::abort();
    return 0;
  }
  for (const vigil::plan::JobCurve& j : *jobs) {
    if (j.points.empty() || j.weight < 0 || j.transition_s < 0) std::abort();
  }
  // A small cluster keeps each run fast; the plan never uses more than it has.
  const auto plan = vigil::plan::PlanReconfiguration(*jobs, 512, 3600);
  if (plan.ok() && plan->gpus_used > 512) std::abort();
  return 0;
}
