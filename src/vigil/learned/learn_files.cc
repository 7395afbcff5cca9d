#include "vigil/learned/learn_files.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <utility>

#include "vigil/core/json.h"
#include "vigil/results/fleet_files.h"
#include "vigil/results/summary.h"

namespace vigil::learned {

Result<LearnedFromFiles> LearnFromFiles(const LearnRequest& request, Env& env) {
  VIGIL_RETURN_IF_ERROR(env.CheckWritable(request.out));
  VIGIL_ASSIGN_OR_RETURN(const FleetTable table, ReadFleetFiles(request.data, env));
  LearnedFromFiles out;
  Result<LearnedCriteria> criteria = Learn(table, request.options);
  if (!criteria.ok()) {  // what was learned from: the files
    return Status(criteria.status().code(), fmt::format("{}: {}", fmt::join(request.data, ", "),
                                                        criteria.status().message()));
  }
  out.criteria = *std::move(criteria);
  VIGIL_RETURN_IF_ERROR(
      env.WriteFileAtomic(request.out, DumpJson(CriteriaToJson(out.criteria), 1)));
  out.nodes = table.node_count();
  out.metrics = table.metric_count();
  out.reach = ReachOf(out.criteria);
  return out;
}

}  // namespace vigil::learned
