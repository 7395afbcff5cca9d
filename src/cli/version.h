// vigil version: what this binary is.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/common.h"

namespace vigil::cli {

struct VersionOptions {
  bool json = false;  // print a JSON object instead of a line
};

CLI::App* SetupVersion(CLI::App& parent, VersionOptions& options);
CommandResult RunVersion(const VersionOptions& options);

// "0.1.0"
std::string_view VigilVersion();

}  // namespace vigil::cli
