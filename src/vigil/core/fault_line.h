// How every line that names a node's fault begins: the line of `vigil run --suite health` and
// the drain reasons Vigil writes to Slurm, which is how a later resume (or a person reading
// `sinfo -R`) tells Vigil's drains from everyone else's (docs/slurm.md). One constant for the
// module that writes the line (learned) and those that act on it (cluster, remediate, agent).
#pragma once

#include <string_view>

namespace vigil {

inline constexpr std::string_view kFaultLinePrefix = "vigil:";

}  // namespace vigil
