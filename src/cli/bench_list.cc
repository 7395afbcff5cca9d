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
                              {"help", p.help}});
      }
      out.push_back(Json{{"name", b->name()},
                         {"component", b->component()},
                         {"description", b->description()},
                         {"quick", b->in_quick_suite()},
                         {"params", std::move(params)}});
    }
    fmt::print("{}\n", DumpJson(out, 2));
    return ExitCode::kHealthy;
  }
  Table table({"NAME", "COMPONENT", "SUITES", "DESCRIPTION"});
  for (const Benchmark* b : registry.All()) {
    table.Add({std::string(b->name()), std::string(b->component()),
               b->in_quick_suite() ? "quick,full" : "full", std::string(b->description())});
  }
  fmt::print("{}", table.ToString());
  fmt::print("\nParameters (set with --set <benchmark>.<name>=<value>; quick/full defaults):\n");
  Table params({"  PARAMETER", "KIND", "QUICK", "FULL", "MEANING"});
  for (const Benchmark* b : registry.All()) {
    for (const ParamSpec& p : b->params()) {
      params.Add({fmt::format("  {}.{}", b->name(), p.name), std::string(KindName(p.kind)),
                  p.quick_default, p.full_default, p.help});
    }
  }
  fmt::print("{}", params.ToString());
  return ExitCode::kHealthy;
}

}  // namespace vigil::cli
