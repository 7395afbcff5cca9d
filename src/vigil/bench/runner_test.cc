#include "vigil/bench/runner.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "vigil/testing/temp_dir.h"

namespace vigil {
namespace {

enum class Behaviour {
  kOk,
  kFail,
  kCrash,
  kHang,
  kSkip,
  kExit,
  kWriteScratchThenHang,
  kStopRunThenDie
};

// Set by SIGUSR1 in the run's process: the cancel flag of a stop that kStopRunThenDie sends.
std::atomic<bool> g_stopped{false};
void OnStop(int) { g_stopped = true; }

// A benchmark that does what the test tells it to.
class Fake : public Benchmark {
 public:
  Fake(std::string name, Behaviour b) : name_(std::move(name)), b_(b) {}
  std::string_view name() const override { return name_; }
  std::string_view component() const override { return "cpu"; }
  std::string_view description() const override { return "fake"; }
  std::vector<ParamSpec> params() const override {
    return {{"size", ParamKind::kBytes, "1K", "2K", "a size"}};
  }
  double time_limit_s(Suite) const override { return 30; }
  Status Available(const BenchContext&) const override {
    return b_ == Behaviour::kSkip ? Status::Unavailable("no such device") : Status::Ok();
  }
  Result<std::vector<Metric>> Run(const BenchContext& ctx) const override {
    switch (b_) {
      case Behaviour::kFail:
        return Status::Internal("verification failed: 2 + 2 = 5");
      case Behaviour::kCrash:
        signal(SIGSEGV, SIG_DFL);  // die by the signal even where a sanitizer catches it
        raise(SIGSEGV);
        break;
      case Behaviour::kHang:
        while (true) pause();
      case Behaviour::kExit:
        std::_Exit(7);
      case Behaviour::kStopRunThenDie:
        // The result pipe closes first, so that the run has seen the end of the output and
        // waits for the process when the stop reaches it; then the stop ends the benchmark too.
        close_range(3, ~0U, 0);
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        kill(getppid(), SIGUSR1);
        signal(SIGTERM, SIG_DFL);
        raise(SIGTERM);
        break;
      case Behaviour::kWriteScratchThenHang: {
        std::ofstream(ctx.scratch_dir + "/big.dat") << "data";
        while (true) pause();
      }
      default:
        break;
    }
    return std::vector<Metric>{Metric{MetricKey{name_, "size_bytes", ComponentIndex{2, {}}},
                                      ctx.Param("size"),
                                      "B",
                                      true,
                                      {ctx.Param("size")}}};
  }

 private:
  std::string name_;
  Behaviour b_;
};

class RunnerTest : public ::testing::Test {
 protected:
  void SetUp() override { options_.scratch_root = tmp_.path(); }

  std::vector<BenchmarkRecord> Run(const std::vector<const Benchmark*>& benches) {
    Result<std::vector<BenchmarkRecord>> r =
        RunBenchmarks(benches, options_, {}, cancel_, SystemClock());
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : std::vector<BenchmarkRecord>{};
  }
  bool ScratchEmpty() const { return std::filesystem::is_empty(options_.scratch_root); }

  vigil::testing::TempDir tmp_;
  RunnerOptions options_;
  std::atomic<bool> cancel_{false};
};

TEST_F(RunnerTest, SuccessCarriesMetricsAndParams) {
  Fake ok("ok", Behaviour::kOk);
  options_.params["ok"]["size"] = "4K";
  auto records = Run({&ok});
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].status, BenchStatus::kOk);
  EXPECT_EQ(records[0].return_code, 0);
  EXPECT_EQ(records[0].name, "ok");
  EXPECT_EQ(records[0].component, "cpu");
  ASSERT_EQ(records[0].metrics.size(), 1u);
  EXPECT_EQ(records[0].metrics[0].key.ToString(), "ok/size_bytes:2");
  EXPECT_EQ(records[0].metrics[0].value, 4096.0);
  EXPECT_TRUE(ScratchEmpty());
}

TEST_F(RunnerTest, SuiteChoosesDefaults) {
  Fake ok("ok", Behaviour::kOk);
  options_.suite = Suite::kFull;
  auto records = Run({&ok});
  EXPECT_EQ(records.at(0).metrics.at(0).value, 2048.0);
}

TEST_F(RunnerTest, FailureCrashHangAndSkipDoNotStopTheSuite) {
  Fake fail("fail", Behaviour::kFail);
  Fake crash("crash", Behaviour::kCrash);
  Fake hang("hang", Behaviour::kHang);
  Fake skip("skip", Behaviour::kSkip);
  Fake exit7("exit", Behaviour::kExit);
  Fake ok("ok", Behaviour::kOk);
  options_.time_limit_override_s = 0.5;
  auto records = Run({&fail, &crash, &hang, &skip, &exit7, &ok});
  ASSERT_EQ(records.size(), 6u);

  EXPECT_EQ(records[0].status, BenchStatus::kFailed);
  EXPECT_EQ(records[0].return_code, return_code::kFailed);
  EXPECT_EQ(records[0].error, "verification failed: 2 + 2 = 5");

  EXPECT_EQ(records[1].status, BenchStatus::kFailed);
  EXPECT_EQ(records[1].return_code, return_code::kSignalBase + SIGSEGV);
  EXPECT_EQ(records[1].error, "crashed with SIGSEGV");

  EXPECT_EQ(records[2].status, BenchStatus::kFailed);
  EXPECT_EQ(records[2].return_code, return_code::kTimeout);
  EXPECT_EQ(records[2].error, "timed out after 0.5 s");
  EXPECT_LT(records[2].duration_s, 5.0);

  EXPECT_EQ(records[3].status, BenchStatus::kSkipped);
  EXPECT_EQ(records[3].error, "no such device");

  EXPECT_EQ(records[4].status, BenchStatus::kFailed);
  EXPECT_EQ(records[4].return_code, 7);

  EXPECT_EQ(records[5].status, BenchStatus::kOk);
  EXPECT_TRUE(ScratchEmpty());
}

TEST_F(RunnerTest, ScratchIsRemovedAfterATimeout) {
  Fake writer("writer", Behaviour::kWriteScratchThenHang);
  options_.time_limit_override_s = 0.5;
  auto records = Run({&writer});
  EXPECT_EQ(records.at(0).return_code, return_code::kTimeout);
  EXPECT_TRUE(ScratchEmpty());
}

TEST_F(RunnerTest, CancelStopsTheRunAndCleansUp) {
  Fake writer("writer", Behaviour::kWriteScratchThenHang);
  Fake ok("ok", Behaviour::kOk);
  std::thread canceller([this] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    cancel_ = true;
  });
  const auto t0 = std::chrono::steady_clock::now();
  Result<std::vector<BenchmarkRecord>> r =
      RunBenchmarks({&writer, &ok}, options_, {}, cancel_, SystemClock());
  canceller.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCancelled);
  EXPECT_TRUE(ScratchEmpty());
}

// A stop that reaches the run and its benchmark at once (pkill, a service manager stopping the
// whole group), the benchmark ended by it before the run saw the request: an interruption, not a
// benchmark that crashed with SIGTERM. The last one of the suite: no later benchmark sees the
// request first.
TEST_F(RunnerTest, AStopThatEndsTheLastBenchmarkFirstIsAnInterruption) {
  struct sigaction stop {
  }, old{};
  stop.sa_handler = OnStop;
  sigemptyset(&stop.sa_mask);
  ASSERT_EQ(sigaction(SIGUSR1, &stop, &old), 0);
  Fake ok("ok", Behaviour::kOk);
  Fake stopped("stopped", Behaviour::kStopRunThenDie);
  Result<std::vector<BenchmarkRecord>> r =
      RunBenchmarks({&ok, &stopped}, options_, {}, g_stopped, SystemClock());
  sigaction(SIGUSR1, &old, nullptr);
  ASSERT_FALSE(r.ok()) << r->back().error;
  EXPECT_EQ(r.status().code(), StatusCode::kCancelled);
  EXPECT_TRUE(ScratchEmpty());
}

TEST_F(RunnerTest, EventsReportProgress) {
  Fake a("a", Behaviour::kOk), b("b", Behaviour::kSkip);
  std::vector<std::string> log;
  RunEvents ev;
  ev.on_start = [&](size_t i, size_t n, const Benchmark& x) {
    log.push_back(std::to_string(i) + "/" + std::to_string(n) + " " + std::string(x.name()));
  };
  ev.on_finish = [&](size_t, size_t, const BenchmarkRecord& r) {
    log.push_back(std::string(BenchStatusName(r.status)));
  };
  ASSERT_TRUE(RunBenchmarks({&a, &b}, options_, ev, cancel_, SystemClock()).ok());
  EXPECT_EQ(log, (std::vector<std::string>{"0/2 a", "ok", "1/2 b", "skipped"}));
}

TEST_F(RunnerTest, ValidatesParams) {
  Fake a("a", Behaviour::kOk);
  EXPECT_TRUE(ValidateParams({&a}, options_).ok());
  options_.params["a"]["size"] = "12Q";
  Status s = ValidateParams({&a}, options_);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("--set a.size"), std::string::npos) << s.message();
  options_.params["a"] = {{"colour", "red"}};
  s = ValidateParams({&a}, options_);
  EXPECT_NE(s.message().find("unknown parameter (valid: size)"), std::string::npos) << s.message();
  options_.params = {{"other", {{"size", "1"}}}};
  s = ValidateParams({&a}, options_);
  EXPECT_NE(s.message().find("not part of this run"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace vigil
