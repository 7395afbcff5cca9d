// `vigil serve` over TLS with client certificates, and its clients: `vigil report` to an
// https:// URL with --ca-file, --client-cert and --client-key.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include "serve_process.h"
#include "vigil/core/file.h"
#include "vigil/testing/certificates.h"

namespace vigil {
namespace {

using testing::RunVigil;

TEST(ServeTlsTest, ReportsOverMutualTlsAndRefusesWhatIsNotTrusted) {
  testing::TempDir dir;
  if (!testing::MakeTestCertificates(dir.path())) {
    GTEST_SKIP() << "the openssl command could not make certificates";
  }
  testing::ServeProcess server(
      dir, dir.File("fleet.db"),
      {"--tls-cert", dir.File("server.pem"), "--tls-key", dir.File("server.key"), "--tls-client-ca",
       dir.File("ca.pem"), "--token-for-reads"});
  ASSERT_GT(server.port(), 0);
  const std::string url = fmt::format("https://127.0.0.1:{}", server.port());
  ASSERT_TRUE(
      WriteFileAtomic(dir.File("n1.jsonl"), "{\"node\": \"n1\", \"cpu-stream/triad_gbps\": 100}\n")
          .ok());
  const std::vector<std::string> send = {"report", dir.File("n1.jsonl"), "--report",
                                         url,      "--token-file",       dir.File("token")};
  const std::vector<std::string> trust = {"--ca-file",     dir.File("ca.pem"),
                                          "--client-cert", dir.File("client.pem"),
                                          "--client-key",  dir.File("client.key")};
  std::vector<std::string> args = send;
  args.insert(args.end(), trust.begin(), trust.end());
  testing::ProcessResult r = RunVigil(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;

  // No client certificate: the handshake fails, as an unreachable server (exit 3).
  args = send;
  args.insert(args.end(), {"--ca-file", dir.File("ca.pem")});
  r = RunVigil(args);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  // The system's CAs do not know the test CA: the server's certificate is refused.
  args = send;
  args.insert(args.end(),
              {"--client-cert", dir.File("client.pem"), "--client-key", dir.File("client.key")});
  r = RunVigil(args);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  // TLS flags with an http:// URL are a usage error.
  r = RunVigil({"report", dir.File("n1.jsonl"), "--report", "http://127.0.0.1:1", "--ca-file",
                dir.File("ca.pem")});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("https://"), std::string::npos) << r.err;

  // Reads need the token as well; the upload above is there.
  httplib::SSLClient c("127.0.0.1", server.port(), dir.File("client.pem"), dir.File("client.key"));
  c.set_ca_cert_path(dir.File("ca.pem").c_str());
  c.enable_server_certificate_verification(true);
  auto denied = c.Get("/api/v1/nodes");
  ASSERT_TRUE(denied);
  EXPECT_EQ(denied->status, 401);
  auto nodes =
      c.Get("/api/v1/nodes", {{"Authorization", std::string("Bearer ") + testing::kServeToken}});
  ASSERT_TRUE(nodes);
  EXPECT_EQ(nodes->status, 200);
  EXPECT_NE(nodes->body.find("\"node\":\"n1\""), std::string::npos) << nodes->body;
}

TEST(ServeTlsTest, AnUnusableCertificateIsAStartUpErrorNamingIt) {
  testing::TempDir dir;
  ASSERT_TRUE(WriteFileAtomic(dir.File("bad.pem"), "not a certificate\n").ok());
  const testing::ProcessResult r =
      RunVigil({"serve", "--db", dir.File("fleet.db"), "--listen", "127.0.0.1:0", "--tls-cert",
                dir.File("bad.pem"), "--tls-key", dir.File("bad.pem")});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("bad.pem"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace vigil
