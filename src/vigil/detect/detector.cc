#include "vigil/detect/detector.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "vigil/core/bounds.h"
#include "vigil/core/lines.h"
#include "vigil/core/matrix.h"
#include "vigil/core/text.h"

namespace vigil::detect {

using telemetry::SignalRole;

namespace {

constexpr std::pair<AlertKind, std::string_view> kAlertKinds[] = {
    {AlertKind::kRule, "rule"},
    {AlertKind::kDivergence, "divergence"},
    {AlertKind::kMissing, "missing"},
    {AlertKind::kJob, "job"}};

}  // namespace

std::string_view AlertKindName(AlertKind kind) {
  for (const auto& [k, name] : kAlertKinds) {
    if (k == kind) return name;
  }
  return "rule";  // not reached: every enumerator is in kAlertKinds
}

Result<AlertKind> ParseAlertKind(std::string_view text) {
  for (const auto& [k, name] : kAlertKinds) {
    if (name == text) return k;
  }
  return Status::InvalidArgument(
      fmt::format("expected rule, divergence, missing or job, got {}", Quote(text)));
}

Json AlertToJson(const Alert& a) {
  Json evidence = Json::array();
  for (const Evidence& e : a.evidence) {
    Json item{{"signal", e.signal},           {"stat", e.stat},           {"value", e.value},
              {"peer_median", e.peer_median}, {"deviation", e.deviation}, {"effect", e.effect}};
    if (!e.reference.empty()) item["reference"] = e.reference;
    evidence.push_back(std::move(item));
  }
  return Json{{"machine", a.machine},
              {"kind", AlertKindName(a.kind)},
              {"rule", a.rule},
              {"component", a.component},
              {"onset", a.onset},
              {"detected", a.detected},
              {"evidence", std::move(evidence)}};
}

void AppendAlertJsonl(const Alert& a, std::string* out) {
  *out += DumpJson(AlertToJson(a));
  *out += '\n';
}

namespace {

// Every component of one exporter silent while the machine reports: an exporter restarting
// (seconds) or a dead driver (for good). Named once it has lasted this long.
constexpr double kExporterGrace = 120;
// A component silent again soon after a silence it was named for is named again once silent this
// many times the longest it came back from, and at most this long with its whole exporter
// (kExporterGrace alone: AlertSilentComponents).
constexpr double kFlappingSilence = 1.5;
constexpr double kMaxFlappingWait = 300;

// An error counter with a threshold rate is a fault once its errors exceed that rate by this
// many seconds' worth: a burst of them at once, or a steady excess. A healthy NVLink's few
// corrected errors now and then never do; a failing one's hundreds a second do at its first
// sample, at any cadence.
constexpr double kErrorBurstSeconds = 10;

// The evidence's `reference` of a deviation.
std::string ReferenceName(const Deviation& d) {
  return std::string(d.own_past ? kOwnPastReference : kPeersReference);
}

// The deviations an alert on one machine gives as evidence, the strongest first.
constexpr size_t kEvidenceDeviations = 5;

// XIDs after which the application on the GPU is terminated or the GPU is gone until it is
// reset (NVIDIA's XID catalogue): a double-bit ECC error, the GPU fallen off the bus, a contained
// and an uncontained ECC error. Their rank dies, and its machine's other signals move with it.
constexpr std::array<int, 4> kWorkEndingXids = {48, 79, 94, 95};

Status FieldError(std::string_view where, std::string_view field, std::string_view problem) {
  return Status::InvalidArgument(fmt::format("{}: {}: {}", where, field, problem));
}

Result<std::string> StringField(const Json& j, std::string_view where, const char* field,
                                bool required) {
  auto it = j.find(field);
  if (it == j.end()) {
    if (required) return FieldError(where, field, "missing");
    return std::string();
  }
  if (!it->is_string()) return FieldError(where, field, "expected a string");
  std::string s = it->get<std::string>();
  if (required && s.empty()) return FieldError(where, field, "empty");
  return s;
}

// A number, or NaN for null (how a non-finite figure is written).
Result<double> NumberField(const Json& j, std::string_view where, const char* field) {
  const Json& v = j.at(field);
  if (v.is_null()) return std::nan("");
  if (!v.is_number()) return FieldError(where, field, "expected a number");
  return v.get<double>();
}

}  // namespace

Result<Alert> AlertFromJson(const Json& j, std::string_view where) {
  if (!j.is_object()) return Status::InvalidArgument(fmt::format("{}: expected an object", where));
  Alert a;
  VIGIL_ASSIGN_OR_RETURN(a.machine, StringField(j, where, "machine", true));
  VIGIL_ASSIGN_OR_RETURN(const std::string kind, StringField(j, where, "kind", true));
  const Result<AlertKind> parsed_kind = ParseAlertKind(kind);
  if (!parsed_kind.ok()) return FieldError(where, "kind", parsed_kind.status().message());
  a.kind = *parsed_kind;
  VIGIL_ASSIGN_OR_RETURN(a.rule, StringField(j, where, "rule", false));
  VIGIL_ASSIGN_OR_RETURN(a.component, StringField(j, where, "component", false));
  if (!j.contains("detected")) return FieldError(where, "detected", "missing");
  VIGIL_ASSIGN_OR_RETURN(a.detected, NumberField(j, where, "detected"));
  if (!std::isfinite(a.detected)) return FieldError(where, "detected", "expected a number");
  if (!kUnixTimeBounds.Contains(a.detected)) {
    return FieldError(where, "detected", DescribeOutside(a.detected, kUnixTimeBounds));
  }
  a.onset = a.detected;
  if (j.contains("onset")) {
    VIGIL_ASSIGN_OR_RETURN(a.onset, NumberField(j, where, "onset"));
    if (!std::isnan(a.onset) && !kUnixTimeBounds.Contains(a.onset)) {
      return FieldError(where, "onset", DescribeOutside(a.onset, kUnixTimeBounds));
    }
  }
  if (!j.contains("evidence")) return a;
  const Json& ev = j.at("evidence");
  if (!ev.is_array()) return FieldError(where, "evidence", "expected an array");
  for (size_t i = 0; i < ev.size(); ++i) {
    const std::string at = fmt::format("{}: evidence[{}]", where, i);
    const Json& e = ev[i];
    if (!e.is_object()) return Status::InvalidArgument(at + ": expected an object");
    Evidence out;
    VIGIL_ASSIGN_OR_RETURN(out.signal, StringField(e, at, "signal", true));
    VIGIL_ASSIGN_OR_RETURN(out.stat, StringField(e, at, "stat", false));
    VIGIL_ASSIGN_OR_RETURN(out.reference, StringField(e, at, "reference", false));
    for (auto [field, value] : {std::pair{"value", &out.value},
                                {"peer_median", &out.peer_median},
                                {"deviation", &out.deviation},
                                {"effect", &out.effect}}) {
      if (!e.contains(field)) continue;
      VIGIL_ASSIGN_OR_RETURN(*value, NumberField(e, at, field));
      if (!std::isnan(*value) && !kMetricValueBounds.Contains(*value)) {
        return FieldError(at, field, DescribeOutside(*value, kMetricValueBounds));
      }
    }
    a.evidence.push_back(std::move(out));
  }
  return a;
}

Result<std::vector<Alert>> ParseAlerts(std::string_view text, std::string_view source) {
  std::vector<Alert> alerts;
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '[') {
    VIGIL_ASSIGN_OR_RETURN(const Json array, ParseJson(text, source));
    for (size_t i = 0; i < array.size(); ++i) {
      VIGIL_ASSIGN_OR_RETURN(Alert a,
                             AlertFromJson(array[i], fmt::format("{}: alert {}", source, i + 1)));
      alerts.push_back(std::move(a));
    }
  } else {
    LineReader lines(text);
    std::string_view line;
    while (lines.Next(line)) {
      if (Trim(line).empty()) continue;
      const int line_no = static_cast<int>(lines.line_no());
      VIGIL_ASSIGN_OR_RETURN(const Json j, ParseJson(line, source, line_no));
      VIGIL_ASSIGN_OR_RETURN(Alert a, AlertFromJson(j, fmt::format("{}:{}", source, line_no)));
      alerts.push_back(std::move(a));
    }
  }
  if (alerts.empty()) return Status::InvalidArgument(fmt::format("{}: no alert", source));
  return alerts;
}

Detector::Detector(const DetectorOptions& options, const telemetry::Normalizer& names)
    : o_(options),
      names_(names),
      builder_(options.step, options.lateness, [this](const telemetry::Frame& f) { OnFrame(f); }),
      model_(options.peer) {}

namespace {

// How many gaps of one cadence before a long gap make it a steady exporter's silence, whose
// interval the next gap of that cadence restores (Detector::Cadence).
constexpr uint8_t kSteadyGaps = 20;

}  // namespace

void Detector::Cadence::Follow(double gap) {
  before = interval;
  // A gap of more than Presence::kSilentIntervals of the interval is its interval (it rises at
  // once), unless the cadence had been kept for kSteadyGaps gaps before it: then the next gap
  // within kSilentIntervals of the old interval restores that (the long one was silence: a steady
  // exporter's restart, the machine down and back), and a longer one keeps it (the exporter now
  // reports less often). Long gaps that recur sooner (an exporter that misses most scrapes or
  // crash-loops; two scrapers' samples merged) are followed as they come.
  if (interval > 0 && gap > Presence::kSilentIntervals * interval) {
    before_long_gap = steady_gaps >= kSteadyGaps ? interval : 0;
    steady_gaps = 0;
  } else {
    if (before_long_gap > 0 && gap <= Presence::kSilentIntervals * before_long_gap) {
      interval = before_long_gap;
    }
    before_long_gap = 0;
    if (steady_gaps < kSteadyGaps) ++steady_gaps;
  }
  const auto g = static_cast<float>(std::min(gap, 600.0));
  interval = g > interval ? g : interval + 0.05f * (g - interval);
}

void Detector::MachineState::SawSeries(uint32_t signal, double time, double value) {
  if (signal >= series.size()) series.resize(signal + 1);
  Series& s = series[signal];
  if (time <= s.last_fresh) return;
  if (s.last_fresh >= 0) {
    s.cadence.Follow(time - s.last_fresh);
    s.varies = s.varies || static_cast<float>(value) != s.value;
    interval_stale = true;
  }
  s.last_fresh = time;
  s.value = static_cast<float>(value);
}

float Detector::MachineState::Interval(std::vector<float>& scratch) {
  if (!interval_stale) return interval;
  interval_stale = false;
  const bool any_varies =
      std::any_of(series.begin(), series.end(), [](const Series& s) { return s.varies; });
  scratch.clear();
  for (const Series& s : series) {
    const float own = s.cadence.interval;
    const bool gone = s.last_fresh + Presence::kSilentIntervals * own < presence.last_fresh;
    if (own > 0 && (s.varies || !any_varies) && !gone) scratch.push_back(own);
  }
  if (!scratch.empty()) {
    const auto middle = scratch.begin() + static_cast<std::ptrdiff_t>((scratch.size() - 1) / 2);
    std::nth_element(scratch.begin(), middle, scratch.end());
    interval = *middle;
  }
  return interval;
}

void Detector::Presence::Saw(double time, bool copy, double fed_ahead, double rearm) {
  if (first < 0) first = time;
  if (time > last) {
    if (last < 0 || time - last > fed_ahead) resumed = time;
    if (alerted || flapping) {
      const auto silence = static_cast<float>(time - last);
      longest_silence =
          back >= 0 && last - back < rearm ? std::max(longest_silence, silence) : silence;
      back = time;
      back_from = last;
    }
    last = time;
    alerted = false;
    flapping = false;
  }
  // A scrape's rows share its time, and a held one (a counter of errors at 0) may come first:
  // a fresh row at the same time still counts as the scrape.
  if (copy || time <= last_fresh) return;
  if (last_fresh >= 0) cadence.Follow(time - last_fresh);
  last_fresh = time;
}

Detector::RuleState& Detector::RuleOf(uint32_t machine, uint32_t component) {
  return rules_[static_cast<size_t>(machine) * components_ + component];
}

void Detector::Grow(uint32_t machine, uint32_t component) {
  // Grow in jumps: a stream of new machines costs amortised constant time. Slots of machines not
  // seen yet have presence.first < 0.
  size_t machines = machines_.size();
  if (machine >= machines) machines = std::max<size_t>(machine + 1, machines + machines / 2);
  const uint32_t components = std::max(components_, component + 1);
  const size_t rows = machines_.size();
  ResizeRowMajor(rules_, rows, components_, machines, components);
  ResizeRowMajor(component_seen_, rows, components_, machines, components);
  machines_.resize(machines);
  group_of_.resize(machines, 0);
  components_ = components;
}

void Detector::Feed(const telemetry::Point& p) {
  // The Normalizer drops these; a caller that feeds points of its own may not.
  if (!std::isfinite(p.value) || !std::isfinite(p.time)) return;
  if (p.machine >= machines_.size() || p.component >= components_) Grow(p.machine, p.component);
  group_of_[p.machine] = p.group;
  // Presence counts distinct times: the components of one scrape share one.
  const bool copy = p.held && !p.rescraped;  // no new scrape (a grid's copy)
  // Points come up to a step and the lateness ahead of the frames judged.
  const double fed_ahead = o_.step + o_.lateness;
  MachineState& machine = machines_[p.machine];
  machine.presence.Saw(p.time, copy, fed_ahead, o_.rearm);
  if (!copy) machine.SawSeries(p.signal, p.time, p.value);
  if (!names_.components().Name(p.component).empty()) {
    Presence& seen = component_seen_[static_cast<size_t>(p.machine) * components_ + p.component];
    if (seen.first < 0) seen.signal = p.signal;
    const bool silent = seen.alerted;
    seen.Saw(p.time, copy, fed_ahead, o_.rearm);
    if (silent && !seen.alerted) {  // back from a silence it was named for
      RuleState& r = RuleOf(p.machine, p.component);
      if (r.stopped >= 0) r.stopped_ended = p.time;
    }
    seen.Reported(p.signal);
  }
  if (names_.signals()[p.signal].role != SignalRole::kPeer) Rule(p);
  builder_.Add(p);
}

void Detector::Rule(const telemetry::Point& p) {
  const telemetry::SignalInfo& signal = names_.signals()[p.signal];
  RuleState& r = RuleOf(p.machine, p.component);
  auto alert = [&](std::string rule, double onset, double value) {
    Alert a;
    a.machine = NameOfMachine(p.machine);
    a.kind = AlertKind::kRule;
    a.rule = std::move(rule);
    a.component = names_.components().Name(p.component);
    a.onset = onset;
    a.detected = p.time;
    a.evidence.push_back({signal.name, a.component, value, 0, 0, 0});
    Raise(std::move(a));
  };
  switch (signal.role) {
    case SignalRole::kPeer:
      break;
    case SignalRole::kXid: {
      const double code = std::round(p.value);
      // XID codes are small; a value beyond int (a broken exporter, a scale) matches none, and
      // converting it to int would be undefined.
      constexpr double kMaxXid = 1 << 20;
      const bool fatal = code >= 0 && code <= kMaxXid &&
                         std::find(o_.fatal_xids.begin(), o_.fatal_xids.end(),
                                   static_cast<int>(code)) != o_.fatal_xids.end();
      if (code != r.xid && fatal) {
        alert(fmt::format("xid {}", code), p.time, code);
        r.xid_episode.Named(p.time, o_.rearm);
        if (std::find(kWorkEndingXids.begin(), kWorkEndingXids.end(), static_cast<int>(code)) !=
            kWorkEndingXids.end()) {
          WorkStopped(p.machine, p.component, p.time);
        }
      }
      if (r.xid_fatal && !fatal) r.xid_episode.ended = p.time;
      r.xid = code;
      r.xid_fatal = fatal;
      break;
    }
    case SignalRole::kErrorCounter: {
      // The errors themselves, not the rate of one sample: the same count over 1 s or 60 s is
      // the same news at any cadence. Those beyond the threshold rate over the sample's span fill
      // a bucket; more than kErrorBurstSeconds of that rate in it is a fault. A grid's copy
      // brings none.
      if (p.held) break;
      auto bucket =
          std::find_if(r.errors.begin(), r.errors.end(),
                       [&](const RuleState::ErrorBucket& b) { return b.signal == p.signal; });
      if (bucket == r.errors.end()) {
        r.errors.push_back({.signal = p.signal, .excess = 0, .last_error = -1});
        bucket = std::prev(r.errors.end());
      }
      const double errors = p.value * p.span;
      const double limit = signal.threshold * kErrorBurstSeconds;
      bucket->excess = std::max(0.0, bucket->excess + errors - signal.threshold * p.span);
      // One alert while errors keep coming; again after they stopped for the re-arm time. The
      // bucket keeps no more than the limit: once the errors stop, a healthy error now and then
      // is no fault again.
      if (errors > 0 && bucket->excess > limit) {
        if (bucket->last_error < 0 || p.time - bucket->last_error > o_.rearm) {
          alert(signal.name, p.time, p.value);
        }
        bucket->last_error = p.time;
        bucket->excess = limit;
      }
      break;
    }
    case SignalRole::kLinkWidth:
    case SignalRole::kLinkWidthMax:
      (signal.role == SignalRole::kLinkWidth ? r.width : r.width_max) = p.value;
      if (r.width > 0 && r.width_max > 0 && r.width < r.width_max) {
        if (!r.width_alerted) {
          alert("pcie_width", p.time, r.width);
          r.width_episode.Named(p.time, o_.rearm);
        }
        r.width_alerted = true;
      } else if (r.width >= r.width_max) {
        if (r.width_alerted) r.width_episode.ended = p.time;
        r.width_alerted = false;
      }
      break;
    case SignalRole::kLinkGen:
    case SignalRole::kLinkGenMax:
      (signal.role == SignalRole::kLinkGen ? r.gen : r.gen_max) = p.value;
      if (r.gen > 0 && r.gen_max > 0 && r.gen < r.gen_max) {
        if (r.gen_low_since < 0) r.gen_low_since = p.time;
        if (p.time - r.gen_low_since >= o_.gen_hold && !r.gen_alerted) {
          alert("pcie_gen", r.gen_low_since, r.gen);
          r.gen_alerted = true;
        }
      } else {
        r.gen_low_since = -1;
        r.gen_alerted = false;
      }
      break;
    case SignalRole::kLinkUp:
      if (r.link_up >= 0.5 && p.value < 0.5) {
        alert("link_down", p.time, p.value);
        r.link_alerted = true;
        r.link_episode.Named(p.time, o_.rearm);
      } else if (p.value >= 0.5) {
        if (r.link_alerted) r.link_episode.ended = p.time;
        r.link_alerted = false;
      }
      r.link_up = p.value;
      break;
  }
}

void Detector::Raise(Alert alert) { alerts_.push_back(std::move(alert)); }

// A fault of the machine's own that takes hardware out of the job, under way now, and since
// when: a fatal XID still shown, a NIC link down or a PCIe link narrowed since it was named, the
// machine or a component silent since it was named (PeerModel::Update's own_fault_since). A
// divergence or a stall that named it is none (a rank may hang the job twice), nor is a slower
// PCIe generation (idle GPUs lower it) or a burst of corrected errors.
void Detector::FollowOwnFaults() {
  const auto machines = static_cast<uint32_t>(machines_.size());
  own_fault_since_.assign(machines, -1);
  const auto earliest = [](double& since, bool fault, double at) {
    if (fault && (since < 0 || at < since)) since = at;
  };
  for (uint32_t m = 0; m < machines; ++m) {
    const Presence& machine = machines_[m].presence;
    double since = -1;
    earliest(since, machine.alerted, machine.last);
    for (uint32_t c = 0; c < components_; ++c) {
      const size_t i = static_cast<size_t>(m) * components_ + c;
      const RuleState& r = rules_[i];
      earliest(since, component_seen_[i].alerted, component_seen_[i].last);
      earliest(since, r.xid_fatal, r.xid_episode.last);
      earliest(since, r.width_alerted, r.width_episode.last);
      earliest(since, r.link_alerted, r.link_episode.last);
    }
    own_fault_since_[m] = since;
  }
}

void Detector::OnFrame(const telemetry::Frame& frame) {
  ++frames_;
  const double end = frame.time + o_.step;
  // Read only where a stall may be reported: not a pass over every component each frame.
  if (model_.JudgingStall()) {
    FollowOwnFaults();
  } else {
    own_fault_since_.clear();
  }
  model_.Update(frame, group_of_, names_.signals(), own_fault_since_);
  AlertDivergence(end);
  AlertShared(end);
  AlertStalls(end);
  AlertSilence(end);
}

// One alert per episode of a machine; it alerts again once it has had no deviation under way
// for the re-arm time. Deviations that a rule's fault explains (Explains) are no part of it: a
// machine whose every deviation with enough evidence is explained is not named, and one named for
// another cause lists only the others.
void Detector::AlertDivergence(double end) {
  const auto machines = static_cast<uint32_t>(machines_.size());
  for (uint32_t m = 0; m < machines; ++m) {
    MachineState& machine = machines_[m];
    if (!machine.divergent) continue;
    if (!model_.Quiet(m)) {
      machine.quiet_since = -1;
    } else if (machine.quiet_since < 0) {
      machine.quiet_since = end;
    } else if (end - machine.quiet_since >= o_.rearm) {
      machine.divergent = false;
    }
  }
  for (uint32_t m : model_.triggered()) {
    MachineState& machine = machines_[m];
    if (machine.divergent) continue;
    std::vector<Deviation> deviations = model_.DeviationsOf(m, std::numeric_limits<size_t>::max());
    std::erase_if(deviations, [&](const Deviation& d) { return Explains(m, d); });
    // Enough evidence: what made it a divergence (each signal's own persistence, as PeerModel
    // triggers).
    const bool enough = std::any_of(deviations.begin(), deviations.end(), [&](const Deviation& d) {
      return d.evidence >= model_.PersistenceOf(names_.signals()[SignalOfFeature(d.feature)]);
    });
    if (!enough) continue;
    if (deviations.size() > kEvidenceDeviations) deviations.resize(kEvidenceDeviations);
    machine.divergent = true;
    machine.quiet_since = -1;
    Alert a;
    a.machine = NameOfMachine(m);
    a.kind = AlertKind::kDivergence;
    a.rule = "peers";
    a.onset = end;
    a.detected = end;
    for (const Deviation& d : deviations) {
      // The onset is that of the deviations with half the evidence the persistence asks or more.
      if (d.evidence >= o_.peer.persistence_s / 2) a.onset = std::min(a.onset, d.start);
      a.evidence.push_back(EvidenceOf(d));
    }
    Raise(std::move(a));
  }
}

void Detector::RuleState::Episode::Named(double time, double rearm) {
  if (first >= 0 && ended >= 0 && time - ended <= rearm) {  // flapping: the same episode
    last = time;
  } else {
    first = last = time;
  }
  ended = -1;
}

bool Detector::ReportsXid(const Presence& p) const {
  const auto& signals = names_.signals();
  for (uint32_t s = 0; s < signals.size(); ++s) {
    if (signals[s].role == SignalRole::kXid && p.Reports(s)) return true;
  }
  return false;
}

void Detector::WorkStopped(uint32_t m, uint32_t c, double time) {
  RuleState& r = RuleOf(m, c);
  r.stopped = time;
  r.stopped_ended = -1;
}

bool Detector::Explains(uint32_t m, const Deviation& d) const {
  const uint32_t s = SignalOfFeature(d.feature);
  const double persistence = o_.peer.persistence_s;
  // A deviation begins no earlier than its feature is judged again after a warm-up (a restart's):
  // one of a fault named before that and not ended since begins within the persistence of it.
  // Where the fault is a state its series shows while it lasts (a link down, a PCIe link
  // narrowed), also after a job-wide move's settling (a checkpoint's, an evaluation's end), which
  // broke every run. Not an XID: DCGM's XID field shows the last XID until another, and a GPU
  // reset and back in the job that slows down as a checkpoint ends is another fault.
  const double judged_from = model_.JudgedFrom(group_of_[m], d.feature);
  const double judged_again = model_.JudgedAgain(group_of_[m], d.feature);
  const auto within = [&](const RuleState::Episode& e, double judged) {
    return e.first >= 0 && d.start >= e.first - persistence &&
           d.start <= std::max(e.last, judged) + persistence && (e.ended < 0 || d.start <= e.ended);
  };
  for (uint32_t c = 0; c < components_; ++c) {
    const size_t i = static_cast<size_t>(m) * components_ + c;
    const RuleState& r = rules_[i];
    // The rank on a GPU whose work ended dies or hangs, and every signal of its machine moves
    // with it (its step time, its host's CPU, its other GPUs) as the fault begins.
    if (r.stopped >= 0 && std::fabs(d.start - r.stopped) <= persistence &&
        (r.stopped_ended < 0 || d.start <= r.stopped_ended)) {
      return true;
    }
    if (!component_seen_[i].Reports(s)) continue;
    if (within(r.xid_episode, judged_from) || within(r.width_episode, judged_again) ||
        within(r.link_episode, judged_again)) {
      return true;
    }
  }
  return false;
}

Evidence Detector::EvidenceOf(const Deviation& d) const {
  return {names_.signals()[SignalOfFeature(d.feature)].name,
          std::string(StatName(StatOfFeature(d.feature))),
          d.value,
          d.expected,
          d.z,
          d.effect,
          ReferenceName(d)};
}

// Machines that deviate together: one alert for the group ("*"), each machine in evidence, and
// none again for the group until `rearm` has passed (its other features move with it).
void Detector::AlertShared(double end) {
  for (const PeerModel::Shared& shared : model_.shared()) {
    if (shared.group >= shared_alerted_.size()) shared_alerted_.resize(shared.group + 1, -1);
    double& last = shared_alerted_[shared.group];
    if (last >= 0 && end - last < o_.rearm) continue;
    last = end;
    Alert a;
    a.machine = "*";
    a.kind = AlertKind::kJob;
    a.rule = "shared";
    a.component = names_.groups().Name(shared.group);
    a.onset = end;
    a.detected = end;
    const std::string& signal = names_.signals()[SignalOfFeature(shared.feature)].name;
    const std::string stat(StatName(StatOfFeature(shared.feature)));
    for (const auto& [machine, d] : shared.members) {
      a.onset = std::min(a.onset, d.start);
      a.evidence.push_back({signal + " " + stat, NameOfMachine(machine), d.value, d.expected, d.z,
                            d.effect, ReferenceName(d)});
    }
    Raise(std::move(a));
  }
}

// A job-wide stall: one alert for the job, naming the one machine that differs from its stalled
// peers (a hung rank among peers waiting for it) where there is one, else "*".
void Detector::AlertStalls(double end) {
  for (const PeerModel::Stall& stall : model_.stalls()) {
    Alert a;
    a.machine = stall.machine ? NameOfMachine(*stall.machine) : "*";
    a.kind = AlertKind::kJob;
    a.rule = "stall";
    a.component = names_.groups().Name(stall.group);
    a.onset = stall.start;
    a.detected = end;
    for (size_t i = 0; i < std::min(stall.deviations.size(), kEvidenceDeviations); ++i) {
      a.evidence.push_back(EvidenceOf(stall.deviations[i]));
    }
    Raise(std::move(a));
  }
}

// Silence: machines, and components of machines that still report, each against its own
// interval between samples. A machine is named silent only while most of its group's peers (and
// at least min_peers) report.
void Detector::AlertSilence(double end) {
  const auto machines = static_cast<uint32_t>(machines_.size());
  reporting_.assign(reporting_.size(), 0);
  known_.assign(known_.size(), 0);
  for (uint32_t m = 0; m < machines; ++m) {
    const Presence& presence = machines_[m].presence;
    if (presence.first < 0) continue;
    const uint32_t group = group_of_[m];
    if (group >= known_.size()) {
      known_.resize(group + 1, 0);
      reporting_.resize(group + 1, 0);
    }
    ++known_[group];
    const float interval = machines_[m].Interval(intervals_);
    if (presence.last >= end - presence.SilentAfter(o_.missing_grace, interval)) {
      ++reporting_[group];
    }
  }
  for (uint32_t m = 0; m < machines; ++m) {
    Presence& presence = machines_[m].presence;
    if (presence.first < 0) continue;
    const uint32_t group = group_of_[m];
    const bool peers_report = reporting_[group] >= static_cast<uint32_t>(o_.peer.min_peers) &&
                              2 * reporting_[group] >= known_[group];
    const float interval = machines_[m].Interval(intervals_);
    if (presence.last < end - presence.SilentAfter(o_.missing_grace, interval)) {
      if (peers_report && !presence.alerted) {
        presence.alerted = true;
        Alert a;
        a.machine = NameOfMachine(m);
        a.kind = AlertKind::kMissing;
        a.rule = "machine";
        a.onset = presence.last;
        a.detected = end;
        Raise(std::move(a));
      }
      continue;
    }
    AlertSilentComponents(m, end);
  }
}

double Detector::AfterReboot(uint32_t m) const {
  // Silent as a whole for longer than an exporter's restart and than two of its slowest series'
  // intervals (a missed scrape of each is no reboot; a machine named missing because only its
  // faster exporter stopped comes back at its slower one's next row).
  const MachineState& machine = machines_[m];
  const Presence& p = machine.presence;
  if (p.back < 0) return -1;
  float slowest = 0;  // before the silence: a series back from it has its gap as its interval
  for (const Series& s : machine.series) {
    slowest = std::max(slowest, std::min(s.cadence.interval, s.cadence.before));
  }
  return p.back - p.back_from > std::max<double>(kExporterGrace, 2.0 * slowest) ? p.back : -1;
}

// Components silent while their machine reports. A GPU off the bus while its siblings (the
// components of the same exporter) report is named after the usual grace; when every sibling
// stops too, that is an exporter restarting (seconds) or a dead driver (for good), named once
// silent for kExporterGrace. One alert per machine and moment, naming the first, the others in
// evidence.
void Detector::AlertSilentComponents(uint32_t m, double end) {
  const Presence& machine = machines_[m].presence;
  Presence* seen = &component_seen_[static_cast<size_t>(m) * components_];
  // Judged from the machine's return where it came back from a reboot (AfterReboot): its
  // exporters come back one after another, the node exporter's rows before DCGM's.
  const double reboot = AfterReboot(m);
  // Silent since before the machine's return, and since no earlier than an exporter's grace
  // before the machine went down.
  const auto rebooted = [&](uint32_t c) {
    return reboot >= 0 && seen[c].last < reboot &&
           machine.back_from <= seen[c].last + kExporterGrace;
  };
  const auto silent = [&](uint32_t c, double grace) {
    return std::max(seen[c].last, rebooted(c) ? reboot : -1.0) < end - seen[c].SilentAfter(grace);
  };
  // A sibling reported since the component's last sample, in a later scrape (more than half the
  // component's interval after it: a collector may stamp each GPU's row of one scrape a moment
  // after the one before), by the time judged. Points are fed
  // ahead of the frames judged (a step and the builder's lateness), so a sibling that reports
  // every second has its latest sample after `end` at every judgement: it counts where it has
  // reported without a pause longer than that since before `end` (Presence::resumed). A sibling
  // whose reports resumed after `end` does not: its sample may be the first row of a scrape whose
  // other rows, this component's among them, are still to come (an exporter back from a
  // restart). Nor does the machine: after a silence of the whole machine (a reboot, the
  // collector down), the first row back is not its components' rows.
  const auto sibling_reports = [&](uint32_t c) {
    for (uint32_t d = 0; d < components_; ++d) {
      if (d != c && seen[d].signal == seen[c].signal &&
          seen[d].last > seen[c].last + seen[c].cadence.interval / 2 && seen[d].resumed <= end) {
        return true;
      }
    }
    return false;
  };
  Alert a;
  for (uint32_t c = 0; c < components_; ++c) {
    if (seen[c].first < 0 || seen[c].alerted || !silent(c, o_.missing_grace)) continue;
    // The machine reports: a sample of it later than the component's next was due (a machine
    // gone down sent its other exporters' last samples after the component's, within one of
    // the component's intervals).
    if (machine.last <= seen[c].last + seen[c].cadence.interval || machine.resumed > end) continue;
    // Alone (a sibling reports), or with its whole exporter (then after an exporter's grace).
    const bool alone = sibling_reports(c);
    if (!alone && !silent(c, std::max(o_.missing_grace, kExporterGrace))) continue;
    // Silent again the same way less than `rearm` after it came back from a silence it was named
    // for (an exporter that crash-loops, a GPU that drops out of its exporter's scrapes now and
    // then): the same flapping, named again only once silent half as long again as the longest
    // silence it came back from, and at most kMaxFlappingWait, or an exporter's grace alone (a
    // driver dead for good; a GPU lost). Not after a reboot, which begins anew.
    Presence& p = seen[c];
    if (p.back >= 0 && p.last - p.back < o_.rearm && p.named_alone == alone && !rebooted(c)) {
      p.flapping = true;
      const double most = alone ? kExporterGrace : kMaxFlappingWait;
      if (!silent(c, std::min(kFlappingSilence * p.longest_silence, most))) continue;
    }
    p.alerted = true;
    p.named_alone = alone;
    if (alone && ReportsXid(p)) WorkStopped(m, c, end);  // a GPU gone, not its exporter
    const std::string& name = names_.components().Name(c);
    if (a.component.empty()) {
      a.machine = NameOfMachine(m);
      a.kind = AlertKind::kMissing;
      a.rule = "component";
      a.component = name;
      a.onset = seen[c].last;
      a.detected = end;
    }
    a.onset = std::min(a.onset, seen[c].last);
    a.evidence.push_back({"component", name, seen[c].last, 0, 0, 0});
  }
  if (!a.component.empty()) Raise(std::move(a));
}

void Detector::AdvanceTo(double now) { builder_.AdvanceTo(now); }

void Detector::Flush() { builder_.Flush(); }

std::vector<Alert> Detector::TakeAlerts() { return std::exchange(alerts_, {}); }

}  // namespace vigil::detect
