#include "vigil/server/client.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <httplib.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <system_error>

#include "vigil/core/clock.h"
#include "vigil/core/file.h"
#include "vigil/core/text.h"
#include "vigil/telemetry/http_client.h"

namespace vigil::server {

namespace fs = std::filesystem;

ReportClient::ReportClient(std::string url, std::string prefix, std::string token,
                           std::unique_ptr<httplib::Client> client)
    : url_(std::move(url)),
      prefix_(std::move(prefix)),
      token_(std::move(token)),
      client_(std::move(client)) {}

ReportClient::~ReportClient() = default;

Result<std::unique_ptr<ReportClient>> ReportClient::Create(const std::string& url,
                                                           std::string token, double timeout_s,
                                                           const telemetry::TlsClientOptions& tls) {
  VIGIL_ASSIGN_OR_RETURN(telemetry::HttpTarget t,
                         telemetry::ConnectHttp(url, "--report", timeout_s, tls));
  return std::unique_ptr<ReportClient>(
      new ReportClient(url, std::move(t.prefix), std::move(token), std::move(t.client)));
}

Result<Json> ReportClient::Upload(std::string_view body) {
  return Post("/api/v1/results", "upload", body);
}

Result<Json> ReportClient::PostAlerts(std::string_view body) {
  return Post("/api/v1/alerts", "alerts", body);
}

Result<Json> ReportClient::Post(std::string_view endpoint, std::string_view what,
                                std::string_view body) {
  httplib::Headers headers;
  if (!token_.empty()) headers.emplace("Authorization", "Bearer " + token_);
  const std::string path = prefix_ + std::string(endpoint);
  httplib::Result res = client_->Post(path, headers, body.data(), body.size(), "application/json");
  if (!res) {
    return Status::Unavailable(
        fmt::format("{}: cannot reach the server: {}", url_, httplib::to_string(res.error())));
  }
  Result<Json> answer = ParseJson(res->body, url_);
  std::string message = answer.ok() && answer->is_object() && answer->contains("error") &&
                                (*answer)["error"].is_string()
                            ? (*answer)["error"].get<std::string>()
                            : res->body.substr(0, 200);
  if (res->status >= 500) {
    return Status::Unavailable(fmt::format("{}: server error {}: {}", url_, res->status, message));
  }
  if (res->status >= 400) {
    return Status::InvalidArgument(
        fmt::format("{}: {} refused ({}): {}", url_, what, res->status, message));
  }
  if (!answer.ok()) return answer.status();
  return answer;
}

std::vector<UploadVerdict> VerdictsOf(const Json& answer) {
  std::vector<UploadVerdict> out;
  if (!answer.is_object() || !answer.contains("results") || !answer["results"].is_array()) {
    return out;
  }
  for (const Json& r : answer["results"]) {
    if (!r.is_object()) continue;
    UploadVerdict v;
    v.node = r.value("node", "");
    v.verdict = r.value("verdict", "");
    v.criteria_version = r.value("criteria_version", int64_t{0});
    for (const Json& f : r.value("failing", Json::array())) {
      if (f.is_string()) v.failing.push_back(f.get<std::string>());
    }
    out.push_back(std::move(v));
  }
  return out;
}

Result<std::string> ReadToken(const std::string& path) {
  VIGIL_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  const std::string token(Trim(text));
  if (token.empty())
    return Status::InvalidArgument(fmt::format("{}: the token file is empty", path));
  if (token.find_first_of(" \t\r\n") != std::string::npos) {
    return Status::InvalidArgument(fmt::format("{}: the token has white space inside", path));
  }
  return token;
}

Result<std::unique_ptr<ReportClient>> ReporterOf(const std::string& url,
                                                 const std::string& token_file,
                                                 const telemetry::TlsClientOptions& tls) {
  if (url.empty()) return std::unique_ptr<ReportClient>();
  std::string token;
  if (!token_file.empty()) {
    VIGIL_ASSIGN_OR_RETURN(token, ReadToken(token_file));
  }
  return ReportClient::Create(url, std::move(token), 30, tls);
}

Result<std::string> SpoolDocument(const std::string& dir, std::string_view node, double now,
                                  std::string_view text) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::IoError(fmt::format("{}: cannot create: {}", dir, ec.message()));
  std::string safe(node);
  std::replace_if(
      safe.begin(), safe.end(),
      [](char c) {
        return !(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.');
      },
      '_');
  // Written whole under a name of this process's own (drains read only *.json), then linked to
  // the first free name: link() never replaces a file, where rename() would.
  static std::atomic<int64_t> staged_count{0};
  const std::string staged = fmt::format("{}/.{}-{}.staged", dir, getpid(), staged_count++);
  VIGIL_RETURN_IF_ERROR(WriteFileAtomic(staged, text));
  const std::string stem = fmt::format("{}/{}-{}", dir, FormatUtcCompact(now), safe);
  Result<std::string> out = Status::Internal("unreachable");
  for (int n = 1; !out.ok(); ++n) {
    const std::string path = n == 1 ? stem + ".json" : fmt::format("{}-{}.json", stem, n);
    if (link(staged.c_str(), path.c_str()) == 0) {
      out = path;
    } else if (errno != EEXIST) {
      out = ErrnoError(fmt::format("cannot link {} to {}", staged, path));
      break;
    }
  }
  unlink(staged.c_str());
  // The new name is durable once the directory is (best effort, as WriteFileAtomic's).
  if (const int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
  return out;
}

Result<DrainReport> DrainSpool(const std::string& dir, ReportClient& client) {
  std::vector<std::string> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file() && it->path().extension() == ".json") {
      files.push_back(it->path().string());
    }
  }
  if (ec) return Status::IoError(fmt::format("{}: cannot read the spool: {}", dir, ec.message()));
  std::sort(files.begin(), files.end());
  DrainReport report;
  for (const std::string& f : files) {
    VIGIL_ASSIGN_OR_RETURN(std::string body, ReadFile(f));
    Result<Json> answer = client.Upload(body);
    if (answer.ok()) {
      fs::remove(f, ec);
      if (ec)
        return Status::IoError(fmt::format("{}: sent but cannot remove: {}", f, ec.message()));
      report.sent.push_back(f);
      report.answers.push_back(std::move(answer).value());
      continue;
    }
    if (answer.status().code() != StatusCode::kInvalidArgument) {
      report.stopped = answer.status();
      break;
    }
    spdlog::warn("{}: {}", f, answer.status().message());
    const fs::path aside = fs::path(dir) / "rejected";
    fs::create_directories(aside, ec);
    if (!ec) fs::rename(f, aside / fs::path(f).filename(), ec);
    if (ec) return Status::IoError(fmt::format("{}: cannot move aside: {}", f, ec.message()));
    report.rejected.push_back(f);
  }
  return report;
}

}  // namespace vigil::server
