// An HTTP client for a base URL given on the command line (http[s]://host[:port][/prefix]): what
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

// How an https:// URL's server is trusted, and how this client proves who it is.
struct TlsClientOptions {
  std::string ca_file;    // PEM CA bundle that signed the server's certificate; "": the system's
  std::string cert_file;  // PEM client certificate, for a server that asks for one; "": none
  std::string key_file;   // its private key
};

struct HttpTarget {
  std::unique_ptr<httplib::Client> client;  // connected to the URL's host and port
  std::string prefix;                       // the URL's path without trailing '/', or ""
};

// InvalidArgument "<flag>: ..." when `url` is not an http:// or https:// URL with a host, or
// TLS options are given for http:// or name files that cannot be read. Connection and read
// time-outs are `timeout_s`. An https:// server's certificate is always verified.
Result<HttpTarget> ConnectHttp(const std::string& url, std::string_view flag, double timeout_s,
                               const TlsClientOptions& tls = {});

}  // namespace vigil::telemetry
