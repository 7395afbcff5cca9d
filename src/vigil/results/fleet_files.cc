#include "vigil/results/fleet_files.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <utility>

namespace vigil {
namespace {

// One file's table, through `env`.
Result<FleetTable> ReadOne(const std::string& path, Env& env) {
  if (&env == &Env::Default()) return ReadFleetTable(path);
  VIGIL_ASSIGN_OR_RETURN(const std::string text, env.ReadFile(path));
  VIGIL_ASSIGN_OR_RETURN(FleetTable table, ParseFleetTable(text, path));
  table.KeepLastOfEachNode();
  return table;
}

}  // namespace

Result<FleetTable> ReadFleetFiles(const std::vector<std::string>& paths, Env& env) {
  FleetTable all;
  for (const std::string& p : paths) {
    VIGIL_ASSIGN_OR_RETURN(FleetTable t, ReadOne(p, env));
    VIGIL_RETURN_IF_ERROR(all.Append(std::move(t)));
  }
  for (const std::string& w : all.warnings()) spdlog::warn("warning: {}", w);
  if (all.node_count() == 0) {
    return Status::InvalidArgument(fmt::format("{}: no nodes in the file{}", fmt::join(paths, ", "),
                                               paths.size() == 1 ? "" : "s"));
  }
  return all;
}

}  // namespace vigil
