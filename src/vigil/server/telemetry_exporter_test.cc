#include "vigil/server/telemetry_exporter.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <string>

#include "vigil/core/file.h"
#include "vigil/testing/temp_dir.h"

namespace vigil::server {
namespace {

sim::TelemetryJob SmallJob() {
  sim::TelemetryJob job;
  job.machines = 2;
  job.duration_s = 30;
  return job;
}

std::string Get(int port) {
  httplib::Client client("127.0.0.1", port);
  auto res = client.Get("/metrics");
  EXPECT_TRUE(res);
  if (!res) return "";
  EXPECT_EQ(res->status, 200);
  return res->body;
}

// A scrape at t seconds after the start sees the job's second t x speed, the last one after its
// end.
TEST(TelemetryExporterTest, AScrapeSeesTheJobsCurrentSecond) {
  FakeClock clock(1.8e9);
  sim::TelemetryGenerator gen(SmallJob()), expected(SmallJob());
  TelemetryExporter exporter(gen, 2, clock);
  Result<int> port = exporter.Start("127.0.0.1", 0);
  ASSERT_TRUE(port.ok()) << port.status().ToString();
  EXPECT_EQ(Get(*port), expected.Exposition(0));
  clock.Advance(5);
  const std::string at10 = Get(*port);
  for (int64_t t = 1; t < 10; ++t) expected.Exposition(t);
  EXPECT_EQ(at10, expected.Exposition(10));
  clock.Advance(100);
  for (int64_t t = 11; t < 29; ++t) expected.Exposition(t);
  EXPECT_EQ(Get(*port), expected.Exposition(29));
  EXPECT_DOUBLE_EQ(exporter.real_duration(), 15);
  exporter.Stop();
  // An address it cannot listen on is an error that names it.
  TelemetryExporter nowhere(gen, 1, clock);
  EXPECT_EQ(nowhere.Start("256.0.0.1", 9100).status().message(), "cannot listen on 256.0.0.1:9100");
}

TEST(TelemetryExporterTest, ServeWritesThePortAndStopsWhenTheJobIsOver) {
  vigil::testing::TempDir dir;
  FakeClock clock(1.8e9);
  sim::TelemetryGenerator gen(SmallJob());
  ExporterOptions o;
  o.speed = 3;
  o.port_file = dir.File("port");
  ASSERT_TRUE(ServeTelemetry(gen, o, clock, nullptr).ok());
  EXPECT_DOUBLE_EQ(clock.WallSeconds(), 1.8e9 + 10);  // 30 s of job at 3x
  const std::string port = *ReadFile(dir.File("port"));
  EXPECT_GT(std::stoi(port), 0);
  EXPECT_EQ(port.back(), '\n');
  const std::atomic<bool> interrupted{true};
  ASSERT_TRUE(ServeTelemetry(gen, o, clock, &interrupted).ok());
  EXPECT_DOUBLE_EQ(clock.WallSeconds(), 1.8e9 + 10);
}

}  // namespace
}  // namespace vigil::server
