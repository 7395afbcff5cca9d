#include "vigil/server/http.h"

#include <fmt/format.h>
#include <httplib.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace vigil::server {

HttpServer::HttpServer(Api& api, HttpOptions options)
    : api_(api), options_(std::move(options)), server_(std::make_unique<httplib::Server>()) {
  httplib::Server& s = *server_;
  const int threads = std::max(2, options_.threads);
  s.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  s.set_payload_max_length(options_.max_body);
  s.set_tcp_nodelay(true);
  // SO_REUSEADDR only: cpp-httplib's default adds SO_REUSEPORT, which would let a second server
  // share the port silently instead of failing to bind.
  s.set_socket_options([this](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    listen_fd_ = sock;
  });
  // A node reports once per run, on a connection of its own: many nodes finishing together must
  // not be turned away (see Bind), and a client that keeps its connection keeps it.
  s.set_keep_alive_max_count(1000);
  const auto handler = [this](const httplib::Request& in, httplib::Response& out) {
    Request req;
    req.method = in.method;
    req.path = in.path;
    for (const auto& [k, v] : in.params) req.query.try_emplace(k, v);
    req.authorization = in.get_header_value("Authorization");
    req.body = in.body;
    Response r = api_.Handle(req);
    out.status = r.status;
    for (const auto& [k, v] : r.headers) out.set_header(k, v);
    out.set_content(std::move(r.body), r.content_type.c_str());
  };
  s.Get(".*", handler);
  s.Post(".*", handler);
  s.Put(".*", handler);
  s.Delete(".*", handler);
  s.Patch(".*", handler);
  // Errors raised before a handler ran (a body over the limit, a request httplib cannot read)
  // get the API's JSON body too.
  s.set_error_handler([this](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return;
    const std::string reason =
        res.status == 413
            // cpp-httplib also caps form-encoded bodies (curl -d's default type) at 8 KiB, and
            // the request is not visible here to tell which limit was hit.
            ? fmt::format(
                  "request body over the limit of {} bytes (8 KiB when form-encoded: "
                  "send uploads as Content-Type: application/json)",
                  options_.max_body)
            : res.status == 400 ? std::string("malformed HTTP request")
                                : fmt::format("HTTP status {}", res.status);
    Response r = ErrorResponse(res.status, reason);
    api_.Count("other", res.status);
    res.set_content(r.body, r.content_type.c_str());
  });
}

HttpServer::~HttpServer() = default;

Result<int> HttpServer::Bind() {
  const int port = options_.port == 0
                       ? server_->bind_to_any_port(options_.host)
                       : (server_->bind_to_port(options_.host, options_.port) ? options_.port : -1);
  if (port < 0) {
    return Status::IoError(
        fmt::format("cannot listen on {}:{} (in use, or not an address of "
                    "this machine)",
                    options_.host, options_.port));
  }
  // cpp-httplib listens with a backlog of 5 (compiled into Debian's library): a burst of new
  // connections overflows it and the kernel drops their SYNs, which clients retry a second
  // later. Listening again on the bound socket raises the backlog to the system's limit.
  if (listen_fd_ >= 0 && ::listen(listen_fd_, SOMAXCONN) != 0) {
    return Status::IoError(
        fmt::format("cannot listen on {}:{}: {}", options_.host, port, std::strerror(errno)));
  }
  return port;
}

void HttpServer::Serve() { server_->listen_after_bind(); }

void HttpServer::Stop() { server_->stop(); }

}  // namespace vigil::server
