#include "vigil/server/http.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "vigil/core/clock.h"
#include "vigil/core/file.h"
#include "vigil/store/sqlite_store.h"
#include "vigil/testing/certificates.h"
#include "vigil/testing/raw_connection.h"
#include "vigil/testing/temp_dir.h"

namespace vigil::server {
namespace {

using Steady = std::chrono::steady_clock;
constexpr char kToken[] = "s3cret";

TEST(ParseTargetTest, DecodesThePathAndTheQuery) {
  Request r;
  ASSERT_TRUE(ParseTarget("/nodes/gpu%2d01?limit=5&verdict=a+b%21&flag", r).ok());
  EXPECT_EQ(r.path, "/nodes/gpu-01");
  EXPECT_EQ(r.query["limit"], "5");
  EXPECT_EQ(r.query["verdict"], "a b!");
  EXPECT_EQ(r.query.count("flag"), 1u);
}

TEST(ParseTargetTest, RefusesWhatIsNotAnOriginFormPath) {
  Request r;
  EXPECT_FALSE(ParseTarget("http://example.com/", r).ok());
  EXPECT_FALSE(ParseTarget("", r).ok());
  EXPECT_FALSE(ParseTarget("/a%4", r).ok());
  EXPECT_FALSE(ParseTarget("/a?x=%zz", r).ok());
}

TEST(HostAllowedTest, IpLiteralsLocalhostAndConfiguredNames) {
  const std::vector<std::string> names = {"fleet.example.org"};
  EXPECT_TRUE(HostAllowed("127.0.0.1:8080", names));
  EXPECT_TRUE(HostAllowed("10.1.2.3", names));
  EXPECT_TRUE(HostAllowed("[::1]:8080", names));
  EXPECT_TRUE(HostAllowed("localhost:9", names));
  EXPECT_TRUE(HostAllowed("FLEET.example.org.:443", names));
  // A name the attacker controls, pointed at this server (DNS rebinding).
  EXPECT_FALSE(HostAllowed("evil.example.com:8080", names));
  EXPECT_FALSE(HostAllowed("", names));
  EXPECT_FALSE(HostAllowed("127.0.0.1:80x", names));
  EXPECT_FALSE(HostAllowed("[::1", names));
  EXPECT_FALSE(HostAllowed("[nonsense]:80", names));
}

TEST(HostAllowedTest, LoopbackAddresses) {
  EXPECT_TRUE(IsLoopback("127.0.0.1"));
  EXPECT_TRUE(IsLoopback("127.3.2.1"));
  EXPECT_TRUE(IsLoopback("::1"));
  EXPECT_TRUE(IsLoopback("localhost"));
  EXPECT_FALSE(IsLoopback("0.0.0.0"));
  EXPECT_FALSE(IsLoopback("10.0.0.1"));
  EXPECT_FALSE(IsLoopback("fleet.example.org"));
}

TEST(HostAllowedTest, DefaultsNameThisMachine) {
  char name[256] = {};
  ASSERT_EQ(gethostname(name, sizeof(name) - 1), 0);
  const std::vector<std::string> names = DefaultAllowedHosts("fleet.internal");
  EXPECT_TRUE(HostAllowed(name, names));
  EXPECT_TRUE(HostAllowed("fleet.internal:8080", names));
  EXPECT_FALSE(HostAllowed("elsewhere.example.com", names));
}

using Raw = testing::RawConnection;

class HttpTest : public ::testing::Test {
 protected:
  void Start(HttpOptions o = {}, ApiOptions a = {.token = kToken, .max_body = 1 << 20}) {
    Result<std::unique_ptr<store::Store>> s =
        store::OpenSqliteStore(dir_.File("fleet.db"), {.sync_full = false});
    ASSERT_TRUE(s.ok()) << s.status().message();
    store_ = std::move(s).value();
    service_ = std::make_unique<FleetService>(*store_, SystemClock(), learned::LearnOptions{});
    ASSERT_TRUE(service_->Start().ok());
    api_ = std::make_unique<Api>(*service_, a);
    o.host = "127.0.0.1";
    o.port = 0;
    o.max_body = a.max_body;
    http_ = std::make_unique<HttpServer>(*api_, o);
    Result<int> port = http_->Bind();
    ASSERT_TRUE(port.ok()) << port.status().message();
    port_ = *port;
    serving_ = std::thread([this] { http_->Serve(); });
  }

  void TearDown() override {
    if (http_ != nullptr) {
      const Steady::time_point t0 = Steady::now();
      http_->Stop();
      serving_.join();
      // A clean stop is quick, whatever connections are still open.
      EXPECT_LT(std::chrono::duration<double>(Steady::now() - t0).count(), 1.5);
    }
  }

  // One request on a fresh connection; the whole answer.
  std::string Exchange(std::string_view request, double timeout_s = 5) {
    Raw c(port_);
    EXPECT_TRUE(c.connected());
    c.Send(request);
    return c.ReadUntilClosed(timeout_s);
  }

  static std::string Get(std::string_view path, std::string_view extra = "") {
    return fmt::format("GET {} HTTP/1.1\r\nHost: 127.0.0.1\r\n{}Connection: close\r\n\r\n", path,
                       extra);
  }

  testing::TempDir dir_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<FleetService> service_;
  std::unique_ptr<Api> api_;
  std::unique_ptr<HttpServer> http_;
  std::thread serving_;
  int port_ = 0;
};

TEST_F(HttpTest, ServesWithSecurityHeaders) {
  Start();
  const std::string r = Exchange(Get("/healthz"));
  EXPECT_EQ(r.rfind("HTTP/1.1 200", 0), 0u) << r;
  EXPECT_NE(r.find("X-Content-Type-Options: nosniff"), std::string::npos) << r;
  const std::string page = Exchange(Get("/"));
  EXPECT_NE(page.find("Content-Security-Policy: default-src 'none'"), std::string::npos);
  EXPECT_NE(page.find("X-Frame-Options: DENY"), std::string::npos);
}

TEST_F(HttpTest, HeadHasTheLengthButNoBody) {
  Start();
  const std::string r =
      Exchange("HEAD /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(r.rfind("HTTP/1.1 200", 0), 0u) << r;
  EXPECT_NE(r.find("Content-Length: "), std::string::npos);
  EXPECT_EQ(r.substr(r.find("\r\n\r\n") + 4), "");
}

TEST_F(HttpTest, RefusesWithoutTheTokenBeforeReadingTheBody) {
  Start();
  Raw c(port_);
  // A body of 1 GB announced and never sent: the answer comes from the head alone.
  c.Send(
      "POST /api/v1/results HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
      "Content-Length: 1000000000\r\n\r\n{");
  const Steady::time_point t0 = Steady::now();
  const std::string r = c.ReadUntilClosed(5);
  EXPECT_EQ(r.rfind("HTTP/1.1 401", 0), 0u) << r;
  EXPECT_LT(std::chrono::duration<double>(Steady::now() - t0).count(), 3.0);
  const std::string metrics = Exchange(Get("/metrics"));
  EXPECT_NE(metrics.find("vigil_http_auth_failures_total{reason=\"missing\"} 1"), std::string::npos)
      << metrics;
}

TEST_F(HttpTest, OneBodyLimitForEveryEncoding) {
  Start();
  const std::string auth = fmt::format("Authorization: Bearer {}\r\n", kToken);
  // Announced over the limit: refused at once.
  std::string r = Exchange(fmt::format(
      "POST /api/v1/results HTTP/1.1\r\nHost: 127.0.0.1\r\n{}Content-Length: {}\r\n\r\n", auth,
      (2 << 20)));
  EXPECT_EQ(r.rfind("HTTP/1.1 413", 0), 0u) << r;
  // Chunked: refused once the chunks pass the limit, whatever is still to come.
  Raw c(port_);
  c.Send(fmt::format(
      "POST /api/v1/results HTTP/1.1\r\nHost: 127.0.0.1\r\n{}Transfer-Encoding: chunked\r\n\r\n",
      auth));
  const std::string chunk(64 << 10, 'x');
  for (int i = 0; i < 20; ++i) {
    if (!c.Send(fmt::format("{:x}\r\n{}\r\n", chunk.size(), chunk))) break;
  }
  r = c.ReadUntilClosed(5);
  EXPECT_EQ(r.rfind("HTTP/1.1 413", 0), 0u) << r.substr(0, 200);
}

TEST_F(HttpTest, RefusesRangeHeaderFloodsAndForeignHosts) {
  Start({.max_header_bytes = 4096, .max_headers = 20});
  EXPECT_EQ(Exchange(Get("/", "Range: bytes=0-1,0-1,0-1\r\n")).rfind("HTTP/1.1 416", 0), 0u);
  std::string many;
  for (int i = 0; i < 30; ++i) many += fmt::format("X-{}: y\r\n", i);
  EXPECT_EQ(Exchange(Get("/healthz", many)).rfind("HTTP/1.1 431", 0), 0u);
  EXPECT_EQ(Exchange(Get("/healthz", "X-Big: " + std::string(8000, 'a') + "\r\n"))
                .rfind("HTTP/1.1 431", 0),
            0u);
  EXPECT_EQ(Exchange("GET / HTTP/1.1\r\nHost: rebind.evil.example\r\nConnection: close\r\n\r\n")
                .rfind("HTTP/1.1 421", 0),
            0u);
  EXPECT_EQ(Exchange("GET / HTTP/1.1\r\nConnection: close\r\n\r\n").rfind("HTTP/1.1 421", 0), 0u);
  EXPECT_EQ(Exchange("NONSENSE\r\n\r\n").rfind("HTTP/1.1 400", 0), 0u);
  EXPECT_EQ(Exchange(Get("/nodes/a%zz")).rfind("HTTP/1.1 400", 0), 0u);
}

TEST_F(HttpTest, ClosesSlowAndIdleConnections) {
  Start({.header_timeout_s = 0.3, .idle_timeout_s = 0.3});
  Raw slow(port_);
  slow.Send("GET /healthz HTTP/1.1\r\nHost: 127");  // and never the rest
  Raw idle(port_);
  idle.Send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");  // kept alive, then idle
  const Steady::time_point t0 = Steady::now();
  slow.ReadUntilClosed(3);
  const std::string answered = idle.ReadUntilClosed(3);
  EXPECT_TRUE(slow.closed());
  EXPECT_TRUE(idle.closed());
  EXPECT_EQ(answered.rfind("HTTP/1.1 200", 0), 0u);
  EXPECT_LT(std::chrono::duration<double>(Steady::now() - t0).count(), 2.0);
}

TEST_F(HttpTest, IdleConnectionsHoldNoThread) {
  Start({.threads = 2});
  std::vector<std::unique_ptr<Raw>> idle;
  for (int i = 0; i < 300; ++i) {
    idle.push_back(std::make_unique<Raw>(port_));
    if (i % 2) idle.back()->Send("GET /healthz HTTP/1.1\r\nHost: 127");  // slow head
  }
  const Steady::time_point t0 = Steady::now();
  const std::string r = Exchange(Get("/healthz"));
  EXPECT_EQ(r.rfind("HTTP/1.1 200", 0), 0u) << r;
  EXPECT_LT(std::chrono::duration<double>(Steady::now() - t0).count(), 1.0);
}

TEST_F(HttpTest, AnswersBeyondTheConnectionCapWith503) {
  Start({.max_connections = 3});
  std::vector<std::unique_ptr<Raw>> held;
  for (int i = 0; i < 3; ++i) held.push_back(std::make_unique<Raw>(port_));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const std::string r = Exchange(Get("/healthz"));
  EXPECT_EQ(r.rfind("HTTP/1.1 503", 0), 0u) << r;
  held.clear();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(Exchange(Get("/healthz")).rfind("HTTP/1.1 200", 0), 0u);
}

TEST_F(HttpTest, ReadsCanNeedTheToken) {
  Start({}, {.token = kToken, .max_body = 1 << 20, .token_for_reads = true});
  EXPECT_EQ(Exchange(Get("/api/v1/nodes")).rfind("HTTP/1.1 401", 0), 0u);
  EXPECT_EQ(Exchange(Get("/healthz")).rfind("HTTP/1.1 200", 0), 0u);
  EXPECT_EQ(Exchange(Get("/api/v1/nodes", fmt::format("Authorization: Bearer {}\r\n", kToken)))
                .rfind("HTTP/1.1 200", 0),
            0u);
}

TEST_F(HttpTest, ExpectContinueIsAnsweredAfterTheToken) {
  Start();
  const std::string body = "not json";
  Raw c(port_);
  c.Send(
      fmt::format("POST /api/v1/results HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {}\r\n"
                  "Expect: 100-continue\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                  kToken, body.size()));
  std::string r = c.ReadUntilClosed(0.5);
  EXPECT_EQ(r.rfind("HTTP/1.1 100", 0), 0u) << r;
  c.Send(body);
  r += c.ReadUntilClosed(5);
  EXPECT_NE(r.find("HTTP/1.1 400"), std::string::npos) << r;
}

TEST_F(HttpTest, ServesTlsAndCanRequireClientCertificates) {
  if (!testing::MakeTestCertificates(dir_.path()))
    GTEST_SKIP() << "the openssl command could not make certificates";
  Start({.tls = {dir_.File("server.pem"), dir_.File("server.key"), dir_.File("ca.pem")}});
  {
    httplib::SSLClient c("127.0.0.1", port_, dir_.File("client.pem"), dir_.File("client.key"));
    c.set_ca_cert_path(dir_.File("ca.pem").c_str());
    c.enable_server_certificate_verification(true);
    httplib::Result r = c.Get("/healthz");
    ASSERT_TRUE(r) << httplib::to_string(r.error());
    EXPECT_EQ(r->status, 200);
  }
  {
    httplib::SSLClient c("127.0.0.1", port_);  // no client certificate
    c.set_ca_cert_path(dir_.File("ca.pem").c_str());
    c.enable_server_certificate_verification(true);
    EXPECT_FALSE(c.Get("/healthz"));
  }
  // Cleartext to a TLS port is a failed handshake, not an answer.
  EXPECT_EQ(Exchange(Get("/healthz"), 2).find("HTTP/1.1 200"), std::string::npos);
}

TEST(HttpBindTest, UnusableCertificateIsAnErrorNamingIt) {
  testing::TempDir dir;
  ASSERT_TRUE(WriteFileAtomic(dir.File("bad.pem"), "not a certificate\n").ok());
  Result<std::unique_ptr<store::Store>> s = store::OpenSqliteStore(dir.File("fleet.db"));
  ASSERT_TRUE(s.ok());
  FleetService service(**s, SystemClock(), learned::LearnOptions{});
  Api api(service, {});
  HttpServer http(api, {.port = 0, .tls = {dir.File("bad.pem"), dir.File("bad.pem"), ""}});
  Result<int> port = http.Bind();
  ASSERT_FALSE(port.ok());
  EXPECT_EQ(port.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(port.status().message().find("bad.pem"), std::string::npos);
}

}  // namespace
}  // namespace vigil::server
