// A remediation policy is a file an operator writes: reading it never crashes or throws, an
// error names the file and a line, and a policy that reads is within the documented ranges.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "vigil/remediate/policy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const vigil::Result<vigil::remediate::Policy> p =
      vigil::remediate::ParsePolicy(text, "policy.yaml");
  if (!p.ok()) {
    if (p.status().message().rfind("policy.yaml:", 0) != 0) std::abort();
    return 0;
  }
  if (!(p->max_drained_share >= 0 && p->max_drained_share <= 1)) std::abort();
  if (p->lemon_defective < 1 || p->lemon_defective > p->lemon_uploads) std::abort();
  if (p->rate_actions < 1 || !(p->rate_per_s > 0)) std::abort();
  if (p->retry_attempts < 1 || !(p->retry_initial_s > 0) || p->retry_max_s < p->retry_initial_s) {
    std::abort();
  }
  if (p->backend == vigil::remediate::BackendKind::kCommand && p->command.argv.empty()) {
    std::abort();
  }
  return 0;
}
