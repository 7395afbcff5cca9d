#include "vigil/testing/slurm_cluster.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>
#include <utility>

#include "vigil/testing/free_port.h"

namespace vigil::testing {
namespace {

// How long the daemons have to stop after SIGTERM before SIGKILL.
constexpr std::chrono::seconds kStopGrace{5};

bool OnPath(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/bin:/usr/sbin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (access((dir + "/" + program).c_str(), X_OK) == 0) return true;
  }
  return access(("/usr/sbin/" + program).c_str(), X_OK) == 0;
}

std::string ShortHostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "localhost";
  std::string name = buf;
  return name.substr(0, name.find('.'));
}

// How a Slurm daemon runs here: `argv` with SLURM_CONF=conf in the background, in a process group
// of its own (stopped with what it starts), its output appended to `log`.
ChildOptions Daemon(std::vector<std::string> argv, const std::string& conf,
                    const std::string& log) {
  ChildOptions o;
  o.argv = std::move(argv);
  o.env = {{"SLURM_CONF", conf}};
  o.log = log;
  o.append_log = true;
  o.own_group = true;
  o.grace = kStopGrace;
  return o;
}

// Runs `command` (a shell line) with SLURM_CONF=conf; its output.
std::string Output(const std::string& command, const std::string& conf) {
  const std::string line = fmt::format("SLURM_CONF='{}' {} 2>&1", conf, command);
  FILE* p = popen(line.c_str(), "r");
  if (p == nullptr) return "";
  std::string out;
  char buf[4096];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

}  // namespace

Result<std::unique_ptr<SlurmCluster>> SlurmCluster::Start(const std::string& dir,
                                                          const SlurmClusterOptions& options) {
  for (const char* program : {"slurmctld", "slurmd", "scontrol", "sinfo"}) {
    if (!OnPath(program)) {
      return Status::Unavailable(
          fmt::format("{} is not installed (Debian: slurmctld, slurmd, "
                      "slurm-client)",
                      program));
    }
  }
  if (geteuid() != 0) return Status::Unavailable("Slurm's daemons need root here");
  std::unique_ptr<SlurmCluster> c(new SlurmCluster());
  c->dir_ = dir;
  c->conf_ = dir + "/slurm.conf";
  for (const char* sub : {"/state", "/log"}) {
    if (mkdir((dir + sub).c_str(), 0755) != 0 && errno != EEXIST) {
      return Status::IoError(fmt::format("cannot make {}{}", dir, sub));
    }
  }
  const int ctld_port = FreeLoopbackPort();
  if (ctld_port < 0) return Status::Unavailable("no free port");
  std::string conf = fmt::format(
      "ClusterName=vigiltest\n"
      "SlurmctldHost={host}(127.0.0.1)\n"
      "SlurmctldPort={port}\n"
      "AuthType=auth/none\nCredType=cred/none\n"
      "SlurmUser=root\nSlurmdUser=root\n"
      "StateSaveLocation={dir}/state\n"
      "SlurmdSpoolDir={dir}/spool-%n\n"
      "SlurmctldPidFile={dir}/slurmctld.pid\nSlurmdPidFile={dir}/slurmd-%n.pid\n"
      "SlurmctldLogFile={dir}/log/slurmctld.log\nSlurmdLogFile={dir}/log/slurmd-%n.log\n"
      "ProctrackType=proctrack/pgid\nTaskPlugin=task/none\n"
      "SelectType=select/cons_tres\nSchedulerType=sched/builtin\n"
      "MpiDefault=none\nJobCompType=jobcomp/none\n"
      "AccountingStorageType=accounting_storage/none\n"
      "ReturnToService=2\nSlurmdTimeout=300\n",
      fmt::arg("host", ShortHostName()), fmt::arg("port", ctld_port), fmt::arg("dir", dir));
  if (!options.health_check_program.empty()) {
    conf += fmt::format("HealthCheckProgram={}\nHealthCheckInterval={}\nHealthCheckNodeState=ANY\n",
                        options.health_check_program, options.health_check_interval_s);
  }
  for (int i = 0; i < options.nodes; ++i) {
    const int port = FreeLoopbackPort();
    if (port < 0) return Status::Unavailable("no free port");
    c->nodes_.push_back(fmt::format("vnode{}", i));
    conf +=
        fmt::format("NodeName=vnode{} NodeAddr=127.0.0.1 Port={} CPUs=1 State=UNKNOWN\n", i, port);
  }
  for (int i = 0; i < options.idle_nodes; ++i) {
    c->idle_nodes_.push_back(fmt::format("vidle{}", i));
    conf += fmt::format("NodeName=vidle{} NodeAddr=127.0.0.2 CPUs=1 State=UNKNOWN\n", i);
  }
  conf += "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n";
  std::ofstream(c->conf_) << conf;

  c->daemons_.push_back(std::make_unique<Child>(
      Daemon({"slurmctld", "-D", "-i"}, c->conf_, dir + "/log/slurmctld.out")));
  if (!c->daemons_.back()->started()) return Status::Unavailable("cannot start slurmctld");
  for (const std::string& node : c->nodes_) {
    c->daemons_.push_back(std::make_unique<Child>(
        Daemon({"slurmd", "-D", "-N", node}, c->conf_, dir + "/log/" + node + ".out")));
    if (!c->daemons_.back()->started()) return Status::Unavailable("cannot start slurmd");
  }
  // The controller up and every slurmd node registered: no longer UNKNOWN or NOT_RESPONDING ("*").
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    int up = 0;
    for (const std::string& node : c->nodes_) {
      const std::string state = Output("sinfo -h -N -n " + node + " -o %T", c->conf_);
      up += !state.empty() && state.find("unknown") == std::string::npos &&
            state.find('*') == std::string::npos && state.find("error") == std::string::npos &&
            state.find("not responding") == std::string::npos;
    }
    // With no slurmd, the controller answering is what ready means.
    if (up == static_cast<int>(c->nodes_.size()) &&
        Output("scontrol ping", c->conf_).find("is UP") != std::string::npos) {
      return c;
    }
    for (const std::unique_ptr<Child>& d : c->daemons_) {
      if (!d->Alive()) {
        return Status::Unavailable(
            fmt::format("a Slurm daemon exited at start: {}", c->ControllerLog()));
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return Status::Unavailable(
      fmt::format("Slurm's nodes did not register in 30 s: {}", c->ControllerLog()));
}

SlurmCluster::~SlurmCluster() {
  // All asked to stop at once, then each given what is left of one grace.
  for (const std::unique_ptr<Child>& d : daemons_) d->Signal(SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + kStopGrace;
  for (const std::unique_ptr<Child>& d : daemons_) d->Stop(deadline);
}

std::string SlurmCluster::ControllerLog() const {
  std::ifstream in(dir_ + "/log/slurmctld.log");
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  std::string out;
  for (size_t i = lines.size() > 10 ? lines.size() - 10 : 0; i < lines.size(); ++i) {
    out += lines[i] + "\n";
  }
  return out;
}

}  // namespace vigil::testing
