// Serves an Api over HTTP (cpp-httplib): a pool of worker threads, body size limit, JSON bodies
// for the errors the HTTP layer itself raises (413, 400).
#pragma once

#include <memory>
#include <string>

#include "vigil/core/status.h"
#include "vigil/server/api.h"

namespace httplib {
class Server;
}

namespace vigil::server {

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 8080;   // 0: any free port
  int threads = 32;  // connections served at once (each keep-alive client holds one)
  size_t max_body = 64 << 20;
};

class HttpServer {
 public:
  HttpServer(Api& api, HttpOptions options);
  ~HttpServer();

  // Binds the socket; the port bound. IoError when the address cannot be bound.
  Result<int> Bind();
  // Serves until Stop() (from another thread or a signal watcher).
  void Serve();
  void Stop();

 private:
  Api& api_;
  const HttpOptions options_;
  std::unique_ptr<httplib::Server> server_;
  int listen_fd_ = -1;  // the listening socket, once bound
};

}  // namespace vigil::server
