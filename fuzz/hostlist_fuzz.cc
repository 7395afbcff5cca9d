// Slurm hostlists come from outside: expansion never crashes, stays within its limit, and the
// compact form of what it expands expands back to the same names.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "vigil/reliability/hostlist.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> names;
  const vigil::Status s = vigil::reliability::ExpandHostlist(
      text, [&](std::string_view name) { names.emplace_back(name); });
  if (!s.ok()) return 0;
  if (names.empty() || static_cast<int64_t>(names.size()) > vigil::reliability::kMaxHostlistNames) {
    std::abort();
  }
  std::vector<std::string> again;
  const std::string compact = vigil::reliability::CompressHostlist(names);
  if (!vigil::reliability::ExpandHostlist(compact,
                                          [&](std::string_view n) { again.emplace_back(n); })
           .ok() ||
      again != names) {
    std::abort();
  }
  return 0;
}
