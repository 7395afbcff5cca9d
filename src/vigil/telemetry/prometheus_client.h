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

class PrometheusClient {
 public:
  // `url` is http[s]://host[:port][/prefix]; InvalidArgument when it is not such a URL.
  static Result<std::unique_ptr<PrometheusClient>> Create(const std::string& url,
                                                          double timeout_s = 10,
                                                          const TlsClientOptions& tls = {});
  ~PrometheusClient();

  // Samples of `query` from `start` to `end` (Unix seconds, inclusive) at `step` seconds, split
  // into requests of at most 10,000 points per series (Prometheus refuses more than 11,000).
  // Unavailable when the server cannot be reached or answers with an error; InvalidArgument when
  // its answer is not the JSON the API documents.
  Status QueryRange(std::string_view query, double start, double end, double step,
                    const SampleSink& sink, int64_t* skipped = nullptr);

  const std::string& url() const { return url_; }

 private:
  PrometheusClient(std::string url, std::string prefix, std::unique_ptr<httplib::Client> client);

  std::string url_;
  std::string prefix_;
  std::unique_ptr<httplib::Client> client_;
};

}  // namespace vigil::telemetry
