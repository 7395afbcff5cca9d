// Logging to stderr through spdlog. Library code logs with spdlog::debug/info/warn/error; the CLI
// decides once, at start-up, how much of it the user sees.
#pragma once

namespace vigil {

// verbosity: -1 quiet (warnings and errors only), 0 normal (progress), 1 verbose (debug),
// 2 or more trace. Call once from main before other threads start.
void InitLogging(int verbosity);

}  // namespace vigil
