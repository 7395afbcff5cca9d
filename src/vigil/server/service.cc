#include "vigil/server/service.h"

#include <fmt/format.h>
#include <openssl/evp.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <utility>

#include "vigil/core/json.h"
#include "vigil/core/parallel.h"
#include "vigil/core/text.h"
#include "vigil/detect/detector.h"
#include "vigil/learned/criteria.h"
#include "vigil/learned/health.h"
#include "vigil/learned/judge.h"
#include "vigil/learned/learn.h"
#include "vigil/results/summary.h"
#include "vigil/server/incidents.h"
#include "vigil/server/upload.h"

namespace vigil::server {

namespace {
constexpr size_t kRankGrain = 256;  // nodes per thread at least when ranking a fleet
}  // namespace

FleetService::FleetService(store::Store& store, Clock& clock, learned::LearnOptions learn)
    : store_(store), clock_(clock), learn_(learn) {}

FleetService::~FleetService() {
  if (remediator_) remediator_->Stop();
}

Status FleetService::EnableRemediation(remediate::Policy policy,
                                       std::unique_ptr<remediate::Backend> backend) {
  auto r = std::make_unique<remediate::Remediator>(std::move(policy), std::move(backend), audit_,
                                                   clock_, [this] { return fleet_.InFleet(); });
  VIGIL_RETURN_IF_ERROR(r->Restore());
  r->Start();
  remediator_ = std::move(r);
  return Status::Ok();
}

Status FleetService::Start() {
  VIGIL_ASSIGN_OR_RETURN(std::vector<store::NodeState> nodes, store_.Nodes({}));
  VIGIL_ASSIGN_OR_RETURN(const std::vector<store::NodeState> retired,
                         store_.Nodes({std::nullopt, "", true}));
  nodes.insert(nodes.end(), retired.begin(), retired.end());
  fleet_.Reset(nodes);
  VIGIL_ASSIGN_OR_RETURN(std::optional<store::CriteriaVersion> stored, store_.Criteria(0));
  if (!stored) return Status::Ok();
  Result<learned::LearnedCriteria> c =
      learned::CriteriaFromJson(stored->body, fmt::format("stored criteria {}", stored->version));
  if (!c.ok()) {
    // Criteria an older vigil learned (another schema), or a damaged row: the uploads they were
    // learned from are all here, so learn them again rather than refuse to start.
    spdlog::warn("{}; learning again from the stored uploads", c.status().message());
    Result<LearnReport> learned = Learn();
    if (!learned.ok()) {
      spdlog::warn(
          "cannot learn criteria: {}; uploads are judged by the fixed rules only until "
          "POST /api/v1/criteria/learn succeeds",
          learned.status().message());
    }
    return Status::Ok();
  }
  const auto active = std::make_shared<const ActiveCriteria>(stored->version, std::move(*c));
  {
    MutexLock lock(mu_);
    criteria_ = active;
  }
  VIGIL_ASSIGN_OR_RETURN(const std::vector<store::Upload> latest, store_.LatestUploads());
  Rank(*active, latest);
  return Status::Ok();
}

void FleetService::Rank(const ActiveCriteria& active, const std::vector<store::Upload>& latest) {
  std::vector<NearestLimit> nearest(latest.size());
  const size_t workers = WorkerCount(latest.size(), kRankGrain, 0);
  RunWorkers(workers, [&](size_t w) {
    const auto [begin, end] = ShareOf(latest.size(), w, workers);
    for (size_t i = begin; i < end; ++i) nearest[i] = active.limits.Nearest(latest[i].row);
  });
  for (size_t i = 0; i < latest.size(); ++i) {
    fleet_.Nearest(latest[i].node, latest[i].id, std::move(nearest[i]));
  }
}

namespace {

// The criteria a Judgement refers to, kept alive beside it.
struct Prepared {
  Prepared(learned::LearnedCriteria c, const std::vector<std::string>& metrics)
      : criteria(std::move(c)), judgement(metrics, criteria) {}
  const learned::LearnedCriteria criteria;
  const learned::Judgement judgement;
};

}  // namespace

std::shared_ptr<const learned::Judgement> ActiveCriteria::For(
    std::vector<std::string> benchmarks, const std::vector<std::string>& metrics) const {
  std::sort(benchmarks.begin(), benchmarks.end());
  Key key(std::move(benchmarks), metrics);
  MutexLock lock(mu_);
  auto it = prepared_.find(key);
  if (it != prepared_.end()) return it->second;
  if (prepared_.size() >= kMaxSets) prepared_.clear();
  auto made =
      std::make_shared<const Prepared>(learned::RestrictToBenchmarks(criteria, key.first), metrics);
  std::shared_ptr<const learned::Judgement> judgement(made, &made->judgement);
  prepared_.emplace(std::move(key), judgement);
  return judgement;
}

std::shared_ptr<const ActiveCriteria> FleetService::criteria() const {
  MutexLock lock(mu_);
  return criteria_;
}

namespace {

// What a finding found, in a few words: "gpu-gemm/fp16 31% below the fleet".
std::string FindingText(const learned::Finding& f) {
  const bool moved = std::isfinite(f.deviation) && f.deviation != 0;
  switch (f.test) {
    case learned::FindingTest::kFleet:
    case learned::FindingTest::kBalance:
      if (moved) {
        return fmt::format("{} {:.0f}% {} {}", f.metric, std::fabs(f.deviation) * 100,
                           f.deviation < 0 ? "below" : "above",
                           f.test == learned::FindingTest::kFleet ? "the fleet" : "its peers");
      }
      break;
    case learned::FindingTest::kReturnCode:
      return fmt::format("{} return code {:g}", f.metric, f.value);
    case learned::FindingTest::kMissing:
      return fmt::format("{} missing", f.metric);
    case learned::FindingTest::kHealth:
      return fmt::format("{} = {:g}", f.metric, f.value);
    default:
      break;
  }
  return fmt::format("{} {}", f.metric, learned::FindingTestName(f.test));
}

// The drain reason of a verdict: "vigil: <component> <finding>" from its first critical
// finding (its first finding when none is critical); "" without findings.
std::string DrainReasonOf(const std::vector<learned::Finding>& findings) {
  if (findings.empty()) return "";
  const auto critical = std::find_if(findings.begin(), findings.end(), [](const auto& f) {
    return f.severity == learned::Severity::kCritical;
  });
  const learned::Finding& f = critical != findings.end() ? *critical : findings.front();
  return remediate::DrainReason(ComponentName(f.component), FindingText(f));
}

// Judges one node (learned::JudgeNode) by the criteria of the benchmarks it ran and the rules
// that need no fleet; without criteria, or when none learned applies to its hardware class (a
// new class, until the next learn includes it), by the rules alone. The upload id is left 0.
store::VerdictUpdate Judged(const ActiveCriteria* active, const FleetRow& row,
                            const std::vector<std::string>& benchmarks,
                            std::string* reason = nullptr) {
  const FleetTable one = TableOfRows({row}, row.node);
  std::shared_ptr<const learned::Judgement> criteria;
  store::VerdictUpdate v;
  if (active != nullptr && learned::ClassFor(active->criteria, row.hardware) != nullptr) {
    criteria = active->For(benchmarks, one.metrics());
    v.criteria_version = active->version;
  }
  const learned::NodeJudgement judged = learned::JudgeNode(one, criteria.get());
  v.verdict = judged.verdict;
  Json findings = Json::array();
  for (const learned::Finding& f : judged.findings.findings) {
    findings.push_back(learned::FindingToJson(f));
    if (std::find(v.failing.begin(), v.failing.end(), f.component) == v.failing.end()) {
      v.failing.push_back(f.component);
    }
  }
  v.findings = DumpJson(findings);
  if (reason != nullptr) *reason = DrainReasonOf(judged.findings.findings);
  return v;
}

// SHA-256 of the node, the run's start and what came in (the document as sent, or the summary
// line as stored): the idempotency key of an upload, the same however often it is sent.
std::string UploadKey(std::string_view node, std::string_view start_time,
                      std::string_view content) {
  const std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int size = 0;
  const char separator = '\0';  // names cannot hold one, so "a" + "bc" differs from "ab" + "c"
  const bool ok = ctx != nullptr && EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) == 1 &&
                  EVP_DigestUpdate(ctx.get(), node.data(), node.size()) == 1 &&
                  EVP_DigestUpdate(ctx.get(), &separator, 1) == 1 &&
                  EVP_DigestUpdate(ctx.get(), start_time.data(), start_time.size()) == 1 &&
                  EVP_DigestUpdate(ctx.get(), &separator, 1) == 1 &&
                  EVP_DigestUpdate(ctx.get(), content.data(), content.size()) == 1 &&
                  EVP_DigestFinal_ex(ctx.get(), md.data(), &size) == 1;
  // Only an allocation can fail; without a key the upload is stored as before keys existed.
  return ok ? std::string(reinterpret_cast<const char*>(md.data()), size) : std::string();
}

// The latest uploads judged again by `active`, verdict i for latest[i].
std::vector<store::VerdictUpdate> JudgedAgain(const ActiveCriteria& active,
                                              const std::vector<store::Upload>& latest) {
  constexpr size_t kGrain = 256;  // nodes per thread at least: judging one takes ~0.1 ms
  std::vector<store::VerdictUpdate> out(latest.size());
  const size_t workers = WorkerCount(latest.size(), kGrain, 0);
  RunWorkers(workers, [&](size_t w) {
    const auto [begin, end] = ShareOf(latest.size(), w, workers);
    for (size_t i = begin; i < end; ++i) {
      out[i] = Judged(&active, latest[i].row, BenchmarksOfRow(latest[i].row));
      out[i].upload = latest[i].id;
    }
  });
  return out;
}

}  // namespace

Result<std::vector<store::Upload>> FleetService::Ingest(std::string_view body,
                                                        std::string_view source) {
  Result<std::vector<ParsedUpload>> parsed = ParseUpload(body, source);
  if (!parsed.ok()) {
    counters_.rejected.fetch_add(1, std::memory_order_relaxed);
    return parsed.status();
  }
  const std::shared_ptr<const ActiveCriteria> active = criteria();
  const double now = clock_.WallSeconds();
  std::vector<store::Upload> uploads;
  uploads.reserve(parsed->size());
  std::vector<std::string> reasons;  // the drain reason of each upload, for remediation
  std::vector<bool> validations;     // whether each came from a validation suite
  for (ParsedUpload& p : *parsed) {
    store::Upload u;
    u.node = p.row.node;
    u.hardware = p.row.hardware;
    u.received = now;
    u.start_time = p.start_time;
    store::VerdictUpdate v = Judged(active.get(), p.row, p.benchmarks, &reasons.emplace_back());
    validations.push_back(p.suite != kHealthSuite);
    u.verdict = std::move(v.verdict);
    u.criteria_version = v.criteria_version;
    u.failing = std::move(v.failing);
    u.findings = std::move(v.findings);
    u.document = std::move(p.document);
    if (u.document.empty()) {
      // A summary line's key is its line as written again, without its '\n' (as stored before
      // rows were typed, so that a retry across an upgrade is still known).
      std::string line = FormatFleetRow(p.row);
      line.pop_back();
      u.key = UploadKey(u.node, u.start_time, line);
    } else {
      u.key = UploadKey(u.node, u.start_time, u.document);
    }
    u.row = std::move(p.row);
    uploads.push_back(std::move(u));
  }
  VIGIL_RETURN_IF_ERROR(store_.PutUploads(uploads));
  Changed();
  for (const store::Upload& u : uploads) {
    if (u.repeated) continue;
    fleet_.Uploaded(u);
    if (active) fleet_.Nearest(u.node, u.id, active->limits.Nearest(u.row));
  }
  const auto repeated = std::count_if(uploads.begin(), uploads.end(),
                                      [](const store::Upload& u) { return u.repeated; });
  counters_.uploads.fetch_add(static_cast<int64_t>(uploads.size()) - repeated,
                              std::memory_order_relaxed);
  counters_.repeated.fetch_add(repeated, std::memory_order_relaxed);
  counters_.upload_bytes.fetch_add(static_cast<int64_t>(body.size()), std::memory_order_relaxed);
  if (remediator_) {
    for (size_t i = 0; i < uploads.size(); ++i) {
      if (!uploads[i].repeated) Remediate(uploads[i], reasons[i], validations[i]);
    }
  }
  return uploads;
}

void FleetService::Remediate(const store::Upload& upload, const std::string& reason,
                             bool validation) {
  const remediate::Policy& policy = remediator_->policy();
  remediate::UploadFacts facts{upload.node, upload.verdict, validation, reason, {upload.verdict}};
  if (upload.verdict == Verdict::kDefective && policy.ActionFor(remediate::Trigger::kLemon)) {
    // The node's latest uploads, this one among them (stored above).
    Result<std::vector<store::Upload>> history =
        store_.History(upload.node, static_cast<size_t>(policy.lemon_uploads), false);
    if (history.ok()) {
      facts.recent.clear();
      for (const store::Upload& u : *history) facts.recent.push_back(u.verdict);
    } else {
      spdlog::warn("remediation: cannot read {}'s history for the lemon rule: {}", upload.node,
                   history.status().message());
    }
  }
  if (const std::optional<remediate::Event> e = remediate::UploadEvent(policy, facts)) {
    remediator_->Decide(*e);
  }
}

Result<LearnReport> FleetService::Learn() {
  MutexLock learning(learn_mu_);
  VIGIL_ASSIGN_OR_RETURN(std::vector<store::Upload> learned_from, store_.LatestUploads());
  if (learned_from.empty()) {
    return Status::InvalidArgument("no results stored yet: nothing to learn from");
  }
  std::vector<FleetRow> rows;
  rows.reserve(learned_from.size());
  for (store::Upload& u : learned_from) rows.push_back(std::move(u.row));
  const FleetTable table = TableOfRows(rows, "stored results");
  rows = {};  // the table holds the values now
  LearnReport report;
  VIGIL_ASSIGN_OR_RETURN(learned::LearnedCriteria learned,
                         learned::Learn(table, learn_, &report.left_out));
  int64_t left_out_nodes = 0;
  for (const learned::LeftOutClass& c : report.left_out) {
    left_out_nodes += static_cast<int64_t>(c.nodes.size());
  }
  store::CriteriaVersion& v = report.criteria;
  v.created = clock_.WallSeconds();
  v.nodes = static_cast<int64_t>(table.node_count()) - left_out_nodes;
  v.body = DumpJson(learned::CriteriaToJson(learned));
  VIGIL_ASSIGN_OR_RETURN(v.version, store_.PutCriteria(v));
  const auto active = std::make_shared<const ActiveCriteria>(v.version, std::move(learned));
  {
    MutexLock lock(mu_);
    criteria_ = active;
  }
  // Uploads from now on are judged by the new criteria as they come; every node's latest from
  // before is read again (some came while learning) and judged here. One that arrives between
  // that read and PutVerdicts is its node's latest, and PutVerdicts leaves that node's state.
  const auto again = [&]() -> Status {
    VIGIL_ASSIGN_OR_RETURN(const std::vector<store::Upload> latest, store_.LatestUploads());
    const std::vector<store::VerdictUpdate> verdicts = JudgedAgain(*active, latest);
    VIGIL_RETURN_IF_ERROR(store_.PutVerdicts(verdicts));
    Changed();
    report.rejudged = static_cast<int64_t>(verdicts.size());
    for (size_t i = 0; i < verdicts.size(); ++i) {
      report.changed += verdicts[i].verdict != latest[i].verdict;
      fleet_.Rejudged(latest[i].node, verdicts[i]);
    }
    Rank(*active, latest);
    return Status::Ok();
  }();
  if (!again.ok()) {
    return again.WithContext(fmt::format(
        "criteria version {} are stored and in force, but the nodes were not judged again",
        v.version));
  }
  // Last: what the criteria find is the answer's, not what uploads wait for.
  report.reach = learned::ReachOf(active->criteria);
  return report;
}

Status FleetService::Retire(std::string_view node) {
  const double now = clock_.WallSeconds();
  VIGIL_RETURN_IF_ERROR(store_.RetireNode(node, now));
  Changed();
  fleet_.Retired(node, now);
  return Status::Ok();
}

Status FleetService::Rename(std::string_view from, std::string_view to) {
  VIGIL_RETURN_IF_ERROR(store_.RenameNode(from, to));
  Changed();
  fleet_.Renamed(from, to);
  return Status::Ok();
}

bool IsCriticalAlert(const detect::Alert& alert) {
  return alert.kind == detect::AlertKind::kRule && alert.machine != "*" && !alert.machine.empty();
}

Result<std::vector<store::StoredAlert>> FleetService::IngestAlerts(std::string_view body,
                                                                   std::string_view source) {
  VIGIL_ASSIGN_OR_RETURN(const std::vector<detect::Alert> parsed,
                         detect::ParseAlerts(body, source));
  const double now = clock_.WallSeconds();
  std::vector<store::StoredAlert> alerts;
  for (size_t i = 0; i < parsed.size(); ++i) {
    const detect::Alert& a = parsed[i];
    const Status name = CheckNodeName(a.machine);
    if (!name.ok()) return name.WithContext(fmt::format("{}: alert {}: machine", source, i + 1));
    alerts.push_back(store::StoredAlert{0, now, a.machine,
                                        std::string(detect::AlertKindName(a.kind)), a.detected,
                                        DumpJson(detect::AlertToJson(a))});
  }
  VIGIL_RETURN_IF_ERROR(store_.PutAlerts(alerts));
  Changed();
  counters_.alerts.fetch_add(static_cast<int64_t>(alerts.size()), std::memory_order_relaxed);
  if (remediator_) {
    for (const detect::Alert& a : parsed) {
      if (!IsCriticalAlert(a)) continue;
      remediator_->Decide(remediate::Event{
          remediate::Trigger::kCriticalAlert, a.machine,
          remediate::DrainReason(a.component.empty() ? "node" : a.component, a.rule)});
    }
  }
  return alerts;
}

Result<std::vector<store::StoredIncident>> FleetService::IngestIncidents(std::string_view body,
                                                                         std::string_view source) {
  VIGIL_ASSIGN_OR_RETURN(std::vector<ParsedIncident> parsed, ParseIncidents(body, source));
  const double now = clock_.WallSeconds();
  std::vector<store::StoredIncident> incidents;
  for (ParsedIncident& p : parsed) {
    if (p.incident.time > now + kIncidentSkewS) {
      return Status::InvalidArgument(fmt::format("{}: time: {} is after the server's clock ({})",
                                                 p.where, FormatUtc(p.incident.time),
                                                 FormatUtc(now)));
    }
    const Result<store::NodeState> node = store_.Node(p.incident.node);
    if (!node.ok()) {
      return node.status().WithContext(fmt::format("{}: node", p.where));
    }
    p.incident.received = now;
    incidents.push_back(std::move(p.incident));
  }
  VIGIL_RETURN_IF_ERROR(store_.PutIncidents(incidents));
  if (std::any_of(incidents.begin(), incidents.end(),
                  [](const store::StoredIncident& i) { return !i.repeated; })) {
    Changed();
  }
  return incidents;
}

}  // namespace vigil::server
