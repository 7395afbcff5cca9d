#include "vigil/server/service.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "vigil/core/json.h"
#include "vigil/core/text.h"
#include "vigil/detect/detector.h"
#include "vigil/results/summary.h"
#include "vigil/server/upload.h"
#include "vigil/validate/health.h"

namespace vigil::server {

FleetService::FleetService(store::Store& store, Clock& clock, validate::LearnOptions learn)
    : store_(store), clock_(clock), learn_(learn) {}

Status FleetService::Start() {
  VIGIL_ASSIGN_OR_RETURN(std::optional<store::CriteriaVersion> stored, store_.Criteria(0));
  if (!stored) return Status::Ok();
  VIGIL_ASSIGN_OR_RETURN(
      validate::LearnedCriteria c,
      validate::CriteriaFromJson(stored->body, fmt::format("stored criteria {}", stored->version)));
  std::lock_guard lock(mu_);
  criteria_ = std::make_shared<const ActiveCriteria>(stored->version, std::move(c));
  return Status::Ok();
}

std::shared_ptr<const validate::LearnedCriteria> ActiveCriteria::For(
    std::vector<std::string> benchmarks) const {
  std::sort(benchmarks.begin(), benchmarks.end());
  std::lock_guard lock(mu_);
  auto it = restricted_.find(benchmarks);
  if (it != restricted_.end()) return it->second;
  if (restricted_.size() >= kMaxSets) restricted_.clear();
  auto made = std::make_shared<const validate::LearnedCriteria>(
      validate::RestrictToBenchmarks(criteria, benchmarks));
  restricted_.emplace(std::move(benchmarks), made);
  return made;
}

std::shared_ptr<const ActiveCriteria> FleetService::criteria() const {
  std::lock_guard lock(mu_);
  return criteria_;
}

namespace {

// Judges one node by the criteria of the benchmarks it ran and the rules that need no fleet
// (validate/health.h). Without criteria, or when none learned applies to its hardware class (a new
// class, until the next learn includes it), the rules alone judge it: defective when they find a
// fault (a GPU the driver lost makes a class of its own), otherwise unjudged.
void JudgeUpload(const ActiveCriteria* active, const ParsedUpload& p, store::Upload& u) {
  const FleetTable one = TableOfRows({p.row}, u.node);
  validate::NodeFindings nf;
  if (active != nullptr && validate::ClassFor(active->criteria, p.row.hardware) != nullptr) {
    nf = validate::Judge(one, *active->For(p.benchmarks), 1)[0];
    u.criteria_version = active->version;
  } else {
    nf = validate::JudgeHealth(one);
    if (!nf.defective) {
      u.verdict = "unjudged";
      u.findings = "[]";
      return;
    }
  }
  u.verdict = nf.defective ? "defective" : "healthy";
  Json findings = Json::array();
  for (const validate::Finding& f : nf.findings) {
    findings.push_back(validate::FindingToJson(f));
    if (std::find(u.failing.begin(), u.failing.end(), f.component) == u.failing.end()) {
      u.failing.push_back(f.component);
    }
  }
  u.findings = DumpJson(findings);
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
  for (ParsedUpload& p : *parsed) {
    store::Upload u;
    u.node = p.row.node;
    u.hardware = p.row.hardware;
    u.received = now;
    u.start_time = p.start_time;
    JudgeUpload(active.get(), p, u);
    u.row = FormatFleetRow(p.row);
    u.row.pop_back();  // the line without its '\n'
    u.document = std::move(p.document);
    uploads.push_back(std::move(u));
  }
  VIGIL_RETURN_IF_ERROR(store_.PutUploads(uploads));
  counters_.uploads.fetch_add(static_cast<int64_t>(uploads.size()), std::memory_order_relaxed);
  counters_.upload_bytes.fetch_add(static_cast<int64_t>(body.size()), std::memory_order_relaxed);
  return uploads;
}

Result<store::CriteriaVersion> FleetService::Learn() {
  std::lock_guard learning(learn_mu_);
  VIGIL_ASSIGN_OR_RETURN(std::vector<std::string> rows, store_.LatestRows());
  if (rows.empty()) return Status::InvalidArgument("no results stored yet: nothing to learn from");
  std::string text;
  for (const std::string& r : rows) (text += r) += '\n';
  VIGIL_ASSIGN_OR_RETURN(FleetTable table, ParseFleetTable(text, "stored results"));
  VIGIL_ASSIGN_OR_RETURN(validate::LearnedCriteria learned, validate::Learn(table, learn_));
  store::CriteriaVersion v;
  v.created = clock_.WallSeconds();
  v.nodes = static_cast<int64_t>(table.node_count());
  v.body = DumpJson(validate::CriteriaToJson(learned));
  VIGIL_ASSIGN_OR_RETURN(v.version, store_.PutCriteria(v));
  std::lock_guard lock(mu_);
  criteria_ = std::make_shared<const ActiveCriteria>(v.version, std::move(learned));
  return v;
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
    alerts.push_back(store::StoredAlert{0, now, a.machine, a.kind, a.detected,
                                        DumpJson(detect::AlertToJson(a))});
  }
  VIGIL_RETURN_IF_ERROR(store_.PutAlerts(alerts));
  counters_.alerts.fetch_add(static_cast<int64_t>(alerts.size()), std::memory_order_relaxed);
  return alerts;
}

}  // namespace vigil::server
