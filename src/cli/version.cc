#include "cli/version.h"

#include <fmt/format.h>

#include "vigil/bench/cuda/device.h"
#include "vigil/core/json.h"

namespace vigil::cli {

std::string_view VigilVersion() { return VIGIL_VERSION; }

CLI::App* SetupVersion(CLI::App& parent, VersionOptions& options) {
  CLI::App* cmd = parent.add_subcommand("version", "Print Vigil's version and build");
  cmd->add_flag("--json", options.json, "Print a JSON object");
  return cmd;
}

CommandResult RunVersion(const VersionOptions& options) {
  const Json info{{"version", VigilVersion()},
                  {"compiler", __VERSION__},
                  {"cuda", gpu::BuiltWithCuda()},
                  {"build_type", VIGIL_BUILD_TYPE}};
  if (options.json) {
    fmt::print("{}\n", DumpJson(info, 2));
  } else {
    fmt::print("vigil {} (gcc-compatible {}, {}, CUDA {})\n", VigilVersion(), __VERSION__,
               VIGIL_BUILD_TYPE, gpu::BuiltWithCuda() ? "on" : "off");
  }
  return ExitCode::kHealthy;
}

}  // namespace vigil::cli
