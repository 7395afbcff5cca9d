#include "vigil/server/access_log.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstring>

#include "vigil/core/clock.h"
#include "vigil/core/json.h"

namespace vigil::server {

namespace {

Result<FILE*> OpenForAppend(const std::string& path) {
  if (path == "-") return stdout;
  FILE* f = std::fopen(path.c_str(), "ae");
  if (f == nullptr) {
    return Status::IoError(
        fmt::format("cannot open the access log {}: {}", path, std::strerror(errno)));
  }
  return f;
}

}  // namespace

std::string FormatAccessEntry(const AccessEntry& e) {
  std::string out = "{\"time\":\"";
  out += FormatUtc(e.time);
  out += "\",\"client\":";
  AppendJsonString(out, e.client);
  out += ",\"method\":";
  AppendJsonString(out, e.method);
  out += ",\"path\":";
  AppendJsonString(out, e.path);
  fmt::format_to(std::back_inserter(out),
                 ",\"status\":{},\"bytes_in\":{},\"bytes_out\":{},\"seconds\":{:.6f}}}\n", e.status,
                 e.bytes_in, e.bytes_out, e.seconds);
  return out;
}

Result<std::unique_ptr<AccessLog>> AccessLog::Open(std::string path) {
  VIGIL_ASSIGN_OR_RETURN(FILE * f, OpenForAppend(path));
  return std::unique_ptr<AccessLog>(new AccessLog(std::move(path), f));
}

AccessLog::~AccessLog() {
  if (file_ != stdout) std::fclose(file_);
}

void AccessLog::Write(const AccessEntry& e) {
  const std::string line = FormatAccessEntry(e);
  MutexLock lock(mu_);
  const bool ok =
      std::fwrite(line.data(), 1, line.size(), file_) == line.size() && std::fflush(file_) == 0;
  if (!ok && !write_failed_) {
    spdlog::error("cannot write the access log {}: {}", path_, std::strerror(errno));
  }
  write_failed_ = !ok;
}

Status AccessLog::Reopen() {
  if (path_ == "-") return Status::Ok();
  VIGIL_ASSIGN_OR_RETURN(FILE * f, OpenForAppend(path_));
  MutexLock lock(mu_);
  std::fclose(file_);
  file_ = f;
  write_failed_ = false;
  return Status::Ok();
}

}  // namespace vigil::server
