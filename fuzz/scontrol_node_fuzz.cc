// What scontrol prints comes from outside: reading a node's line never crashes, and what it reads
// is consistent (a name, at least one state flag, a reason of one line).
#include <cstdint>
#include <cstdlib>
#include <string>

#include "vigil/cluster/slurm.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const vigil::Result<vigil::cluster::SlurmNode> node = vigil::cluster::ParseScontrolNode(text);
  if (!node.ok()) return 0;
  if (node->name.empty() || node->name.find(' ') != std::string::npos) std::abort();
  if (node->DrainedByVigil() && !node->Drained()) std::abort();
  for (const std::string& flag : node->state) {
    if (flag.empty() || flag.find_first_of(" +") != std::string::npos) std::abort();
  }
  return 0;
}
