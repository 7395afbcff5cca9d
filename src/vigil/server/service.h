// The fleet service behind `vigil serve`, apart from HTTP: it judges uploads with the current
// criteria and stores them, learns new criteria from every node's latest results, and keeps the
// counters that /metrics exports. Thread-safe: the HTTP server calls it from many threads.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "vigil/core/clock.h"
#include "vigil/core/mutex.h"
#include "vigil/core/status.h"
#include "vigil/detect/detector.h"
#include "vigil/learned/criteria.h"
#include "vigil/learned/judge.h"
#include "vigil/learned/learn.h"
#include "vigil/learned/reach.h"
#include "vigil/remediate/remediator.h"
#include "vigil/server/fleet_state.h"
#include "vigil/server/limits.h"
#include "vigil/store/store.h"

namespace vigil::server {

// The criteria uploads are judged by, and their version in the store.
class ActiveCriteria {
 public:
  ActiveCriteria(int64_t v, learned::LearnedCriteria c) : version(v), criteria(std::move(c)) {}

  const int64_t version;
  const learned::LearnedCriteria criteria;
  // `criteria` indexed for the dashboard's ranking and bands (limits.h).
  const LimitIndex limits{criteria};

  // Judging prepared for an upload that ran `benchmarks` (what one node ran) and carries `metrics`
  // (its keys, in its table's order): `criteria` restricted to those benchmarks
  // (RestrictToBenchmarks) and a learned::Judgement of the keys, made once per such pair and
  // shared by the uploads that match it. Thread-safe.
  std::shared_ptr<const learned::Judgement> For(std::vector<std::string> benchmarks,
                                                const std::vector<std::string>& metrics) const;

 private:
  static constexpr size_t kMaxSets = 64;  // kept at once; a fleet runs a handful of suites
  using Key = std::pair<std::vector<std::string>, std::vector<std::string>>;
  mutable Mutex mu_;
  mutable std::map<Key, std::shared_ptr<const learned::Judgement>> prepared_ GUARDED_BY(mu_);
};

struct IngestCounters {
  std::atomic<int64_t> uploads{0};       // node results stored
  std::atomic<int64_t> repeated{0};      // uploads stored before (retries), acknowledged again
  std::atomic<int64_t> upload_bytes{0};  // bytes of the accepted bodies
  std::atomic<int64_t> rejected{0};      // bodies refused as malformed
  std::atomic<int64_t> alerts{0};        // detector alerts stored
};

// What a learn did.
struct LearnReport {
  store::CriteriaVersion criteria;              // the version stored (its body included)
  std::vector<learned::LeftOutClass> left_out;  // classes too small to learn from
  int64_t rejudged = 0;  // nodes whose latest upload was judged again by the new criteria
  int64_t changed = 0;   // of those, how many got another verdict
  std::vector<learned::Reach> reach;  // what the criteria find (learned::ReachOf)
};

// Remediation's audit log in the store.
class StoreAuditLog : public remediate::AuditLog {
 public:
  explicit StoreAuditLog(store::Store& store) : store_(store) {}
  Status Append(remediate::AuditRecord& record) override { return store_.PutRemediation(record); }
  Result<std::vector<remediate::AuditRecord>> Records(
      const remediate::AuditFilter& filter) override {
    return store_.Remediations(filter);
  }

 private:
  store::Store& store_;
};

// The suite of `vigil run --suite health` (a node-local check): its healthy uploads resume
// nothing, since only a validation suite proves a drained node good again.
inline constexpr std::string_view kHealthSuite = "health";

// A detector alert that remediation treats as critical (policy trigger critical_alert): a
// fast-path rule (an XID, an uncorrectable ECC error, a link down) on one machine. Divergences
// and silences are statistical, and job alerts name no one machine.
bool IsCriticalAlert(const detect::Alert& alert);

class FleetService {
 public:
  FleetService(store::Store& store, Clock& clock, learned::LearnOptions learn);
  ~FleetService();

  // Loads every node's latest state (fleet()) and the newest criteria from the store. Criteria
  // that do not parse (learned by an older vigil, of another schema) are learned again from the
  // stored uploads, with a warning; when that fails too the service starts without criteria.
  // Errors: the store's.
  Status Start();

  // Parses, judges and durably stores an upload (ParseUpload's formats); the stored uploads
  // with their ids and verdicts. Each node's upload carries an idempotency key (UploadKey): one
  // stored before (a retry whose first answer was lost) is not stored again and comes back
  // `repeated`, with the first answer's id and verdict. InvalidArgument for a malformed body,
  // which stores nothing; the store's errors otherwise (store.h).
  Result<std::vector<store::Upload>> Ingest(std::string_view body, std::string_view source);

  // Learns criteria from the latest results of every node in the fleet (retired ones left out),
  // hardware class by class: a class too small to learn from is left out and reported, and the
  // rest are learned. Stores them as the next version, judges later uploads by them, and judges
  // every node's latest upload again (their verdicts updated in the store). InvalidArgument
  // when there is nothing at all to learn from.
  Result<LearnReport> Learn();

  // Takes a node out of the fleet now (store::Store::RetireNode). NotFound when it never
  // uploaded.
  Status Retire(std::string_view node);
  // Renames a node and its history (store::Store::RenameNode): NotFound when `from` never
  // uploaded, InvalidArgument when `to` is a node already.
  // REQUIRES: CheckNodeName(to) is OK.
  Status Rename(std::string_view from, std::string_view to);

  // Alerts as `vigil detect --out` writes them (one JSON object per line), or a JSON array.
  Result<std::vector<store::StoredAlert>> IngestAlerts(std::string_view body,
                                                       std::string_view source);

  // Incidents (incidents.h's formats), stored with the time they came in. NotFound naming the
  // line and field for a node that never uploaded (the Selector's history knows a node by its
  // validations); InvalidArgument for a malformed body or a time more than kIncidentSkewS after
  // the server's clock. Nothing is stored unless all are. One already stored (the same node, time,
  // kind and job: a retried request) comes back `repeated`, with its id, and is not stored again.
  Result<std::vector<store::StoredIncident>> IngestIncidents(std::string_view body,
                                                             std::string_view source);

  // Turns remediation on (`vigil serve --remediation`): from now on stored uploads and alerts
  // are events for a remediate::Remediator under `policy` through `backend` (null in dry-run is
  // fine), with its audit log in the store. Reads the log back (Remediator::Restore) and starts
  // its worker. Errors: the store's. Call once, after Start and before serving.
  Status EnableRemediation(remediate::Policy policy, std::unique_ptr<remediate::Backend> backend);
  // nullptr without remediation.
  remediate::Remediator* remediator() { return remediator_.get(); }

  // nullptr until criteria are learned.
  std::shared_ptr<const ActiveCriteria> criteria() const;
  store::Store& store() { return store_; }
  // The fleet's latest state, following every write this service makes (and only those: call
  // Start before serving, and write the store only through this service while it serves).
  const FleetState& fleet() const { return fleet_; }
  IngestCounters& counters() { return counters_; }
  Clock& clock() { return clock_; }
  // Counts the writes this service has made to the store (uploads, verdicts, retirements,
  // renames, alerts, incidents): what the fleet's history follows, so that an answer built from
  // it is stale exactly when this moved on.
  int64_t generation() const { return generation_.load(std::memory_order_acquire); }

 private:
  // The dashboard's ranking (fleet_.Nearest) of every node whose latest upload is in `latest`.
  void Rank(const ActiveCriteria& active, const std::vector<store::Upload>& latest);
  // Decides what a stored upload does under the remediation policy.
  void Remediate(const store::Upload& upload, const std::string& reason, bool validation);

  store::Store& store_;
  Clock& clock_;
  const learned::LearnOptions learn_;
  mutable Mutex mu_;
  std::shared_ptr<const ActiveCriteria> criteria_ GUARDED_BY(mu_);
  Mutex learn_mu_;  // one learning at a time
  void Changed() { generation_.fetch_add(1, std::memory_order_acq_rel); }

  IngestCounters counters_;
  std::atomic<int64_t> generation_{0};
  FleetState fleet_;
  StoreAuditLog audit_{store_};
  // Last: its worker reads fleet_ and writes through audit_, so it goes first.
  std::unique_ptr<remediate::Remediator> remediator_;
};

}  // namespace vigil::server
