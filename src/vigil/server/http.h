// Serves an Api over HTTP/1.1 (Boost.Beast on Asio), plain or TLS, so that no client can starve
// it: connections are asynchronous (an idle or slow one holds a socket and a few KiB, never a
// thread), and every request is bounded before its body is read.
//
// What a request must get through, in order (each refusal a JSON error, then the connection
// closes; docs/serve.md):
//   connection cap ........ 503 beyond max_connections (answered at once, not queued)
//   TLS handshake ......... within header_timeout_s
//   request head .......... within header_timeout_s (idle_timeout_s before the first byte of a
//                           later request on a kept-alive connection); at most max_header_bytes
//                           and max_headers fields (431)
//   Host .................. an IP literal, localhost, or one of allowed_hosts (421): a browser
//                           page on another name (DNS rebinding) cannot read the fleet
//   Range ................. refused (416): every answer is whole
//   Api::Admit ............ the token, checked on the head alone: a client without it never
//                           gets a body byte read
//   body .................. at most max_body bytes whatever the transfer encoding (413), read
//                           within body_timeout_s
// Requests then run on a pool of `threads` handler threads, off the I/O threads.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "vigil/core/status.h"
#include "vigil/server/access_log.h"
#include "vigil/server/api.h"

namespace vigil::server {

struct TlsOptions {
  std::string cert_file;       // PEM certificate chain; empty: plain HTTP
  std::string key_file;        // PEM private key of the certificate
  std::string client_ca_file;  // PEM CA bundle: when set, clients must present a certificate it
                               // signed (mutual TLS)
};

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                // 0: any free port
  int threads = 32;               // requests handled at once (uploads are committed together)
  size_t max_body = 64 << 20;     // bytes, any transfer encoding
  size_t max_connections = 4096;  // open at once; more get 503
  size_t max_header_bytes = 16 << 10;
  size_t max_headers = 100;
  double header_timeout_s = 10;  // TLS handshake, and a request head from its first byte
  double idle_timeout_s = 30;    // a kept-alive connection waiting for its next request
  double body_timeout_s = 120;   // a request body
  std::vector<std::string> allowed_hosts{};  // Host names accepted besides IP literals, localhost
  TlsOptions tls{};
  AccessLog* access_log = nullptr;  // one line per request when set
};

// Whether a Host header names this server: an IP literal (with or without a port), "localhost"
// or one of `allowed` (case-insensitive). An empty header is refused.
bool HostAllowed(std::string_view host_header, const std::vector<std::string>& allowed);

// Whether `host` (a --listen address) is reachable from this machine only: 127.0.0.0/8, ::1 or
// localhost.
bool IsLoopback(std::string_view host);

// The names a server listening on `listen_host` answers to by default: this machine's host
// name (short and as resolved) and `listen_host` when it is a name.
std::vector<std::string> DefaultAllowedHosts(std::string_view listen_host);

// The request target split: the path percent-decoded, the query's fields ('+' is a space).
// InvalidArgument for a target that is not origin-form ("/...") or a malformed escape.
Status ParseTarget(std::string_view target, Request& out);

class HttpServer {
 public:
  class Impl;  // http.cc's, named here for its connections
  HttpServer(Api& api, HttpOptions options);
  ~HttpServer();

  // Binds the socket (and loads the TLS certificate); the port bound. IoError when the address
  // cannot be bound, InvalidArgument when the certificate or key cannot be used.
  Result<int> Bind();
  // Serves until Stop() (from another thread or a signal watcher).
  void Serve();
  // Stops accepting, lets the requests being handled finish, and makes Serve return.
  void Stop();

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace vigil::server
