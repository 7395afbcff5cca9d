// Slurm hostlists: "gpu[001-004,007],login1" and their expansion into node names.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "vigil/core/status.h"

namespace vigil::reliability {

// The most names one hostlist may expand to; a larger one is rejected rather than allocated.
inline constexpr int64_t kMaxHostlistNames = int64_t{1} << 20;

// Calls `emit` with each node name of a Slurm hostlist, in order. Commas outside brackets separate
// items; each bracket holds comma-separated numbers or lo-hi ranges, and several brackets in one
// item expand to every combination ("r[1-2]n[1-2]" is r1n1,r1n2,r2n1,r2n2). A range keeps the
// zero padding of its low end ("[08-10]" is 08,09,10). The view passed to `emit` is valid only
// during the call. InvalidArgument naming what is wrong for an unbalanced bracket, an empty item,
// a reversed range, or more than kMaxHostlistNames names.
Status ExpandHostlist(std::string_view list, const std::function<void(std::string_view)>& emit);

// The compact form of `names`: runs of names that differ only in a trailing number of the same
// width become "prefix[lo-hi,...]". Order is kept; ExpandHostlist(CompressHostlist(x)) == x for
// names without brackets or commas.
std::string CompressHostlist(std::span<const std::string> names);

}  // namespace vigil::reliability
