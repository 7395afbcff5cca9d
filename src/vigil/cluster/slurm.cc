#include "vigil/cluster/slurm.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "vigil/core/text.h"

namespace vigil::cluster {
namespace {

// The text after " <key>=" up to the next space (or the line's end): key=value words as
// `scontrol --oneliner` prints them. npos when the key is not there.
std::string_view Field(std::string_view line, std::string_view key, bool to_end) {
  size_t at = 0;
  const std::string needle = fmt::format("{}=", key);
  while (true) {
    at = line.find(needle, at);
    if (at == std::string_view::npos) return {};
    if (at == 0 || line[at - 1] == ' ') break;
    ++at;
  }
  std::string_view value = line.substr(at + needle.size());
  if (!to_end) value = value.substr(0, value.find(' '));
  return value;
}

// "vigil: GPU 3 hbm [root@2026-11-24T03:18:20]" -> "vigil: GPU 3 hbm".
std::string_view WithoutStamp(std::string_view reason) {
  while (!reason.empty() &&
         (reason.back() == '\n' || reason.back() == '\r' || reason.back() == ' ')) {
    reason.remove_suffix(1);
  }
  if (!reason.empty() && reason.back() == ']') {
    const size_t open = reason.rfind(" [");
    if (open != std::string_view::npos && reason.substr(open).find('@') != std::string_view::npos) {
      reason = reason.substr(0, open);
    }
  }
  return reason;
}

// The pieces of `s` between `sep`s (an empty piece where two meet).
std::vector<std::string_view> Pieces(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    const size_t at = s.find(sep);
    out.push_back(s.substr(0, at));
    if (at == std::string_view::npos) return out;
    s.remove_prefix(at + 1);
  }
}

// What a failed command said, for the error message: its stderr, else its stdout.
std::string Said(const CommandOutput& out) {
  std::string text = std::string(Trim(out.err));
  if (text.empty()) text = std::string(Trim(out.out));
  return text.empty() ? "(nothing printed)" : text;
}

}  // namespace

bool SlurmNode::Drained() const {
  return std::find(state.begin(), state.end(), "DRAIN") != state.end();
}

NodeUse SlurmNode::Use() const {
  if (state.empty()) return NodeUse::kUnavailable;
  std::string_view base = state.front();
  // Slurm before 21.08 wrote flags as a symbol after the base state: * not responding, ~ ! %
  // powered or powering down, # powering up, $ maintenance, @ ^ reboot; - planned.
  bool busy = false;
  while (!base.empty() &&
         std::string_view("*~#%!$@^-").find(base.back()) != std::string_view::npos) {
    if (base.back() != '-') return NodeUse::kUnavailable;
    busy = true;
    base.remove_suffix(1);
  }
  // A flag that is not known to leave the node usable makes it unavailable: Vigil never sends a
  // validation to a node in a state it does not understand.
  static constexpr std::string_view kHarmless[] = {"CLOUD", "DYNAMIC_NORM"};
  static constexpr std::string_view kWaits[] = {"RESERVED", "PLANNED", "COMPLETING"};
  const auto among = [](const auto& list, std::string_view flag) {
    return std::find(std::begin(list), std::end(list), flag) != std::end(list);
  };
  for (size_t i = 1; i < state.size(); ++i) {
    if (among(kWaits, state[i])) {
      busy = true;
    } else if (!among(kHarmless, state[i])) {
      return NodeUse::kUnavailable;
    }
  }
  if (base == "IDLE") return busy ? NodeUse::kBusy : NodeUse::kIdle;
  static constexpr std::string_view kBusyBase[] = {"ALLOCATED", "ALLOC", "MIXED", "COMPLETING"};
  return among(kBusyBase, base) ? NodeUse::kBusy : NodeUse::kUnavailable;
}

bool SlurmNode::DrainedByVigil() const {
  return Drained() && reason.rfind(kFaultLinePrefix, 0) == 0;
}

Result<SlurmNode> ParseScontrolNode(std::string_view line) {
  SlurmNode node;
  const std::string_view name = Field(line, "NodeName", false);
  if (name.empty()) return Status::InvalidArgument("scontrol show node: no NodeName= field");
  node.name = std::string(name);
  const std::string_view state = Field(line, "State", false);
  if (state.empty()) {
    return Status::InvalidArgument(fmt::format("scontrol show node {}: no State= field", name));
  }
  for (std::string_view flag : Pieces(state, '+')) {
    if (!flag.empty()) node.state.emplace_back(flag);
  }
  const std::string_view reason = WithoutStamp(Field(line, "Reason", true));
  if (reason != "(null)" && reason != "none") node.reason = std::string(reason);
  return node;
}

std::string_view SlurmActionName(SlurmAction a) {
  switch (a) {
    case SlurmAction::kDone:
      return "done";
    case SlurmAction::kAlready:
      return "already";
    case SlurmAction::kNotVigils:
      return "not-vigils";
    case SlurmAction::kBreakerOpen:
      return "breaker-open";
  }
  return "unknown";
}

size_t DrainLimit(double max_share, size_t nodes) {
  if (!(max_share > 0)) return 0;
  const double share = std::min(max_share, 1.0) * static_cast<double>(nodes);
  return std::max<size_t>(1, static_cast<size_t>(std::floor(share)));
}

Slurm::Slurm(CommandRunner& runner, SlurmOptions options)
    : runner_(runner), options_(std::move(options)) {}

Result<CommandOutput> Slurm::Call(const std::string& program, std::vector<std::string> args,
                                  std::vector<std::string> unset_prefixes) {
  CommandSpec spec;
  spec.argv.push_back(program);
  for (std::string& a : args) spec.argv.push_back(std::move(a));
  spec.unset_prefixes = std::move(unset_prefixes);
  if (!options_.conf.empty()) spec.env.push_back("SLURM_CONF=" + options_.conf);
  spec.timeout_s = options_.timeout_s;
  return runner_.Run(spec);
}

Result<CommandOutput> Slurm::Scontrol(std::vector<std::string> args) {
  return Call(options_.scontrol, std::move(args));
}

Result<SlurmNode> Slurm::Node(std::string_view node) {
  VIGIL_ASSIGN_OR_RETURN(CommandOutput out,
                         Scontrol({"show", "node", "--oneliner", std::string(node)}));
  if (out.exit_code != 0) {
    const std::string said = Said(out);
    if (said.find("not found") != std::string::npos) {
      return Status::NotFound(fmt::format("Slurm has no node {}: {}", Quote(node), said));
    }
    return Status::IoError(
        fmt::format("scontrol show node {}: exit {}: {}", node, out.exit_code, said));
  }
  for (std::string_view line : Pieces(out.out, '\n')) {
    if (Field(line, "NodeName", false) == node) return ParseScontrolNode(line);
  }
  return Status::NotFound(fmt::format("scontrol show node {} did not list it", Quote(node)));
}

Result<std::vector<SlurmNode>> Slurm::Nodes() {
  VIGIL_ASSIGN_OR_RETURN(CommandOutput out, Scontrol({"show", "node", "--oneliner"}));
  if (out.exit_code != 0) {
    return Status::IoError(
        fmt::format("scontrol show node: exit {}: {}", out.exit_code, Said(out)));
  }
  std::vector<SlurmNode> nodes;
  for (std::string_view line : Pieces(out.out, '\n')) {
    if (Trim(line).empty()) continue;
    VIGIL_ASSIGN_OR_RETURN(SlurmNode n, ParseScontrolNode(line));
    nodes.push_back(std::move(n));
  }
  return nodes;
}

namespace {

size_t VigilsDrains(const std::vector<SlurmNode>& nodes) {
  return static_cast<size_t>(std::count_if(nodes.begin(), nodes.end(),
                                           [](const SlurmNode& n) { return n.DrainedByVigil(); }));
}

}  // namespace

Result<SlurmAction> Slurm::DrainWithinLimit(std::string_view node, std::string_view reason,
                                            double max_share) {
  VIGIL_ASSIGN_OR_RETURN(const std::vector<SlurmNode> before, Nodes());
  // A node drained already keeps its reason, whatever the breaker says of others.
  const auto self = std::find_if(before.begin(), before.end(),
                                 [&](const SlurmNode& n) { return n.name == node; });
  if (self != before.end() && self->Drained()) return SlurmAction::kAlready;
  const size_t limit = DrainLimit(max_share, before.size());
  if (VigilsDrains(before) >= limit) return SlurmAction::kBreakerOpen;
  VIGIL_ASSIGN_OR_RETURN(const SlurmAction drained, Drain(node, reason));
  if (drained != SlurmAction::kDone) return drained;
  // Others may have drained since `before`. Over the limit now, this drain is undone: of the
  // drains kept, the one made last looked after all of them, so no more than the limit stay.
  VIGIL_ASSIGN_OR_RETURN(const std::vector<SlurmNode> after, Nodes());
  if (VigilsDrains(after) <= limit) return SlurmAction::kDone;
  VIGIL_RETURN_IF_ERROR(Update(node, {"State=UNDRAIN"}));
  return SlurmAction::kBreakerOpen;
}

Status Slurm::Update(std::string_view node, std::vector<std::string> settings) {
  std::vector<std::string> args = {"update", fmt::format("NodeName={}", node)};
  for (std::string& s : settings) args.push_back(std::move(s));
  const std::string text = CommandText(args);
  VIGIL_ASSIGN_OR_RETURN(CommandOutput out, Scontrol(std::move(args)));
  if (out.exit_code != 0) {
    return Status::IoError(fmt::format("scontrol {}: exit {}: {}", text, out.exit_code, Said(out)));
  }
  return Status::Ok();
}

Result<SlurmAction> Slurm::Drain(std::string_view node, std::string_view reason) {
  if (reason.rfind(kFaultLinePrefix, 0) != 0 ||
      reason.find_first_of("\r\n") != std::string_view::npos) {
    return Status::InvalidArgument(
        fmt::format("drain reason {}: must start with \"{}\" and be one line", Quote(reason),
                    kFaultLinePrefix));
  }
  VIGIL_ASSIGN_OR_RETURN(const SlurmNode now, Node(node));
  if (now.Drained()) return SlurmAction::kAlready;
  VIGIL_RETURN_IF_ERROR(Update(node, {"State=DRAIN", fmt::format("Reason={}", reason)}));
  return SlurmAction::kDone;
}

std::string ValidationJobName(std::string_view node) {
  return fmt::format("{}{}", kValidationJobPrefix, node);
}

std::string_view ValidationJobNode(std::string_view job_name) {
  if (job_name.rfind(kValidationJobPrefix, 0) != 0) return {};
  return job_name.substr(kValidationJobPrefix.size());
}

std::vector<std::string> SbatchArgs(const ValidationJob& job) {
  std::vector<std::string> args = {"--parsable",
                                   "--job-name=" + ValidationJobName(job.node),
                                   "--nodelist=" + job.node,
                                   "--nodes=1",
                                   "--ntasks=1",
                                   "--exclusive",
                                   "--mem=0"};
  if (job.time_limit_s > 0) {
    args.push_back(
        fmt::format("--time={}", static_cast<long long>(std::ceil(job.time_limit_s / 60))));
  }
  if (!job.partition.empty()) args.push_back("--partition=" + job.partition);
  if (!job.account.empty()) args.push_back("--account=" + job.account);
  if (!job.output.empty()) args.push_back("--output=" + job.output);
  args.push_back("--wrap=" + job.command);
  return args;
}

Result<std::vector<SlurmJob>> Slurm::Jobs() {
  // SQUEUE_USERS, SQUEUE_PARTITION and the like in this process's environment would narrow the
  // queue to what the caller's shell usually wants to see.
  VIGIL_ASSIGN_OR_RETURN(
      CommandOutput out,
      Call(options_.squeue,
           {"--noheader", "--all", std::string(kQueuedStates), "--format=%i|%j|%T"}, {"SQUEUE_"}));
  if (out.exit_code != 0) {
    return Status::IoError(fmt::format("squeue: exit {}: {}", out.exit_code, Said(out)));
  }
  std::vector<SlurmJob> jobs;
  for (std::string_view line : Pieces(out.out, '\n')) {
    line = Trim(line);
    if (line.empty()) continue;
    // A job's name may hold '|'; its id and state cannot.
    const size_t first = line.find('|');
    const size_t last = line.rfind('|');
    if (first == std::string_view::npos || first == last) {
      return Status::InvalidArgument(
          fmt::format("squeue: line {}: not id|name|state", Quote(line)));
    }
    jobs.push_back(SlurmJob{std::string(line.substr(0, first)),
                            std::string(line.substr(first + 1, last - first - 1)),
                            std::string(line.substr(last + 1))});
  }
  return jobs;
}

Status CheckValidationJob(const ValidationJob& job) {
  if (!IsPlainWord(job.node, "-_.")) {
    return Status::InvalidArgument(
        fmt::format("submit: node {}: not one node's name", Quote(job.node)));
  }
  if (Trim(job.command).empty()) return Status::InvalidArgument("submit: empty command");
  return Status::Ok();
}

Result<std::string> Slurm::Submit(const ValidationJob& job) {
  VIGIL_RETURN_IF_ERROR(CheckValidationJob(job));
  VIGIL_ASSIGN_OR_RETURN(CommandOutput out, Call(options_.sbatch, SbatchArgs(job)));
  if (out.exit_code != 0) {
    return Status::IoError(
        fmt::format("sbatch for {}: exit {}: {}", job.node, out.exit_code, Said(out)));
  }
  // --parsable prints "<id>" or "<id>;<cluster>".
  const std::string_view printed = Trim(out.out);
  const std::string_view id = printed.substr(0, printed.find(';'));
  if (id.empty() || id.find_first_not_of("0123456789_") != std::string_view::npos) {
    return Status::IoError(
        fmt::format("sbatch for {}: no job id in what it printed: {}", job.node, Quote(printed)));
  }
  return std::string(id);
}

Result<SlurmAction> Slurm::Resume(std::string_view node) {
  VIGIL_ASSIGN_OR_RETURN(const SlurmNode now, Node(node));
  if (!now.Drained()) return SlurmAction::kAlready;
  if (!now.DrainedByVigil()) return SlurmAction::kNotVigils;
  VIGIL_RETURN_IF_ERROR(Update(node, {"State=UNDRAIN"}));
  return SlurmAction::kDone;
}

}  // namespace vigil::cluster
