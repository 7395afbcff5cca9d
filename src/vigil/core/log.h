// Logging to stderr through spdlog. Library code logs with spdlog::debug/info/warn/error; the CLI
// decides once, at start-up, how much of it the user sees.
#pragma once

#include <string>

#include "vigil/core/status.h"

namespace vigil {

// verbosity: -1 quiet (warnings and errors only), 0 normal (progress), 1 verbose (debug),
// 2 or more trace. Call once from main before other threads start.
void InitLogging(int verbosity);

// Sends the log to `path` (appended, each line with its UTC time) instead of stderr, or opens
// the same path again after it was rotated. IoError naming the path when it cannot be opened;
// the log stays where it was.
Status LogToFile(const std::string& path);

}  // namespace vigil
