#include "vigil/server/client.h"

#include <fmt/format.h>
#include <httplib.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>

#include "vigil/core/clock.h"
#include "vigil/core/text.h"
#include "vigil/telemetry/http_client.h"

namespace vigil::server {
namespace {

// The bearer token, when there is one.
httplib::Headers AuthHeaders(const std::string& token) {
  httplib::Headers headers;
  if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
  return headers;
}

// The answer's JSON, or the error its status says (ReportClient::Upload's).
Result<Json> Answer(const httplib::Result& res, const std::string& url, std::string_view what) {
  if (!res) {
    return Status::Unavailable(
        fmt::format("{}: cannot reach the server: {}", url, httplib::to_string(res.error())));
  }
  Result<Json> answer = ParseJson(res->body, url);
  std::string message = answer.ok() && answer->is_object() && answer->contains("error") &&
                                (*answer)["error"].is_string()
                            ? (*answer)["error"].get<std::string>()
                            : res->body.substr(0, 200);
  if (res->status >= 500) {
    return Status::Unavailable(fmt::format("{}: server error {}: {}", url, res->status, message));
  }
  if (res->status >= 400) {
    return Status::InvalidArgument(
        fmt::format("{}: {} refused ({}): {}", url, what, res->status, message));
  }
  if (!answer.ok()) return answer.status();
  return answer;
}

}  // namespace

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
  const std::string path = prefix_ + std::string(endpoint);
  return Answer(
      client_->Post(path, AuthHeaders(token_), body.data(), body.size(), "application/json"), url_,
      what);
}

Result<UploadVerdict> ReportClient::NodeVerdict(std::string_view node) {
  std::string escaped;
  for (const char c : node) {
    const bool plain =
        std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '~';
    escaped += plain ? std::string(1, c) : fmt::format("%{:02X}", static_cast<unsigned char>(c));
  }
  httplib::Result res =
      client_->Get(prefix_ + "/api/v1/nodes/" + escaped + "?limit=1", AuthHeaders(token_));
  if (res && res->status == 404) {
    return Status::NotFound(fmt::format("{}: no upload of node {}", url_, Quote(node)));
  }
  VIGIL_ASSIGN_OR_RETURN(const Json answer, Answer(res, url_, "node"));
  UploadVerdict v;
  v.node = std::string(node);
  if (answer.is_object()) {
    v.verdict = answer.value("verdict", "");
    v.criteria_version = answer.value("criteria_version", int64_t{0});
    for (const Json& f : answer.value("failing", Json::array())) {
      if (f.is_string()) v.failing.push_back(f.get<std::string>());
    }
  }
  return v;
}

Result<std::string> ReportClient::History() {
  httplib::Result res = client_->Get(prefix_ + "/api/v1/history", AuthHeaders(token_));
  if (res && res->status == 200) return std::move(res->body);
  // Unreachable, or an error answer: Answer says which.
  VIGIL_RETURN_IF_ERROR(Answer(res, url_, "history").status());
  return Status::Unavailable(fmt::format("{}: history: unexpected answer {}", url_, res->status));
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

Result<std::string> ReadToken(const std::string& path, Env& env) {
  VIGIL_ASSIGN_OR_RETURN(std::string text, env.ReadFile(path));
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
                                                 const telemetry::TlsClientOptions& tls,
                                                 double timeout_s) {
  if (url.empty()) return std::unique_ptr<ReportClient>();
  std::string token;
  if (!token_file.empty()) {
    VIGIL_ASSIGN_OR_RETURN(token, ReadToken(token_file));
  }
  return ReportClient::Create(url, std::move(token), timeout_s, tls);
}

Result<select::History> FetchFleetHistory(const std::string& url, const std::string& token_file,
                                          const telemetry::TlsClientOptions& tls) {
  VIGIL_ASSIGN_OR_RETURN(const std::unique_ptr<ReportClient> client,
                         ReporterOf(url, token_file, tls));
  VIGIL_ASSIGN_OR_RETURN(const std::string text, client->History());
  return select::ParseHistory(text, url);
}

Result<std::string> SpoolDocument(const std::string& dir, std::string_view node, double now,
                                  std::string_view text, Env& env) {
  if (Status made = env.CreateDirectories(dir); !made.ok()) {
    return Status::IoError(fmt::format("{}: cannot create: {}", dir, made.message()));
  }
  std::string safe(node);
  std::replace_if(
      safe.begin(), safe.end(),
      [](char c) {
        return !(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.');
      },
      '_');
  // The first free name: WriteNewFile never replaces a file, even one another thread or process
  // spools under the same name at the same instant.
  const std::string stem = fmt::format("{}/{}-{}", dir, FormatUtcCompact(now), safe);
  for (int n = 1;; ++n) {
    std::string path = n == 1 ? stem + ".json" : fmt::format("{}-{}.json", stem, n);
    VIGIL_ASSIGN_OR_RETURN(const bool created, env.WriteNewFile(path, text));
    if (created) return path;
  }
}

Result<DrainReport> DrainSpool(const std::string& dir, Reporter& client, Env& env) {
  Result<std::vector<std::string>> names = env.ListDirectory(dir);
  if (!names.ok()) {
    return Status::IoError(
        fmt::format("{}: cannot read the spool: {}", dir, names.status().message()));
  }
  std::vector<std::string> files;
  for (const std::string& name : *names) {
    if (!name.ends_with(".json")) continue;
    const std::string path = dir + "/" + name;
    Result<FileInfo> info = env.Stat(path);
    if (info.ok() && info->type == FileType::kRegular) files.push_back(path);
  }
  DrainReport report;
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string& f = files[i];
    VIGIL_ASSIGN_OR_RETURN(std::string body, env.ReadFile(f));
    Result<Json> answer = client.Upload(body);
    if (answer.ok()) {
      if (Status removed = env.RemoveFile(f); !removed.ok()) {
        return Status::IoError(fmt::format("{}: sent but cannot remove: {}", f, removed.message()));
      }
      report.sent.push_back(f);
      report.answers.push_back(std::move(answer).value());
      continue;
    }
    if (answer.status().code() != StatusCode::kInvalidArgument) {
      report.stopped = answer.status();
      report.kept.assign(files.begin() + static_cast<std::ptrdiff_t>(i), files.end());
      break;
    }
    spdlog::warn("{}: {}", f, answer.status().message());
    const std::string aside = dir + "/rejected";
    Status moved = env.CreateDirectories(aside);
    if (moved.ok()) moved = env.RenameFile(f, aside + "/" + f.substr(dir.size() + 1));
    if (!moved.ok()) {
      return Status::IoError(fmt::format("{}: cannot move aside: {}", f, moved.message()));
    }
    report.rejected.push_back(f);
  }
  return report;
}

std::string ReportSummaryLine(const ReportTally& t) {
  const auto documents = [](size_t n) {
    return fmt::format("{} document{}", n, n == 1 ? "" : "s");
  };
  std::string line = fmt::format("Sent {} ({} node{} defective)", documents(t.sent), t.defective,
                                 t.defective == 1 ? "" : "s");
  if (!t.spool.empty()) {
    line += fmt::format("; {} refused", t.refused);
    if (t.refused > 0) line += fmt::format(" (moved to {}/rejected)", t.spool);
    line += fmt::format("; {} kept in {}", t.kept, t.spool);
    if (t.kept > 0) line += " (the server stopped answering)";
  }
  return line + ".";
}

}  // namespace vigil::server
