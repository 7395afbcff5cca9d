#include "vigil/telemetry/http_client.h"

#include <fmt/format.h>
#include <httplib.h>

#include "vigil/core/text.h"

namespace vigil::telemetry {

Result<HttpTarget> ConnectHttp(const std::string& url, std::string_view flag, double timeout_s) {
  constexpr std::string_view kScheme = "http://";
  if (url.rfind(kScheme, 0) != 0 || url.size() == kScheme.size() || url[kScheme.size()] == '/') {
    return Status::InvalidArgument(
        fmt::format("{}: {} is not an http://host:port URL", flag, Quote(url)));
  }
  const size_t slash = url.find('/', kScheme.size());
  HttpTarget t;
  t.prefix = slash == std::string::npos ? "" : url.substr(slash);
  while (!t.prefix.empty() && t.prefix.back() == '/') t.prefix.pop_back();
  t.client = std::make_unique<httplib::Client>(url.substr(0, slash));
  if (!t.client->is_valid()) {
    return Status::InvalidArgument(fmt::format("{}: {} is not a valid URL", flag, Quote(url)));
  }
  const auto usec = static_cast<time_t>(timeout_s * 1e6);
  t.client->set_connection_timeout(usec / 1000000, usec % 1000000);
  t.client->set_read_timeout(usec / 1000000, usec % 1000000);
  t.client->set_write_timeout(usec / 1000000, usec % 1000000);
  return t;
}

}  // namespace vigil::telemetry
