// vigil serve: the fleet service (HTTP API, dashboard, /metrics) over a SQLite store; and
// vigil report: send results documents (and a spool of them) to it.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/common.h"
#include "vigil/server/fleet_main.h"

namespace vigil::cli {

struct ServeOptions {
  server::FleetServiceOptions service;  // all but --listen, as the flags give them
  std::string listen = "127.0.0.1:8080";
};

CLI::App* SetupServe(CLI::App& parent, ServeOptions& options);
CommandResult RunServe(const ServeOptions& options);

struct ReportOptions {
  std::vector<std::string> files;
  std::string spool;
  std::string url;
  std::string token_file;
  telemetry::TlsClientOptions tls;
  bool json = false;
};

CLI::App* SetupReport(CLI::App& parent, ReportOptions& options);
CommandResult RunReport(const ReportOptions& options);

}  // namespace vigil::cli
