#include "vigil/bench/runner.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <new>

#include "vigil/core/file.h"
#include "vigil/core/json.h"
#include "vigil/core/text.h"

namespace vigil {
namespace {

constexpr int kPollIntervalMs = 100;

const ParamSpec* FindParam(const std::vector<ParamSpec>& specs, const std::string& name) {
  for (const ParamSpec& p : specs) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

// The child's side: run the benchmark and write its record as JSON to `fd`. Never returns.
[[noreturn]] void RunChild(const Benchmark& benchmark, const BenchContext& ctx, int fd) {
  BenchmarkRecord record;
  try {
    Result<std::vector<Metric>> metrics = benchmark.Run(ctx);
    if (metrics.ok()) {
      record.metrics = std::move(metrics).value();
    } else {
      record.status = BenchStatus::kFailed;
      record.return_code = return_code::kFailed;
      record.error = metrics.status().message();
    }
  } catch (const std::bad_alloc&) {
    record.status = BenchStatus::kFailed;
    record.return_code = return_code::kFailed;
    record.error = "out of host memory";
  } catch (const std::exception& e) {
    record.status = BenchStatus::kFailed;
    record.return_code = return_code::kFailed;
    record.error = fmt::format("unexpected exception: {}", e.what());
  }
  // A record cut short reads as "exited without a complete result" in the parent.
  _exit(WriteAll(fd, DumpJson(ToJson(record)), "the result pipe").ok() ? 0 : 3);
}

struct ChildOutcome {
  std::string output;  // what the child wrote before it exited
  int wait_status = 0;
  bool timed_out = false;
  bool cancelled = false;
};

// Waits for the child `pid`, reading `fd` to its end, killing the child's process group at the
// deadline or on cancel.
ChildOutcome Supervise(pid_t pid, int fd, double limit_s, const std::atomic<bool>& cancel,
                       Clock& clock) {
  ChildOutcome out;
  const double deadline = clock.MonotonicSeconds() + limit_s;
  bool eof = false;
  while (!eof) {
    if (cancel.load()) {
      out.cancelled = true;
      break;
    }
    if (clock.MonotonicSeconds() >= deadline) {
      out.timed_out = true;
      break;
    }
    pollfd p{fd, POLLIN, 0};
    const int r = poll(&p, 1, kPollIntervalMs);
    if (r < 0 && errno != EINTR) break;
    if (r <= 0) continue;
    char buf[1 << 16];
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      eof = true;
    } else {
      out.output.append(buf, static_cast<size_t>(n));
    }
  }
  if (!eof) kill(-pid, SIGKILL);  // the whole group: the benchmark's own children die too
  while (waitpid(pid, &out.wait_status, 0) < 0 && errno == EINTR) {
  }
  return out;
}

std::string SignalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev != nullptr ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", sig);
}

void Fail(BenchmarkRecord& r, int code, std::string error) {
  r.status = BenchStatus::kFailed;
  r.return_code = code;
  r.error = std::move(error);
  r.metrics.clear();
}

// Turns what the child left behind into the benchmark's record.
BenchmarkRecord Interpret(const ChildOutcome& c, double limit_s) {
  BenchmarkRecord r;
  if (c.timed_out) {
    Fail(r, return_code::kTimeout, fmt::format("timed out after {:g} s", limit_s));
    return r;
  }
  if (WIFSIGNALED(c.wait_status)) {
    const int sig = WTERMSIG(c.wait_status);
    Fail(r, return_code::kSignalBase + sig, fmt::format("crashed with {}", SignalName(sig)));
    return r;
  }
  const int code = WIFEXITED(c.wait_status) ? WEXITSTATUS(c.wait_status) : -1;
  Result<BenchmarkRecord> parsed = ParseBenchmarkRecord(c.output, "benchmark output");
  if (code != 0 || !parsed.ok()) {
    Fail(r, code > 0 ? code : return_code::kFailed,
         fmt::format("exited with status {} without a complete result", code));
    return r;
  }
  return std::move(parsed).value();
}

// Creates the benchmark's private scratch directory.
Result<std::string> MakeScratch(const std::string& root, std::string_view name) {
  std::string dir = fmt::format("{}/vigil-{}-XXXXXX", root, name);
  if (mkdtemp(dir.data()) == nullptr) {
    return ErrnoError(fmt::format("cannot create a scratch directory in {}", root));
  }
  return dir;
}

}  // namespace

Status ValidateParams(const std::vector<const Benchmark*>& benchmarks,
                      const RunnerOptions& options) {
  for (const auto& [bench_name, values] : options.params) {
    const Benchmark* bench = nullptr;
    for (const Benchmark* b : benchmarks) {
      if (b->name() == bench_name) bench = b;
    }
    if (bench == nullptr) {
      return Status::InvalidArgument(fmt::format("--set {}.*: benchmark {} is not part of this run",
                                                 bench_name, Quote(bench_name)));
    }
    const std::vector<ParamSpec> specs = bench->params();
    for (const auto& [name, value] : values) {
      const ParamSpec* spec = FindParam(specs, name);
      if (spec == nullptr) {
        std::string valid;
        for (const ParamSpec& p : specs) valid += (valid.empty() ? "" : ", ") + p.name;
        return Status::InvalidArgument(fmt::format("--set {}.{}: unknown parameter (valid: {})",
                                                   bench_name, name,
                                                   valid.empty() ? "none" : valid));
      }
      Result<double> v = ParseParamValue(spec->kind, value);
      if (!v.ok()) return v.status().WithContext(fmt::format("--set {}.{}", bench_name, name));
    }
  }
  return Status::Ok();
}

BenchContext MakeContext(const Benchmark& benchmark, const RunnerOptions& options) {
  BenchContext ctx;
  ctx.suite = options.suite;
  ctx.scratch_dir = options.scratch_root;
  ctx.gpus = options.gpus;
  const auto user = options.params.find(std::string(benchmark.name()));
  for (const ParamSpec& p : benchmark.params()) {
    std::string text = p.Default(options.suite);
    if (user != options.params.end()) {
      const auto it = user->second.find(p.name);
      if (it != user->second.end()) text = it->second;
    }
    // Defaults are written by us and user values were validated: both parse.
    Result<double> v = ParseParamValue(p.kind, text);
    ctx.params[p.name] = v.ok() ? *v : 0.0;
  }
  return ctx;
}

Result<std::vector<BenchmarkRecord>> RunBenchmarks(const std::vector<const Benchmark*>& benchmarks,
                                                   const RunnerOptions& options,
                                                   const RunEvents& events,
                                                   const std::atomic<bool>& cancel, Clock& clock) {
  std::vector<BenchmarkRecord> records;
  for (size_t i = 0; i < benchmarks.size(); ++i) {
    const Benchmark& bench = *benchmarks[i];
    if (events.on_start) events.on_start(i, benchmarks.size(), bench);
    const double start = clock.MonotonicSeconds();
    BenchContext ctx = MakeContext(bench, options);
    BenchmarkRecord record;
    const Status available = bench.Available(ctx);
    if (!available.ok()) {
      record.status = BenchStatus::kSkipped;
      record.error = available.message();
    } else {
      VIGIL_ASSIGN_OR_RETURN(ctx.scratch_dir, MakeScratch(options.scratch_root, bench.name()));
      const double limit = options.time_limit_override_s > 0 ? options.time_limit_override_s
                                                             : bench.time_limit_s(options.suite);
      int fds[2];
      if (pipe2(fds, O_CLOEXEC) != 0) return ErrnoError("pipe");
      const pid_t pid = fork();
      if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        std::filesystem::remove_all(ctx.scratch_dir);
        return ErrnoError("fork");
      }
      if (pid == 0) {
        setpgid(0, 0);  // a group of its own: Ctrl-C reaches only the parent, which decides
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        close(fds[0]);
        RunChild(bench, ctx, fds[1]);
      }
      setpgid(pid, pid);  // also here, so that kill(-pid) works whichever side runs first
      close(fds[1]);
      const ChildOutcome outcome = Supervise(pid, fds[0], limit, cancel, clock);
      close(fds[0]);
      std::error_code ec;
      std::filesystem::remove_all(ctx.scratch_dir, ec);
      if (ec) spdlog::warn("cannot remove scratch directory {}: {}", ctx.scratch_dir, ec.message());
      // A stop that reached the benchmark too (pkill, a service manager signalling the group)
      // may have ended it before the run saw the request: an interruption all the same, and no
      // benchmark failure.
      if (outcome.cancelled || cancel.load()) return Status::Cancelled("interrupted");
      record = Interpret(outcome, limit);
    }
    record.name = std::string(bench.name());
    record.component = std::string(bench.component());
    record.duration_s = clock.MonotonicSeconds() - start;
    if (events.on_finish) events.on_finish(i, benchmarks.size(), record);
    records.push_back(std::move(record));
  }
  return records;
}

}  // namespace vigil
