#include "vigil/server/http.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <malloc.h>
#include <netdb.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <cctype>
#include <chrono>
#include <limits>
#include <optional>
#include <thread>
#include <type_traits>

#include "vigil/core/clock.h"

namespace vigil::server {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using Steady = std::chrono::steady_clock;

namespace {

Steady::duration Seconds(double s) {
  return std::chrono::duration_cast<Steady::duration>(std::chrono::duration<double>(s));
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view View(beast::string_view s) { return {s.data(), s.size()}; }

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

Result<std::string> Unescape(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+' && plus_is_space) {
      out += ' ';
    } else if (s[i] != '%') {
      out += s[i];
    } else {
      const int hi = i + 2 < s.size() ? HexDigit(s[i + 1]) : -1;
      const int lo = hi >= 0 ? HexDigit(s[i + 2]) : -1;
      if (lo < 0) {
        return Status::InvalidArgument(
            fmt::format("malformed %-escape at byte {} of the request target", i + 1));
      }
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    }
  }
  return out;
}

}  // namespace

bool HostAllowed(std::string_view host, const std::vector<std::string>& allowed) {
  std::string_view name = host;
  if (!name.empty() && name.front() == '[') {  // [IPv6]:port
    const size_t close = name.find(']');
    if (close == std::string_view::npos) return false;
    const std::string_view rest = name.substr(close + 1);
    if (!rest.empty() && (rest[0] != ':' || !AllDigits(rest.substr(1)))) return false;
    const std::string address(name.substr(1, close - 1));
    in6_addr a6{};
    return inet_pton(AF_INET6, address.c_str(), &a6) == 1;
  }
  const size_t colon = name.rfind(':');
  if (colon != std::string_view::npos) {
    if (!AllDigits(name.substr(colon + 1))) return false;
    name = name.substr(0, colon);
  }
  if (!name.empty() && name.back() == '.') name.remove_suffix(1);
  if (name.empty()) return false;
  const std::string n = Lower(name);
  in_addr a4{};
  if (inet_pton(AF_INET, n.c_str(), &a4) == 1 || n == "localhost") return true;
  return std::any_of(allowed.begin(), allowed.end(),
                     [&](const std::string& a) { return Lower(a) == n; });
}

bool IsLoopback(std::string_view host) {
  const std::string h(host);
  in_addr a4{};
  if (inet_pton(AF_INET, h.c_str(), &a4) == 1) return (ntohl(a4.s_addr) >> 24) == 127;
  return h == "::1" || Lower(h) == "localhost";
}

std::vector<std::string> DefaultAllowedHosts(std::string_view listen_host) {
  std::vector<std::string> names;
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) == 0 && buf[0] != '\0') {
    names.emplace_back(buf);
    addrinfo hints{};
    hints.ai_flags = AI_CANONNAME;
    addrinfo* info = nullptr;
    if (getaddrinfo(buf, nullptr, &hints, &info) == 0) {
      if (info->ai_canonname != nullptr && names[0] != info->ai_canonname) {
        names.emplace_back(info->ai_canonname);
      }
      freeaddrinfo(info);
    }
  }
  const std::string listen(listen_host);
  in6_addr a6{};
  in_addr a4{};
  if (!listen.empty() && inet_pton(AF_INET, listen.c_str(), &a4) != 1 &&
      inet_pton(AF_INET6, listen.c_str(), &a6) != 1) {
    names.push_back(listen);
  }
  return names;
}

Status ParseTarget(std::string_view target, Request& out) {
  if (target.empty() || target.front() != '/') {
    return Status::InvalidArgument("the request target must be a path starting with '/'");
  }
  const size_t q = target.find('?');
  VIGIL_ASSIGN_OR_RETURN(out.path, Unescape(target.substr(0, q), false));
  if (q == std::string_view::npos) return Status::Ok();
  std::string_view query = target.substr(q + 1);
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view field = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (field.empty()) continue;
    const size_t eq = field.find('=');
    VIGIL_ASSIGN_OR_RETURN(std::string key, Unescape(field.substr(0, eq), true));
    std::string value;
    if (eq != std::string_view::npos) {
      VIGIL_ASSIGN_OR_RETURN(value, Unescape(field.substr(eq + 1), true));
    }
    out.query.try_emplace(std::move(key), std::move(value));
  }
  return Status::Ok();
}

class HttpServer::Impl {
 public:
  Impl(Api& a, HttpOptions o)
      : api(a),
        options(std::move(o)),
        handlers(static_cast<size_t>(std::max(1, options.threads))) {}

  Result<int> Bind();
  void Serve();
  void Stop();

  // A request handed to the handler threads, and its end: sessions count them so that Stop
  // can wait for the answers in flight.
  void RequestStarted() {
    in_flight.fetch_add(1);
    requests_total.fetch_add(1);
  }
  void RequestEnded() { in_flight.fetch_sub(1); }
  bool stopping() const { return stopping_.load(); }

  Api& api;
  const HttpOptions options;
  asio::io_context ioc;
  asio::thread_pool handlers;
  std::optional<ssl::context> tls;
  std::atomic<int64_t> in_flight{0};
  std::atomic<int64_t> requests_total{0};

 private:
  void Accept();
  void Trim();

  tcp::acceptor acceptor_{ioc};
  asio::steady_timer trim_timer_{ioc};
  std::atomic<bool> stopping_{false};
  int64_t requests_at_last_trim_ = 0;
};

namespace {

// The answer to a request refused by the HTTP layer itself, counted under route "other".
Response Refusal(Api& api, int status, std::string_view message) {
  api.Count("other", status);
  return ErrorResponse(status, message);
}

// One connection: reads requests one after the other, hands each to the handler threads, writes
// the answer, and keeps the connection while the client wants it and the server is not stopping.
// Every operation runs on the connection's strand; exactly one is pending at a time.
template <class Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
 public:
  Session(HttpServer::Impl& server, Stream stream, std::string client)
      : server_(server), stream_(std::move(stream)), client_(std::move(client)) {
    server_.api.connections().open.fetch_add(1);
  }
  ~Session() { server_.api.connections().open.fetch_sub(1); }

  void Start() {
    if constexpr (kTls) {
      Lowest().expires_after(Seconds(server_.options.header_timeout_s));
      stream_.async_handshake(ssl::stream_base::server,
                              [self = this->shared_from_this()](beast::error_code ec) {
                                if (ec) return self->Failed(ec, "TLS handshake");
                                self->ReadHead();
                              });
    } else {
      ReadHead();
    }
  }

  // Answers 503 at once and closes: the connection cap is reached.
  void RefuseConnection() {
    server_.api.connections().refused.fetch_add(1);
    Lowest().expires_after(Seconds(server_.options.header_timeout_s));
    Request none;
    none.method = "-";
    none.path = "-";
    request_ = std::move(none);
    started_ = Steady::now();
    received_ = WallNow();
    Write(Refusal(server_.api, 503,
                  fmt::format("too many connections (the limit is {}); try again shortly",
                              server_.options.max_connections)),
          11, /*close=*/true);
  }

 private:
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;

  beast::tcp_stream& Lowest() { return beast::get_lowest_layer(stream_); }
  static double WallNow() { return SystemClock().WallSeconds(); }

  void ReadHead() {
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(server_.options.max_header_bytes));
    // The body's limit is set once the token is checked: Beast would refuse a Content-Length
    // over it with the head, before a client without the token could be told so.
    parser_->body_limit(std::numeric_limits<uint64_t>::max());
    Lowest().expires_after(
        Seconds(first_ ? server_.options.header_timeout_s : server_.options.idle_timeout_s));
    http::async_read_header(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](beast::error_code ec, size_t) { self->OnHead(ec); });
  }

  void OnHead(beast::error_code ec) {
    started_ = Steady::now();
    received_ = WallNow();
    first_ = false;
    if (ec == http::error::header_limit) {
      return Refuse(431,
                    fmt::format("request head over {} bytes", server_.options.max_header_bytes));
    }
    if (ec.category() == http::make_error_code(http::error::bad_target).category() &&
        ec != http::error::end_of_stream) {
      return Refuse(400, fmt::format("malformed HTTP request: {}", ec.message()));
    }
    if (ec) return Failed(ec, "request head");
    const auto& head = parser_->get();
    request_ = Request{};
    request_.method = std::string(head.method_string());
    if (Status s = ParseTarget(View(head.target()), request_); !s.ok()) {
      request_.path = "-";
      return Refuse(400, s.message());
    }
    const size_t fields = static_cast<size_t>(std::distance(head.begin(), head.end()));
    if (fields > server_.options.max_headers) {
      return Refuse(431, fmt::format("{} header fields; at most {} are accepted", fields,
                                     server_.options.max_headers));
    }
    const auto host = head.find(http::field::host);
    if (host == head.end() ? head.version() >= 11
                           : !HostAllowed(View(host->value()), server_.options.allowed_hosts)) {
      return Refuse(421, host == head.end()
                             ? std::string("HTTP/1.1 requests need a Host header")
                             : fmt::format("this server does not answer to Host {}; start it "
                                           "with --allowed-host {} if it should",
                                           std::string(host->value()), std::string(host->value())));
    }
    if (head.find(http::field::range) != head.end()) {
      return Refuse(416, "Range requests are not served: every answer is whole");
    }
    request_.authorization = std::string(head[http::field::authorization]);
    Response admitted = server_.api.Admit(request_);
    if (admitted.status != 200) {
      server_.api.Count("other", admitted.status);
      return Write(std::move(admitted), head.version(), /*close=*/true);
    }
    if (const auto length = parser_->content_length();
        length && *length > server_.options.max_body) {
      return Refuse(413, fmt::format("request body of {} bytes is over the limit of {}", *length,
                                     server_.options.max_body));
    }
    parser_->body_limit(server_.options.max_body);  // chunked bodies, counted as they come
    if (beast::iequals(head[http::field::expect], "100-continue")) {
      auto go_on = std::make_shared<http::response<http::empty_body>>(http::status::continue_,
                                                                      head.version());
      return http::async_write(
          stream_, *go_on, [self = this->shared_from_this(), go_on](beast::error_code wec, size_t) {
            if (wec) return self->Failed(wec, "100 Continue");
            self->ReadBody();
          });
    }
    ReadBody();
  }

  void ReadBody() {
    if (parser_->is_done()) return Dispatch();
    Lowest().expires_after(Seconds(server_.options.body_timeout_s));
    http::async_read(stream_, buffer_, *parser_,
                     [self = this->shared_from_this()](beast::error_code ec, size_t) {
                       if (ec == http::error::body_limit) {
                         return self->Refuse(413, fmt::format("request body over the limit of {} "
                                                              "bytes",
                                                              self->server_.options.max_body));
                       }
                       if (ec) return self->Failed(ec, "request body");
                       self->Dispatch();
                     });
  }

  // The request runs on a handler thread; its answer comes back to this connection's strand.
  void Dispatch() {
    request_.body = std::move(parser_->get().body());
    bytes_in_ = request_.body.size();
    keep_alive_ = parser_->get().keep_alive();
    Lowest().expires_never();
    server_.RequestStarted();
    asio::post(server_.handlers, [self = this->shared_from_this()] {
      Response r = self->server_.api.Handle(self->request_);
      asio::post(self->stream_.get_executor(), [self, r = std::move(r)]() mutable {
        self->server_.RequestEnded();
        self->Write(std::move(r), self->parser_->get().version(), !self->keep_alive_);
      });
    });
  }

  // Answers a request the HTTP layer refuses, without reading (more of) its body.
  void Refuse(int status, std::string_view message) {
    Write(Refusal(server_.api, status, message), parser_ ? parser_->get().version() : 11,
          /*close=*/true);
  }

  void Write(Response r, unsigned version, bool close) {
    close = close || server_.stopping();
    auto res = std::make_shared<http::response<http::string_body>>();
    res->version(version == 10 ? 10 : 11);
    res->result(static_cast<unsigned>(r.status));
    res->set(http::field::content_type, r.content_type);
    res->set("X-Content-Type-Options", "nosniff");
    res->set(http::field::cache_control, "no-store");
    for (const auto& [k, v] : r.headers) res->set(k, v);
    res->keep_alive(!close);
    const size_t size = r.body.size();
    if (request_.method == "HEAD") {
      res->content_length(size);
    } else {
      res->body() = std::move(r.body);
      res->prepare_payload();
    }
    Lowest().expires_after(Seconds(server_.options.body_timeout_s));
    http::async_write(
        stream_, *res,
        [self = this->shared_from_this(), res, size, close](beast::error_code ec, size_t) {
          self->Log(res->result_int(), size);
          if (ec) return self->Failed(ec, "response");
          if (close) return self->Close();
          self->ReadHead();
        });
  }

  void Log(unsigned status, size_t bytes_out) {
    if (server_.options.access_log == nullptr) return;
    AccessEntry e;
    e.time = received_;
    e.client = client_;
    e.method = request_.method;
    e.path = request_.path;
    e.status = static_cast<int>(status);
    e.bytes_in = bytes_in_;
    e.bytes_out = bytes_out;
    e.seconds = std::chrono::duration<double>(Steady::now() - started_).count();
    server_.options.access_log->Write(e);
  }

  void Failed(beast::error_code ec, std::string_view during) {
    if (ec == beast::error::timeout) {
      server_.api.connections().timed_out.fetch_add(1);
      spdlog::debug("{}: closed, too slow or idle ({})", client_, during);
    } else if (ec != http::error::end_of_stream && ec != asio::error::eof &&
               ec != asio::error::operation_aborted && ec != asio::error::connection_reset &&
               ec != ssl::error::stream_truncated) {
      spdlog::debug("{}: {}: {}", client_, during, ec.message());
    }
    beast::error_code ignored;
    Lowest().socket().close(ignored);
  }

  // Ends the connection after an answer. A request whose body was not read may still be
  // arriving: closing at once would reset the connection and could destroy the answer before the
  // client reads it, so the rest is read and thrown away for a moment first (a lingering close).
  void Close() {
    if constexpr (kTls) {
      Lowest().expires_after(Seconds(1));
      stream_.async_shutdown([self = this->shared_from_this()](beast::error_code) {
        beast::error_code ignored;
        self->Lowest().socket().close(ignored);
      });
    } else {
      beast::error_code ignored;
      Lowest().socket().shutdown(tcp::socket::shutdown_send, ignored);
      Lowest().expires_after(Seconds(2));
      Drain();
    }
  }

  void Drain() {
    Lowest().async_read_some(asio::buffer(scratch_),
                             [self = this->shared_from_this()](beast::error_code ec, size_t) {
                               if (!ec) return self->Drain();
                               beast::error_code ignored;
                               self->Lowest().socket().close(ignored);
                             });
  }

  HttpServer::Impl& server_;
  Stream stream_;
  const std::string client_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  Request request_;
  bool first_ = true;
  bool keep_alive_ = false;
  uint64_t bytes_in_ = 0;
  Steady::time_point started_;
  double received_ = 0;
  std::array<char, 16384> scratch_{};
};

Status TlsContext(const TlsOptions& o, std::optional<ssl::context>& out) {
  if (o.cert_file.empty() && o.key_file.empty()) return Status::Ok();
  if (o.cert_file.empty() || o.key_file.empty()) {
    return Status::InvalidArgument(
        "TLS needs both a certificate (--tls-cert) and its key (--tls-key)");
  }
  out.emplace(ssl::context::tls_server);
  ssl::context& c = *out;
  c.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 |
                ssl::context::single_dh_use);
  const auto load = [](std::string_view what, const std::string& path, auto&& fn) -> Status {
    beast::error_code ec;
    fn(ec);
    if (ec) {
      return Status::InvalidArgument(
          fmt::format("{} {}: cannot be used: {}", what, path, ec.message()));
    }
    return Status::Ok();
  };
  VIGIL_RETURN_IF_ERROR(load("--tls-cert", o.cert_file, [&](beast::error_code& ec) {
    c.use_certificate_chain_file(o.cert_file, ec);
  }));
  VIGIL_RETURN_IF_ERROR(load("--tls-key", o.key_file, [&](beast::error_code& ec) {
    c.use_private_key_file(o.key_file, ssl::context::pem, ec);
  }));
  if (!o.client_ca_file.empty()) {
    VIGIL_RETURN_IF_ERROR(load("--tls-client-ca", o.client_ca_file, [&](beast::error_code& ec) {
      c.load_verify_file(o.client_ca_file, ec);
    }));
    c.set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
  }
  return Status::Ok();
}

}  // namespace

Result<int> HttpServer::Impl::Bind() {
  VIGIL_RETURN_IF_ERROR(TlsContext(options.tls, tls));
  // Each connection is a descriptor: the soft limit (often 1,024) is raised towards the hard one
  // so that the connection cap, not EMFILE, is what turns clients away.
  rlimit files{};
  const rlim_t wanted = static_cast<rlim_t>(options.max_connections) + 256;
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < wanted) {
    files.rlim_cur = std::min(wanted, files.rlim_max);
    setrlimit(RLIMIT_NOFILE, &files);
    if (files.rlim_cur < wanted) {
      spdlog::warn("only {} open files allowed (ulimit -n): fewer than --max-connections {}",
                   files.rlim_cur, options.max_connections);
    }
  }
  beast::error_code ec;
  const asio::ip::address address = asio::ip::make_address(options.host, ec);
  const auto fail = [&](std::string_view what) {
    return Status::IoError(fmt::format("cannot listen on {}:{}: {}: {}", options.host, options.port,
                                       what, ec.message()));
  };
  if (ec) return fail("not an IP address");
  const tcp::endpoint endpoint(address, static_cast<unsigned short>(options.port));
  acceptor_.open(endpoint.protocol(), ec);
  if (ec) return fail("socket");
  // SO_REUSEADDR lets a restarted server bind while old connections linger in TIME_WAIT; unlike
  // SO_REUSEPORT it does not let a second server share the port.
  acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (ec) return fail("in use, or not an address of this machine");
  // Nodes finishing a run together connect at once: a short backlog would drop their SYNs.
  acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return fail("listen");
  return static_cast<int>(acceptor_.local_endpoint().port());
}

void HttpServer::Impl::Accept() {
  acceptor_.async_accept(asio::make_strand(ioc), [this](beast::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (!ec) {
      beast::error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      const tcp::endpoint peer = socket.remote_endpoint(ignored);
      std::string client = fmt::format("{}:{}", peer.address().to_string(), peer.port());
      const bool full =
          api.connections().open.load() >= static_cast<int64_t>(options.max_connections);
      if (tls && !full) {
        std::make_shared<Session<beast::ssl_stream<beast::tcp_stream>>>(
            *this, beast::ssl_stream<beast::tcp_stream>(std::move(socket), *tls), std::move(client))
            ->Start();
      } else {
        // At the cap, a TLS client gets its 503 in cleartext: it reads a failed handshake, which
        // is as clear as it can be told without spending a handshake on it.
        auto s = std::make_shared<Session<beast::tcp_stream>>(
            *this, beast::tcp_stream(std::move(socket)), std::move(client));
        if (full) {
          s->RefuseConnection();
        } else {
          s->Start();
        }
      }
    } else {
      // Out of descriptors (EMFILE) and the like: wait a moment rather than spin.
      spdlog::warn("accepting a connection: {}", ec.message());
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    Accept();
  });
}

// glibc keeps memory freed by many threads in per-thread arenas and rarely gives it back: after
// a burst of large uploads the process would stay at its peak. Every 10 s after traffic, free
// pages go back to the system.
void HttpServer::Impl::Trim() {
  trim_timer_.expires_after(std::chrono::seconds(10));
  trim_timer_.async_wait([this](beast::error_code ec) {
    if (ec) return;
    const int64_t requests = requests_total.load();
    if (requests != requests_at_last_trim_) malloc_trim(0);
    requests_at_last_trim_ = requests;
    Trim();
  });
}

void HttpServer::Impl::Serve() {
  Accept();
  Trim();
  const unsigned io_threads = std::clamp(std::thread::hardware_concurrency() / 2, 1u, 4u);
  std::vector<std::thread> extra;
  for (unsigned i = 1; i < io_threads; ++i) extra.emplace_back([this] { ioc.run(); });
  ioc.run();
  for (std::thread& t : extra) t.join();
  handlers.join();
}

void HttpServer::Impl::Stop() {
  stopping_.store(true);
  asio::post(ioc, [this] {
    beast::error_code ignored;
    acceptor_.close(ignored);
    trim_timer_.cancel();
  });
  // Answers being computed are written before the I/O stops (a second at most); connections
  // that wait for a request are closed with it.
  const Steady::time_point deadline = Steady::now() + std::chrono::seconds(1);
  while (in_flight.load() > 0 && Steady::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ioc.stop();
}

HttpServer::HttpServer(Api& api, HttpOptions options)
    : impl_(std::make_unique<Impl>(api, std::move(options))) {}

HttpServer::~HttpServer() = default;

Result<int> HttpServer::Bind() { return impl_->Bind(); }

void HttpServer::Serve() { impl_->Serve(); }

void HttpServer::Stop() { impl_->Stop(); }

}  // namespace vigil::server
