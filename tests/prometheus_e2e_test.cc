// A real Prometheus in the loop: Debian's prometheus scrapes `vigil simulate telemetry --serve`
// every second, and `vigil detect --prometheus --follow` must name the machine with the injected
// fault. Skipped when /usr/bin/prometheus is absent (scripts/setup.sh installs it).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "vigil/core/file.h"
#include "vigil/core/json.h"
#include "vigil/core/text.h"
#include "vigil/testing/free_port.h"
#include "vigil/testing/temp_dir.h"
#include "vigil_process.h"

extern char** environ;

namespace vigil {
namespace {

constexpr const char* kPrometheus = "/usr/bin/prometheus";

// A child process that is killed and reaped when this goes out of scope.
class Child {
 public:
  Child(const std::vector<std::string>& args, const std::string& log) {
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    if (posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
  }
  ~Child() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    int status = 0;
    for (int i = 0; i < 50 && waitpid(pid_, &status, WNOHANG) == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, &status, 0);
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
};

TEST(PrometheusE2eTest, DetectNamesTheInjectedMachineThroughPrometheus) {
  if (access(kPrometheus, X_OK) != 0) GTEST_SKIP() << kPrometheus << " is not installed";
  testing::TempDir dir;
  // The job: 8 machines, one GPU execution error 25 s in.
  Child sim({VIGIL_BINARY,
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
            dir.File("sim.log"));
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
  Child prometheus({kPrometheus, "--config.file=" + dir.File("prometheus.yml"),
                    "--storage.tsdb.path=" + dir.File("data"),
                    "--web.listen-address=127.0.0.1:" + std::to_string(prometheus_port)},
                   dir.File("prometheus.log"));
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
