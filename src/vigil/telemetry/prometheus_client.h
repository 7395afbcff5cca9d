// A client of Prometheus' HTTP API (/api/v1/query_range), for `vigil detect --prometheus`.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "vigil/core/status.h"
#include "vigil/telemetry/http_client.h"
#include "vigil/telemetry/readers.h"

namespace httplib {
class Client;
}

namespace vigil::telemetry {

// What Vigil asks of a Prometheus server. PrometheusClient asks one over HTTP; tests of the
// callers (PrometheusSource) give a fake.
class PrometheusApi {
 public:
  virtual ~PrometheusApi() = default;

  // Samples of `query` from `start` to `end` (Unix seconds, inclusive) at `step` seconds, each
  // given to `sink`; answers' samples that cannot be used are counted in `*skipped` (may be
  // null). Unavailable when the server cannot be reached or answers with an error (worth trying
  // again); InvalidArgument when its answer is not the JSON the API documents.
  virtual Status QueryRange(std::string_view query, double start, double end, double step,
                            const SampleSink& sink, int64_t* skipped) = 0;
};

// The PrometheusApi of a server at a URL, over HTTP(S). Not thread-safe (one connection).
class PrometheusClient final : public PrometheusApi {
 public:
  // `url` is http[s]://host[:port][/prefix]; InvalidArgument when it is not such a URL.
  static Result<std::unique_ptr<PrometheusClient>> Create(const std::string& url,
                                                          double timeout_s = 10,
                                                          const TlsClientOptions& tls = {});
  ~PrometheusClient() override;

  // Split into requests of at most 10,000 points per series (Prometheus refuses more than
  // 11,000) to /api/v1/query_range.
  Status QueryRange(std::string_view query, double start, double end, double step,
                    const SampleSink& sink, int64_t* skipped) override;

  const std::string& url() const { return url_; }

 private:
  PrometheusClient(std::string url, std::string prefix, std::unique_ptr<httplib::Client> client);

  std::string url_;
  std::string prefix_;
  std::unique_ptr<httplib::Client> client_;
};

}  // namespace vigil::telemetry
