// vigil bench list: the benchmarks this binary has, their suites and parameters.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/common.h"

namespace vigil::cli {

struct BenchListOptions {
  bool json = false;  // a JSON array instead of a table
};

CLI::App* SetupBenchList(CLI::App& bench, BenchListOptions& options);
CommandResult RunBenchList(const BenchListOptions& options);

}  // namespace vigil::cli
