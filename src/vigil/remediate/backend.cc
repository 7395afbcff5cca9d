#include "vigil/remediate/backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "vigil/cluster/slurm.h"
#include "vigil/core/text.h"

namespace vigil::remediate {

std::string Substitute(std::string_view arg, std::string_view action, std::string_view node,
                       std::string_view reason) {
  std::string out;
  while (!arg.empty()) {
    const size_t open = arg.find('{');
    out += arg.substr(0, open);
    if (open == std::string_view::npos) break;
    arg.remove_prefix(open);
    std::string_view with;
    size_t used = 0;
    for (const auto& [name, value] :
         {std::pair<std::string_view, std::string_view>{"{action}", action},
          {"{node}", node},
          {"{reason}", reason}}) {
      if (arg.rfind(name, 0) == 0) {
        with = value;
        used = name.size();
        break;
      }
    }
    if (used == 0) {
      out += '{';
      arg.remove_prefix(1);
    } else {
      out += with;
      arg.remove_prefix(used);
    }
  }
  return out;
}

namespace {

// Passes commands to another runner and keeps what each one ran and printed: the Slurm backend's
// attempts say which scontrol calls they made. Not thread-safe (one backend call at a time).
class RecordingRunner : public cluster::CommandRunner {
 public:
  explicit RecordingRunner(cluster::CommandRunner& runner) : runner_(runner) {}

  Result<cluster::CommandOutput> Run(const cluster::CommandSpec& spec) override {
    const std::string line = cluster::CommandText(spec.argv);
    command_ += command_.empty() ? "" : "\n";
    command_ += line;
    Result<cluster::CommandOutput> out = runner_.Run(spec);
    std::string said;
    if (!out.ok()) {
      said = out.status().message();
    } else {
      said = std::string(Trim(out->out));
      const std::string_view err = Trim(out->err);
      if (!err.empty()) said += said.empty() ? std::string(err) : fmt::format("\n{}", err);
      if (out->exit_code != 0) said = fmt::format("exit {}: {}", out->exit_code, said);
    }
    // A listing of every node is long: the attempt keeps how long it was, not its text.
    if (spec.argv.size() == 4 && spec.argv[1] == "show" && out.ok() && out->exit_code == 0 &&
        spec.argv[3] == "--oneliner") {
      const size_t lines = static_cast<size_t>(std::count(out->out.begin(), out->out.end(), '\n'));
      said = fmt::format("({} node{} listed)", lines, lines == 1 ? "" : "s");
    }
    if (!said.empty()) {
      output_ += output_.empty() ? "" : "\n";
      output_ += fmt::format("{}: {}", spec.argv.size() > 1 ? spec.argv[1] : spec.argv[0], said);
    }
    return out;
  }

  // What was run and printed since the last call, cleared.
  std::pair<std::string, std::string> Take() {
    return {std::exchange(command_, {}), std::exchange(output_, {})};
  }

 private:
  cluster::CommandRunner& runner_;
  std::string command_;
  std::string output_;
};

Attempt Finish(RecordingRunner& runner, Result<cluster::SlurmAction> done) {
  Attempt a;
  std::tie(a.command, a.output) = runner.Take();
  if (!done.ok()) {
    a.status = done.status();
    return a;
  }
  switch (*done) {
    case cluster::SlurmAction::kDone:
      a.outcome = BackendOutcome::kDone;
      break;
    case cluster::SlurmAction::kAlready:
      a.outcome = BackendOutcome::kAlready;
      break;
    case cluster::SlurmAction::kNotVigils:
      a.outcome = BackendOutcome::kNotVigils;
      break;
    case cluster::SlurmAction::kBreakerOpen:
      a.outcome = BackendOutcome::kBreakerOpen;
      break;
  }
  return a;
}

class SlurmBackend : public Backend {
 public:
  SlurmBackend(cluster::CommandRunner& runner, const cluster::SlurmOptions& options,
               double max_drained_share)
      : recording_(runner), slurm_(recording_, options), share_(max_drained_share) {}

  std::string_view name() const override { return "slurm"; }

  Attempt Drain(std::string_view node, std::string_view reason) override {
    return Finish(recording_, slurm_.DrainWithinLimit(node, reason, share_));
  }

  Attempt Resume(std::string_view node) override { return Finish(recording_, slurm_.Resume(node)); }

  Result<std::optional<BackendView>> View() override {
    Result<std::vector<cluster::SlurmNode>> nodes = slurm_.Nodes();
    recording_.Take();
    if (!nodes.ok()) return nodes.status();
    BackendView view;
    view.nodes = nodes->size();
    for (const cluster::SlurmNode& n : *nodes) {
      if (n.DrainedByVigil()) view.vigils_drains.insert(n.name);
    }
    return std::optional<BackendView>(std::move(view));
  }

 private:
  RecordingRunner recording_;
  cluster::Slurm slurm_;
  const double share_;
};

class CommandBackend : public Backend {
 public:
  CommandBackend(cluster::CommandRunner& runner, CommandBackendOptions options)
      : runner_(runner), options_(std::move(options)) {}

  std::string_view name() const override { return "command"; }

  Attempt Drain(std::string_view node, std::string_view reason) override {
    return Run("drain", node, reason);
  }
  Attempt Resume(std::string_view node) override { return Run("resume", node, ""); }
  Result<std::optional<BackendView>> View() override { return std::optional<BackendView>(); }

 private:
  Attempt Run(std::string_view action, std::string_view node, std::string_view reason) {
    cluster::CommandSpec spec;
    for (const std::string& arg : options_.argv) {
      spec.argv.push_back(Substitute(arg, action, node, reason));
    }
    spec.timeout_s = options_.timeout_s;
    Attempt a;
    a.command = cluster::CommandText(spec.argv);
    Result<cluster::CommandOutput> out = runner_.Run(spec);
    if (!out.ok()) {
      a.status = out.status().WithContext(a.command);
      a.output = out.status().message();
      return a;
    }
    a.output = std::string(Trim(out->out));
    const std::string_view err = Trim(out->err);
    if (!err.empty()) a.output += a.output.empty() ? std::string(err) : fmt::format("\n{}", err);
    if (out->exit_code != 0) {
      a.status = Status::IoError(fmt::format("{}: exit {}: {}", a.command, out->exit_code,
                                             a.output.empty() ? "(nothing printed)" : a.output));
    }
    return a;
  }

  cluster::CommandRunner& runner_;
  const CommandBackendOptions options_;
};

// A backend with the runner it borrows.
class OwningBackend : public Backend {
 public:
  OwningBackend(std::unique_ptr<cluster::CommandRunner> runner, const Policy& policy)
      : runner_(std::move(runner)), backend_(MakeBackend(policy, *runner_)) {}
  std::string_view name() const override { return backend_->name(); }
  Attempt Drain(std::string_view node, std::string_view reason) override {
    return backend_->Drain(node, reason);
  }
  Attempt Resume(std::string_view node) override { return backend_->Resume(node); }
  Result<std::optional<BackendView>> View() override { return backend_->View(); }

 private:
  const std::unique_ptr<cluster::CommandRunner> runner_;  // before backend_: it borrows it
  const std::unique_ptr<Backend> backend_;
};

}  // namespace

std::unique_ptr<Backend> MakeSlurmBackend(cluster::CommandRunner& runner,
                                          const cluster::SlurmOptions& options,
                                          double max_drained_share) {
  return std::make_unique<SlurmBackend>(runner, options, max_drained_share);
}

std::unique_ptr<Backend> MakeCommandBackend(cluster::CommandRunner& runner,
                                            const CommandBackendOptions& options) {
  return std::make_unique<CommandBackend>(runner, options);
}

std::unique_ptr<Backend> MakeBackend(const Policy& policy, cluster::CommandRunner& runner) {
  if (policy.backend == BackendKind::kCommand) return MakeCommandBackend(runner, policy.command);
  return MakeSlurmBackend(runner, policy.slurm, policy.max_drained_share);
}

std::unique_ptr<Backend> MakeBackend(const Policy& policy) {
  return std::make_unique<OwningBackend>(cluster::MakeProcessRunner(), policy);
}

}  // namespace vigil::remediate
