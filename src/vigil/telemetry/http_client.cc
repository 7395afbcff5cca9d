#include "vigil/telemetry/http_client.h"

#include <fmt/format.h>
#include <httplib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "vigil/core/text.h"

namespace vigil::telemetry {

Result<HttpTarget> ConnectHttp(const std::string& url, std::string_view flag, double timeout_s,
                               const TlsClientOptions& tls) {
  const bool https = url.rfind("https://", 0) == 0;
  const size_t host_at = https ? 8 : 7;
  if ((!https && url.rfind("http://", 0) != 0) || url.size() == host_at || url[host_at] == '/') {
    return Status::InvalidArgument(fmt::format(
        "{}: {} is not an http://host:port or https://host:port URL", flag, Quote(url)));
  }
  if (!https && !(tls.ca_file.empty() && tls.cert_file.empty() && tls.key_file.empty())) {
    return Status::InvalidArgument(
        fmt::format("{}: {} is http://: --ca-file, --client-cert and --client-key are for https://",
                    flag, Quote(url)));
  }
  if (tls.cert_file.empty() != tls.key_file.empty()) {
    return Status::InvalidArgument("--client-cert and --client-key go together");
  }
  for (const std::string* f : {&tls.ca_file, &tls.cert_file, &tls.key_file}) {
    if (!f->empty() && access(f->c_str(), R_OK) != 0) {
      return Status::InvalidArgument(fmt::format("{}: cannot read: {}", *f, std::strerror(errno)));
    }
  }
  const size_t slash = url.find('/', host_at);
  HttpTarget t;
  t.prefix = slash == std::string::npos ? "" : url.substr(slash);
  while (!t.prefix.empty() && t.prefix.back() == '/') t.prefix.pop_back();
  t.client = std::make_unique<httplib::Client>(url.substr(0, slash), tls.cert_file, tls.key_file);
  if (!t.client->is_valid()) {
    return Status::InvalidArgument(fmt::format("{}: {} is not a valid URL", flag, Quote(url)));
  }
  if (https) {
    t.client->enable_server_certificate_verification(true);
    if (!tls.ca_file.empty()) t.client->set_ca_cert_path(tls.ca_file.c_str());
  }
  const auto usec = static_cast<time_t>(timeout_s * 1e6);
  t.client->set_connection_timeout(usec / 1000000, usec % 1000000);
  t.client->set_read_timeout(usec / 1000000, usec % 1000000);
  t.client->set_write_timeout(usec / 1000000, usec % 1000000);
  return t;
}

}  // namespace vigil::telemetry
