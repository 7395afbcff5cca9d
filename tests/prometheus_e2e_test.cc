// A real Prometheus in the loop: Debian's prometheus scrapes `vigil simulate telemetry --serve`
// every second, and `vigil detect --prometheus --follow` must name the machine with the injected
// fault. Skipped when /usr/bin/prometheus is absent (scripts/setup.sh installs it).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "vigil/core/file.h"
#include "vigil/core/json.h"
#include "vigil/core/text.h"
#include "vigil/testing/child.h"
#include "vigil/testing/free_port.h"
#include "vigil/testing/temp_dir.h"
#include "vigil_process.h"

namespace vigil {
namespace {

constexpr const char* kPrometheus = "/usr/bin/prometheus";

// `argv` in the background, its stdout and stderr to `log`; stopped (SIGTERM, then SIGKILL after
// 5 s) and reaped when it goes out of scope.
testing::ChildOptions Background(std::vector<std::string> argv, const std::string& log) {
  testing::ChildOptions o;
  o.argv = std::move(argv);
  o.log = log;
  return o;
}

TEST(PrometheusE2eTest, DetectNamesTheInjectedMachineThroughPrometheus) {
  if (access(kPrometheus, X_OK) != 0) GTEST_SKIP() << kPrometheus << " is not installed";
  testing::TempDir dir;
  // The job: 8 machines, one GPU execution error 25 s in.
  testing::Child sim(Background({VIGIL_BINARY,
                                 "simulate",
                                 "telemetry",
                                 "--serve",
                                 "127.0.0.1:0",
                                 "--port-file",
                                 dir.File("port"),
                                 "--machines",
                                 "8",
                                 "--duration",
                                 "200s",
                                 "--faults",
                                 "1",
                                 "--kinds",
                                 "gpu_execution_error",
                                 "--fault-from",
                                 "25s",
                                 "--fault-to",
                                 "25s",
                                 "--seed",
                                 "2",
                                 "--labels",
                                 dir.File("labels.csv")},
                                dir.File("sim.log")));
  ASSERT_GT(sim.pid(), 0);
  Result<std::string> port = Status::NotFound("");
  for (int i = 0; i < 100 && !(port = ReadFile(dir.File("port"))).ok(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(port.ok()) << *ReadFile(dir.File("sim.log"));
  const int prometheus_port = testing::FreeLoopbackPort();
  ASSERT_GT(prometheus_port, 0);
  ASSERT_TRUE(WriteFileAtomic(dir.File("prometheus.yml"),
                              "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                              "scrape_configs:\n  - job_name: sim\n    static_configs:\n"
                              "      - targets: ['127.0.0.1:" +
                                  std::string(Trim(*port)) + "']\n")
                  .ok());
  testing::Child prometheus(
      Background({kPrometheus, "--config.file=" + dir.File("prometheus.yml"),
                  "--storage.tsdb.path=" + dir.File("data"),
                  "--web.listen-address=127.0.0.1:" + std::to_string(prometheus_port)},
                 dir.File("prometheus.log")));
  ASSERT_GT(prometheus.pid(), 0);

  testing::ProcessResult r = testing::RunVigil(
      {"detect", "--prometheus", "http://127.0.0.1:" + std::to_string(prometheus_port),
       "--selector", "{job=\"sim\"}", "--follow", "--since", "2m", "--poll", "2s", "--duration",
       "100s", "--warmup", "10s", "--labels", dir.File("labels.csv"), "--out",
       dir.File("alerts.jsonl"), "--json"});
  EXPECT_EQ(r.exit_code, 1) << r.err << *ReadFile(dir.File("prometheus.log"));
  Result<Json> out = ParseJson(r.out, "stdout");
  ASSERT_TRUE(out.ok()) << r.out << r.err;
  EXPECT_EQ((*out)["score"]["recall"], 1.0) << r.out;
  EXPECT_EQ((*out)["score"]["precision"], 1.0) << r.out;
  // --follow writes each alert to --out as it is raised.
  Result<std::string> alerts = ReadFile(dir.File("alerts.jsonl"));
  ASSERT_TRUE(alerts.ok());
  EXPECT_NE(alerts->find("\"machine\":"), std::string::npos);
}

}  // namespace
}  // namespace vigil
