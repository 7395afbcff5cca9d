#include "vigil/telemetry/prometheus_client.h"

#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>

#include "vigil/telemetry/http_client.h"

namespace vigil::telemetry {

PrometheusClient::PrometheusClient(std::string url, std::string prefix,
                                   std::unique_ptr<httplib::Client> client)
    : url_(std::move(url)), prefix_(std::move(prefix)), client_(std::move(client)) {}

PrometheusClient::~PrometheusClient() = default;

Result<std::unique_ptr<PrometheusClient>> PrometheusClient::Create(const std::string& url,
                                                                   double timeout_s,
                                                                   const TlsClientOptions& tls) {
  VIGIL_ASSIGN_OR_RETURN(HttpTarget t, ConnectHttp(url, "--prometheus", timeout_s, tls));
  return std::unique_ptr<PrometheusClient>(
      new PrometheusClient(url, std::move(t.prefix), std::move(t.client)));
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
