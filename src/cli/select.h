// vigil select: which nodes to validate now, with which benchmarks, from the fleet's history
// (docs/select.md).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cli/common.h"
#include "vigil/agent/select_submit.h"
#include "vigil/telemetry/http_client.h"

namespace vigil::cli {

struct SelectCommandOptions {
  std::string history;              // a history file, or a directory of them
  std::string url;                  // or the fleet service (vigil serve) whose history to plan from
  std::string token_file;           // --url: its bearer token
  telemetry::TlsClientOptions tls;  // https:// --url
  std::string horizon = "1d";       // the interval the expected penalty is counted over
  double budget = 0;                // validation node-hours the plan may spend; 0: no limit
  std::string max_time = "0";       // one node's validation at most this long; 0: no limit
  double max_share = 0.05;          // at most this share of the fleet at once
  double cost_weight = 1;           // a validation node-hour in incident node-hours
  bool json = false;
  bool submit = false;                  // submit the plan to Slurm, one job per validation
  agent::SubmitOptions submit_options;  // --submit's flags; its report_url, token_file and tls
                                        // are --url's, set when the command runs
};

CLI::App* SetupSelect(CLI::App& app, SelectCommandOptions& options);
CommandResult RunSelect(const SelectCommandOptions& options);

}  // namespace vigil::cli
