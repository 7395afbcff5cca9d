#include "vigil/core/log.h"

#include <fmt/format.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>

namespace vigil {

namespace {

// The sink of a log sent to a file, which can be opened again (after rotation) while other
// threads log: spdlog's own file sink cannot be reopened.
class SwitchableSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  Status Open(const std::string& path) {
    FILE* f = std::fopen(path.c_str(), "ae");
    if (f == nullptr) {
      return Status::IoError(fmt::format("cannot open the log {}: {}", path, std::strerror(errno)));
    }
    std::lock_guard lock(mutex_);
    if (file_ != nullptr) std::fclose(file_);
    file_ = f;
    return Status::Ok();
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t line;
    formatter_->format(msg, line);
    std::fwrite(line.data(), 1, line.size(), file_);
    std::fflush(file_);
  }
  void flush_() override { std::fflush(file_); }

 private:
  FILE* file_ = nullptr;  // guarded by mutex_; set by the first Open
};

std::shared_ptr<SwitchableSink> g_sink;  // once LogToFile was called

}  // namespace

void InitLogging(int verbosity) {
  // Made, not registered: set_default_logger registers it in place of the default before it, so
  // that a second call (tests; a re-initialising program) does not find the name taken.
  auto logger = std::make_shared<spdlog::logger>(
      "vigil", std::make_shared<spdlog::sinks::stderr_color_sink_st>());
  logger->set_pattern(verbosity >= 1 ? "[%H:%M:%S.%e %^%l%$] %v" : "%^%v%$");
  spdlog::level::level_enum level = spdlog::level::info;
  if (verbosity < 0) level = spdlog::level::warn;
  if (verbosity == 1) level = spdlog::level::debug;
  if (verbosity >= 2) level = spdlog::level::trace;
  logger->set_level(level);
  spdlog::set_default_logger(logger);
}

Status LogToFile(const std::string& path) {
  if (g_sink != nullptr) return g_sink->Open(path);
  auto sink = std::make_shared<SwitchableSink>();
  VIGIL_RETURN_IF_ERROR(sink->Open(path));
  sink->set_formatter(std::make_unique<spdlog::pattern_formatter>("%Y-%m-%dT%H:%M:%S.%eZ %l %v",
                                                                  spdlog::pattern_time_type::utc));
  auto logger = std::make_shared<spdlog::logger>("vigil-file", sink);
  logger->set_level(spdlog::default_logger()->level());
  spdlog::set_default_logger(logger);
  g_sink = std::move(sink);
  return Status::Ok();
}

}  // namespace vigil
