// Slurm hostlists come from outside: expansion never crashes, stays within its limit, and the
// compact form of what it expands expands back to the same names.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "vigil/reliability/hostlist.h"

// The round trip is checked on lists of up to this many names: one of 800,000 takes longer than
// the fuzzer's timeout to expand twice and compress under its instrumentation.
constexpr int64_t kRoundTripNames = int64_t{1} << 16;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> names;
  int64_t count = 0;
  const vigil::Status s = vigil::reliability::ExpandHostlist(text, [&](std::string_view name) {
    if (++count <= kRoundTripNames) names.emplace_back(name);
  });
  if (!s.ok()) return 0;
  if (count == 0 || count > vigil::reliability::kMaxHostlistNames) std::abort();
  if (count > kRoundTripNames) return 0;
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
