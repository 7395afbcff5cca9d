#include "vigil/remediate/policy.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <initializer_list>

#include "vigil/core/duration.h"
#include "vigil/core/file.h"
#include "vigil/core/text.h"

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

// Reads one policy file; every error names the source, the line and the field.
class Reader {
 public:
  explicit Reader(std::string_view source) : source_(source) {}

  Status Error(const YAML::Node& at, std::string_view field, std::string_view problem) const {
    const int line = at.Mark().line;
    return Status::InvalidArgument(
        fmt::format("{}:{}: {}: {}", source_, line < 0 ? 1 : line + 1, field, problem));
  }

  // A mapping whose keys are all among `known`; `field` is its dotted path ("" for the top).
  Status Map(const YAML::Node& node, std::string_view field,
             std::initializer_list<std::string_view> known) const {
    if (!node.IsMap()) {
      return Error(node, field.empty() ? "policy" : field, "expected a mapping of keys to values");
    }
    for (const auto& kv : node) {
      const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string("?");
      bool ok = false;
      std::string names;
      for (std::string_view k : known) {
        ok |= k == key;
        names += names.empty() ? "" : ", ";
        names += k;
      }
      if (!ok) {
        return Error(kv.first, Path(field, key),
                     fmt::format("unknown key (expected one of {})", names));
      }
    }
    return Status::Ok();
  }

  static std::string Path(std::string_view parent, std::string_view key) {
    return parent.empty() ? std::string(key) : fmt::format("{}.{}", parent, key);
  }

  Result<std::string> Text(const YAML::Node& node, std::string_view field) const {
    if (!node.IsScalar()) return Error(node, field, "expected a text");
    return node.Scalar();
  }

  // One of `choices`.
  Result<std::string> Choice(const YAML::Node& node, std::string_view field,
                             std::initializer_list<std::string_view> choices) const {
    VIGIL_ASSIGN_OR_RETURN(std::string text, Text(node, field));
    std::string names;
    for (std::string_view c : choices) {
      if (c == text) return text;
      names += names.empty() ? "" : ", ";
      names += c;
    }
    return Error(node, field, fmt::format("{} is not one of {}", Quote(text), names));
  }

  Result<double> Seconds(const YAML::Node& node, std::string_view field, double lo,
                         double hi) const {
    VIGIL_ASSIGN_OR_RETURN(const std::string text, Text(node, field));
    Result<double> s = ParseDuration(text);
    if (!s.ok()) return Error(node, field, s.status().message());
    if (*s < lo || *s > hi) {
      return Error(node, field,
                   fmt::format("{} is out of range ({} to {})", Quote(text), FormatDuration(lo),
                               FormatDuration(hi)));
    }
    return *s;
  }

  Result<double> Number(const YAML::Node& node, std::string_view field, double lo,
                        double hi) const {
    VIGIL_ASSIGN_OR_RETURN(const std::string text, Text(node, field));
    double v = 0;
    if (!YAML::convert<double>::decode(node, v) || !std::isfinite(v)) {
      return Error(node, field, fmt::format("expected a number, got {}", Quote(text)));
    }
    if (v < lo || v > hi) {
      return Error(node, field, fmt::format("{} is out of range ({} to {})", text, lo, hi));
    }
    return v;
  }

  Result<int> Whole(const YAML::Node& node, std::string_view field, int lo, int hi) const {
    VIGIL_ASSIGN_OR_RETURN(const double v, Number(node, field, lo, hi));
    if (v != std::floor(v)) {
      return Error(node, field, fmt::format("expected a whole number, got {}", node.Scalar()));
    }
    return static_cast<int>(v);
  }

 private:
  std::string source_;
};

Result<Policy> Parse(const YAML::Node& doc, const Reader& r) {
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
      const std::string field = Reader::Path("on", TriggerName(t));
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
  const Reader r(source);
  try {
    const YAML::Node doc = YAML::Load(std::string(text));
    return Parse(doc, r);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(fmt::format("{}:{}: not valid YAML: {}", source,
                                               e.mark.line < 0 ? 1 : e.mark.line + 1, e.msg));
  }
}

Result<Policy> ReadPolicy(const std::string& path) {
  VIGIL_ASSIGN_OR_RETURN(const std::string text, ReadFile(path));
  return ParsePolicy(text, path);
}

}  // namespace vigil::remediate
