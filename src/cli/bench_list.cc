#include "cli/bench_list.h"

#include <fmt/format.h>

#include "vigil/bench/registry.h"
#include "vigil/core/json.h"

namespace vigil::cli {
namespace {

std::string_view KindName(ParamKind kind) {
  switch (kind) {
    case ParamKind::kInt:
      return "int";
    case ParamKind::kBytes:
      return "bytes";
    case ParamKind::kSeconds:
      return "seconds";
    case ParamKind::kFraction:
      return "fraction";
  }
  return "";
}

}  // namespace

CLI::App* SetupBenchList(CLI::App& bench, BenchListOptions& options) {
  CLI::App* cmd = bench.add_subcommand("list", "List the benchmarks, their suites and parameters");
  cmd->add_flag("--json", options.json, "Print a JSON array");
  return cmd;
}

CommandResult RunBenchList(const BenchListOptions& options) {
  const Registry registry = BuiltinRegistry();
  if (options.json) {
    Json out = Json::array();
    for (const Benchmark* b : registry.All()) {
      Json params = Json::array();
      for (const ParamSpec& p : b->params()) {
        params.push_back(Json{{"name", p.name},
                              {"kind", KindName(p.kind)},
                              {"quick_default", p.quick_default},
                              {"full_default", p.full_default},
                              {"health_default", p.Default(Suite::kHealth)},
                              {"help", p.help}});
      }
      out.push_back(Json{{"name", b->name()},
                         {"component", b->component()},
                         {"description", b->description()},
                         {"quick", b->in_quick_suite()},
                         {"health", b->in_health_suite()},
                         {"params", std::move(params)}});
    }
    fmt::print("{}\n", DumpJson(out, 2));
    return ExitCode::kHealthy;
  }
  Table table({"NAME", "COMPONENT", "SUITES", "DESCRIPTION"});
  for (const Benchmark* b : registry.All()) {
    std::string suites = b->in_health_suite() ? "health," : "";
    suites += b->in_quick_suite() ? "quick,full" : "full";
    table.Add({std::string(b->name()), std::string(b->component()), suites,
               std::string(b->description())});
  }
  fmt::print("{}", table.ToString());
  fmt::print(
      "\nParameters (set with --set <benchmark>.<name>=<value>; health/quick/full defaults):\n");
  Table params({"  PARAMETER", "KIND", "HEALTH", "QUICK", "FULL", "MEANING"});
  for (const Benchmark* b : registry.All()) {
    for (const ParamSpec& p : b->params()) {
      params.Add({fmt::format("  {}.{}", b->name(), p.name), std::string(KindName(p.kind)),
                  b->in_health_suite() ? p.Default(Suite::kHealth) : "-", p.quick_default,
                  p.full_default, p.help});
    }
  }
  fmt::print("{}", params.ToString());
  return ExitCode::kHealthy;
}

}  // namespace vigil::cli
