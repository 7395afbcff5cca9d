#include "vigil/server/fleet_main.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "vigil/core/file.h"
#include "vigil/testing/temp_dir.h"

namespace vigil::server {
namespace {

TEST(FleetMainTest, ServesUntilStoppedAndReopensItsLogs) {
  testing::TempDir dir;
  FleetServiceOptions o;
  o.db = dir.File("fleet.db");
  o.port = 0;
  o.threads = 2;
  o.port_file = dir.File("port");
  o.access_log = dir.File("access.log");
  std::atomic<bool> stop{false}, reopen{false};
  Status served;
  std::thread t([&] { served = RunFleetService(o, stop, reopen); });
  for (int i = 0; i < 500 && !ReadFile(o.port_file).ok(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(ReadFile(o.port_file).ok());
  reopen = true;
  for (int i = 0; i < 100 && reopen.load(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_FALSE(reopen.load());  // taken: the logs were reopened
  stop = true;
  t.join();
  EXPECT_TRUE(served.ok()) << served.ToString();
}

TEST(FleetMainTest, BadOptionsNameTheirFlagBeforeListening) {
  testing::TempDir dir;
  std::atomic<bool> stop{true}, reopen{false};
  FleetServiceOptions o;
  o.db = dir.File("fleet.db");
  o.port = 0;
  o.remediation = dir.File("missing.yaml");
  Status s = RunFleetService(o, stop, reopen);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message().rfind("--remediation: ", 0), 0u) << s.message();
  o.remediation.clear();
  o.token_for_reads = true;
  s = RunFleetService(o, stop, reopen);
  EXPECT_EQ(s.message(), "--token-for-reads needs --token-file");
  EXPECT_EQ(dir.EntryCount(), 0);  // nothing opened
}

}  // namespace
}  // namespace vigil::server
