#include "vigil/core/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace vigil {

void InitLogging(int verbosity) {
  auto logger = spdlog::stderr_color_st("vigil");
  logger->set_pattern(verbosity >= 1 ? "[%H:%M:%S.%e %^%l%$] %v" : "%^%v%$");
  spdlog::level::level_enum level = spdlog::level::info;
  if (verbosity < 0) level = spdlog::level::warn;
  if (verbosity == 1) level = spdlog::level::debug;
  if (verbosity >= 2) level = spdlog::level::trace;
  logger->set_level(level);
  spdlog::set_default_logger(logger);
}

}  // namespace vigil
