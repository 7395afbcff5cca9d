// An HTTP client for a base URL given on the command line (http://host[:port][/prefix]): what
// `vigil detect --prometheus` and `vigil run --report` connect with.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "vigil/core/status.h"

namespace httplib {
class Client;
}

namespace vigil::telemetry {

struct HttpTarget {
  std::unique_ptr<httplib::Client> client;  // connected to the URL's host and port
  std::string prefix;                       // the URL's path without trailing '/', or ""
};

// InvalidArgument "<flag>: ..." when `url` is not an http:// URL with a host. Connection and
// read time-outs are `timeout_s`.
Result<HttpTarget> ConnectHttp(const std::string& url, std::string_view flag, double timeout_s);

}  // namespace vigil::telemetry
