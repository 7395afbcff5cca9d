// vigil run: benchmark this node, print what every component achieved, write the results.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/common.h"
#include "vigil/agent/node_agent.h"

namespace vigil::cli {

struct RunOptions {
  agent::NodeAgentOptions agent;     // everything but how to print
  bool json = false;                 // print the document as JSON instead of the table
  std::string drain_jitter = "10s";  // agent.drain_jitter_s, as the flag gives it
};

CLI::App* SetupRun(CLI::App& parent, RunOptions& options);
CommandResult RunRun(const RunOptions& options);

}  // namespace vigil::cli
