#include "vigil/telemetry/prometheus_client.h"

#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>

namespace vigil::telemetry {

PrometheusClient::PrometheusClient(std::string url, std::string prefix,
                                   std::unique_ptr<httplib::Client> client)
    : url_(std::move(url)), prefix_(std::move(prefix)), client_(std::move(client)) {}

PrometheusClient::~PrometheusClient() = default;

Result<std::unique_ptr<PrometheusClient>> PrometheusClient::Create(const std::string& url,
                                                                   double timeout_s) {
  constexpr std::string_view kScheme = "http://";
  if (url.rfind(kScheme, 0) != 0 || url.size() == kScheme.size()) {
    return Status::InvalidArgument(
        fmt::format("--prometheus: {} is not an http://host:port URL", Quote(url)));
  }
  const size_t slash = url.find('/', kScheme.size());
  const std::string host_port =
      url.substr(0, slash == std::string::npos ? std::string::npos : slash);
  std::string prefix = slash == std::string::npos ? "" : url.substr(slash);
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  auto client = std::make_unique<httplib::Client>(host_port);
  if (!client->is_valid()) {
    return Status::InvalidArgument(fmt::format("--prometheus: {} is not a valid URL", Quote(url)));
  }
  const auto usec = static_cast<time_t>(timeout_s * 1e6);
  client->set_connection_timeout(usec / 1000000, usec % 1000000);
  client->set_read_timeout(usec / 1000000, usec % 1000000);
  return std::unique_ptr<PrometheusClient>(
      new PrometheusClient(url, std::move(prefix), std::move(client)));
}

Status PrometheusClient::QueryRange(std::string_view query, double start, double end, double step,
                                    const SampleSink& sink, int64_t* skipped) {
  const double chunk = step * 10000;
  for (double from = start; from <= end; from += chunk + step) {
    const double to = std::min(end, from + chunk);
    const httplib::Params params = {{"query", std::string(query)},
                                    {"start", fmt::format("{:.3f}", from)},
                                    {"end", fmt::format("{:.3f}", to)},
                                    {"step", fmt::format("{}", step)}};
    const std::string path = prefix_ + "/api/v1/query_range";
    auto res = client_->Post(path, params);
    if (!res) {
      return Status::Unavailable(
          fmt::format("{}{}: {}", url_, "/api/v1/query_range", httplib::to_string(res.error())));
    }
    // Prometheus answers errors of the query itself with 400/422 and a JSON body that says why.
    if (res->status != 200 && res->status != 400 && res->status != 422) {
      return Status::Unavailable(fmt::format("{}/api/v1/query_range: HTTP {}", url_, res->status));
    }
    ReadOptions o;
    o.source = url_;
    o.skipped = skipped;
    VIGIL_RETURN_IF_ERROR(ParseQueryRange(res->body, o, sink));
  }
  return Status::Ok();
}

}  // namespace vigil::telemetry
