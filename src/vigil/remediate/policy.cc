#include "vigil/remediate/policy.h"

#include <fmt/format.h>

#include <cmath>
#include <initializer_list>

#include "vigil/core/duration.h"
#include "vigil/core/file.h"
#include "vigil/core/text.h"
#include "vigil/core/yaml_fields.h"

namespace vigil::remediate {

std::string_view ModeName(Mode mode) { return mode == Mode::kEnforce ? "enforce" : "dry-run"; }

std::string_view BackendKindName(BackendKind kind) {
  return kind == BackendKind::kCommand ? "command" : "slurm";
}

std::optional<Action> Policy::ActionFor(Trigger trigger) const {
  for (size_t i = 0; i < std::size(kPolicyTriggers); ++i) {
    if (kPolicyTriggers[i] == trigger) return on[i];
  }
  return std::nullopt;
}

namespace {

// Ranges of the policy's numbers (docs/serve.md).
constexpr double kMaxTimeoutS = 3600;
constexpr int kMaxLemonUploads = 1000;
constexpr int kMaxAttempts = 100;
constexpr double kMaxWindowS = 365 * kSecondsPerDay;

Result<Policy> Parse(const YAML::Node& doc, const YamlFields& r) {
  Policy p;
  if (doc.IsNull()) return p;  // an empty file: every default
  VIGIL_RETURN_IF_ERROR(r.Map(doc, "",
                              {"mode", "backend", "slurm", "command", "on", "lemon", "breaker",
                               "rate_limit", "dedupe", "retry"}));
  if (const YAML::Node n = doc["mode"]) {
    VIGIL_ASSIGN_OR_RETURN(const std::string m, r.Choice(n, "mode", {"dry-run", "enforce"}));
    p.mode = m == "enforce" ? Mode::kEnforce : Mode::kDryRun;
  }
  if (const YAML::Node n = doc["backend"]) {
    VIGIL_ASSIGN_OR_RETURN(const std::string b, r.Choice(n, "backend", {"slurm", "command"}));
    p.backend = b == "command" ? BackendKind::kCommand : BackendKind::kSlurm;
  }
  if (const YAML::Node s = doc["slurm"]) {
    VIGIL_RETURN_IF_ERROR(r.Map(s, "slurm", {"conf", "scontrol", "timeout"}));
    if (const YAML::Node n = s["conf"]) {
      VIGIL_ASSIGN_OR_RETURN(p.slurm.conf, r.Text(n, "slurm.conf"));
    }
    if (const YAML::Node n = s["scontrol"]) {
      VIGIL_ASSIGN_OR_RETURN(p.slurm.scontrol, r.Text(n, "slurm.scontrol"));
      if (p.slurm.scontrol.empty()) return r.Error(n, "slurm.scontrol", "empty");
    }
    if (const YAML::Node n = s["timeout"]) {
      VIGIL_ASSIGN_OR_RETURN(p.slurm.timeout_s, r.Seconds(n, "slurm.timeout", 0.1, kMaxTimeoutS));
    }
  }
  if (const YAML::Node c = doc["command"]) {
    VIGIL_RETURN_IF_ERROR(r.Map(c, "command", {"argv", "timeout"}));
    if (const YAML::Node n = c["argv"]) {
      if (!n.IsSequence() || n.size() == 0) {
        return r.Error(n, "command.argv", "expected a list of the program and its arguments");
      }
      for (size_t i = 0; i < n.size(); ++i) {
        VIGIL_ASSIGN_OR_RETURN(std::string arg, r.Text(n[i], fmt::format("command.argv[{}]", i)));
        p.command.argv.push_back(std::move(arg));
      }
      if (p.command.argv.front().empty()) return r.Error(n, "command.argv[0]", "empty");
    }
    if (const YAML::Node n = c["timeout"]) {
      VIGIL_ASSIGN_OR_RETURN(p.command.timeout_s,
                             r.Seconds(n, "command.timeout", 0.1, kMaxTimeoutS));
    }
  }
  if (p.backend == BackendKind::kCommand && p.command.argv.empty()) {
    const YAML::Node at = doc["command"] ? doc["command"] : doc["backend"];
    return r.Error(at, "command.argv", "the command backend needs the program to run");
  }
  if (const YAML::Node on = doc["on"]) {
    VIGIL_RETURN_IF_ERROR(
        r.Map(on, "on", {"defective", "critical_alert", "lemon", "passing_validation"}));
    p.on = {};  // given: only the triggers it names act
    for (size_t i = 0; i < std::size(kPolicyTriggers); ++i) {
      const Trigger t = kPolicyTriggers[i];
      const YAML::Node n = on[std::string(TriggerName(t))];
      if (!n) continue;
      const bool resume = t == Trigger::kPassingValidation;
      const std::string field = YamlFields::Path("on", TriggerName(t));
      VIGIL_ASSIGN_OR_RETURN(const std::string a,
                             r.Choice(n, field, {resume ? "resume" : "drain", "none"}));
      if (a != "none") p.on[i] = resume ? Action::kResume : Action::kDrain;
    }
  }
  if (const YAML::Node l = doc["lemon"]) {
    VIGIL_RETURN_IF_ERROR(r.Map(l, "lemon", {"defective", "uploads"}));
    if (const YAML::Node n = l["uploads"]) {
      VIGIL_ASSIGN_OR_RETURN(p.lemon_uploads, r.Whole(n, "lemon.uploads", 1, kMaxLemonUploads));
    }
    if (const YAML::Node n = l["defective"]) {
      VIGIL_ASSIGN_OR_RETURN(p.lemon_defective, r.Whole(n, "lemon.defective", 1, kMaxLemonUploads));
    }
    if (p.lemon_defective > p.lemon_uploads) {
      return r.Error(
          l["defective"] ? l["defective"] : l, "lemon.defective",
          fmt::format("{} is more than lemon.uploads ({})", p.lemon_defective, p.lemon_uploads));
    }
  }
  if (const YAML::Node b = doc["breaker"]) {
    VIGIL_RETURN_IF_ERROR(r.Map(b, "breaker", {"max_drained_share"}));
    if (const YAML::Node n = b["max_drained_share"]) {
      VIGIL_ASSIGN_OR_RETURN(p.max_drained_share, r.Number(n, "breaker.max_drained_share", 0, 1));
    }
  }
  if (const YAML::Node rl = doc["rate_limit"]) {
    VIGIL_RETURN_IF_ERROR(r.Map(rl, "rate_limit", {"actions", "per"}));
    if (const YAML::Node n = rl["actions"]) {
      VIGIL_ASSIGN_OR_RETURN(p.rate_actions, r.Whole(n, "rate_limit.actions", 1, 1000000));
    }
    if (const YAML::Node n = rl["per"]) {
      VIGIL_ASSIGN_OR_RETURN(p.rate_per_s, r.Seconds(n, "rate_limit.per", 1, kMaxWindowS));
    }
  }
  if (const YAML::Node n = doc["dedupe"]) {
    VIGIL_ASSIGN_OR_RETURN(p.dedupe_s, r.Seconds(n, "dedupe", 0, kMaxWindowS));
  }
  if (const YAML::Node rt = doc["retry"]) {
    VIGIL_RETURN_IF_ERROR(r.Map(rt, "retry", {"initial", "max", "attempts"}));
    if (const YAML::Node n = rt["initial"]) {
      VIGIL_ASSIGN_OR_RETURN(p.retry_initial_s, r.Seconds(n, "retry.initial", 0.01, kMaxWindowS));
    }
    if (const YAML::Node n = rt["max"]) {
      VIGIL_ASSIGN_OR_RETURN(p.retry_max_s, r.Seconds(n, "retry.max", 0.01, kMaxWindowS));
    }
    if (const YAML::Node n = rt["attempts"]) {
      VIGIL_ASSIGN_OR_RETURN(p.retry_attempts, r.Whole(n, "retry.attempts", 1, kMaxAttempts));
    }
    if (p.retry_max_s < p.retry_initial_s) {
      return r.Error(rt["max"] ? rt["max"] : rt, "retry.max",
                     fmt::format("{} is shorter than retry.initial ({})",
                                 FormatDuration(p.retry_max_s), FormatDuration(p.retry_initial_s)));
    }
  }
  return p;
}

}  // namespace

Result<Policy> ParsePolicy(std::string_view text, std::string_view source) {
  VIGIL_ASSIGN_OR_RETURN(const YAML::Node doc, LoadYaml(text, source));
  return Parse(doc, YamlFields(source, "policy"));
}

Result<Policy> ReadPolicy(const std::string& path) {
  VIGIL_ASSIGN_OR_RETURN(const std::string text, ReadFile(path));
  return ParsePolicy(text, path);
}

}  // namespace vigil::remediate
