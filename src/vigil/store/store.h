// Persistence of the fleet service (`vigil serve`): node uploads with their verdicts, learned
// criteria in versions, detector alerts, and remediation's audit log. Store is the interface;
// SQLite (sqlite_store.h) is the implementation Vigil ships, and a PostgreSQL one can take its
// place behind the same calls.
//
// Contract of every implementation: a write that returned OK is durable (it survives a crash of
// the process at any later instant), and every method may be called from many threads at once.
// Errors: NotFound for a record that does not exist; InvalidArgument only for a request that
// conflicts with what is stored (a rename onto a name in use); Unavailable once the database
// was deleted, replaced or truncated under the store (nothing more is written); IoError for a
// damaged database or anything the system refuses. A damaged database is never InvalidArgument:
// that is the client's fault, and an agent would drop a good upload over it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vigil/core/status.h"
#include "vigil/remediate/audit.h"
#include "vigil/results/component.h"
#include "vigil/results/summary.h"
#include "vigil/results/verdict.h"

namespace vigil::store {

// One validation of one node, as uploaded and judged.
struct Upload {
  int64_t id = 0;  // assigned by PutUploads, increasing in commit order
  std::string node;
  std::string hardware;    // the node's hardware class; "" when it did not say
  double received = 0;     // Unix seconds when the server accepted it
  std::string start_time;  // the run's start (ISO 8601) from the document; "" for a summary line
  Verdict verdict = Verdict::kUnjudged;  // unjudged: no criteria for its class
  int64_t criteria_version = 0;          // the criteria that judged it; 0 for none
  std::vector<ComponentId> failing;      // the components named defective (GPU 3, NIC 5)
  // JSON array of the findings (learned::FindingToJson): encoded once, when judged, and
  // written into answers as it is.
  std::string findings;
  // The node's flat metrics, as the validator reads them; History and LatestUploads fill
  // row.node and row.hardware from the fields above.
  FleetRow row;
  std::string document;  // the results document as uploaded; "" when a summary line came in
  // Idempotency key (the node, its start time and a digest of what it uploaded): an upload whose
  // key is stored already is not stored again. Empty: no key (every such upload is stored).
  std::string key;
  // Set by PutUploads when the key was stored already: id, received, verdict, criteria version,
  // failing and findings are then the stored upload's, as the first answer gave them.
  bool repeated = false;
};

// The latest upload of one node, with how many it has made.
struct NodeState {
  std::string node;
  std::string hardware;
  int64_t last_upload = 0;
  double received = 0;
  std::string start_time;
  Verdict verdict = Verdict::kUnjudged;
  std::vector<ComponentId> failing;
  int64_t uploads = 0;
  double retired = 0;  // Unix seconds when it was retired; 0 while it is in the fleet

  // `upload` stored as the node's latest: the node follows it, counts one more upload, and is
  // back in the fleet if it was retired. What every store and the server's fleet in memory do.
  void Follow(const Upload& upload) {
    node = upload.node;
    hardware = upload.hardware;
    last_upload = upload.id;
    received = upload.received;
    start_time = upload.start_time;
    verdict = upload.verdict;
    failing = upload.failing;
    ++uploads;
    retired = 0;
  }
};

struct NodeFilter {
  std::optional<Verdict> verdict;  // none: any
  std::string hardware;            // "" for any
  bool retired = false;            // false: the nodes in the fleet; true: the retired ones
};

// A new verdict for a stored upload (a learn judges every node's latest upload again).
struct VerdictUpdate {
  int64_t upload = 0;  // Upload::id
  Verdict verdict = Verdict::kUnjudged;
  int64_t criteria_version = 0;
  std::vector<ComponentId> failing;
  std::string findings;  // as Upload::findings
};

struct CriteriaVersion {
  int64_t version = 0;  // 1, 2, ... in the order they were learned
  double created = 0;   // Unix seconds
  int64_t nodes = 0;    // how many nodes' latest results they were learned from
  std::string body;     // the criteria JSON (learned::CriteriaToJson); empty in listings
};

struct StoredAlert {
  int64_t id = 0;
  double received = 0;
  std::string machine;
  std::string kind;     // detect::AlertKindName
  double detected = 0;  // detection time the detector reported
  // The alert as one JSON object (detect::AlertToJson, encoded once when it came in), written
  // into answers as it is.
  std::string body;
};

struct AlertFilter {
  std::string machine;  // "" for any
  size_t limit = 1000;  // the newest this many
};

// An incident: a job that failed or lost time on a node, as an operator or a scheduler's hook
// reported it (POST /api/v1/incidents). The fields follow select's history incident record
// (select/history.h), plus what a person reporting it knows: the job and a note.
struct StoredIncident {
  int64_t id = 0;
  double received = 0;  // Unix seconds when the server accepted it
  std::string node;
  double time = 0;             // Unix seconds when it happened
  std::string kind;            // the component kind blamed ("GPU", "network", "software", ...)
  double cost_node_hours = 0;  // the job time it cost: nodes x time lost
  std::string job;             // the job it hit; "" when not said
  std::string note;            // free text; "" when none
  // Set by PutIncidents: the same incident (node, time, kind and job equal) was stored before, by
  // a retried request or a hook that fired twice; it was not stored again, and `id` and
  // `received` are the stored one's.
  bool repeated = false;
};

struct IncidentFilter {
  std::string node;     // "" for any
  size_t limit = 1000;  // the newest this many (by id)
};

// Totals for /metrics and the dashboard.
struct StoreCounts {
  int64_t uploads = 0;
  int64_t nodes = 0;
  int64_t alerts = 0;
  int64_t criteria_versions = 0;
};

class Store {
 public:
  virtual ~Store() = default;

  // Stores the uploads in one durable step and assigns their ids; all or none. An upload whose
  // key is stored already is not stored again: it comes back `repeated`, with the stored
  // upload's id and verdict. A node's new upload brings it back into the fleet if it was
  // retired. Callers on many threads are committed together (group commit), each told its own
  // outcome.
  virtual Status PutUploads(std::vector<Upload>& uploads) = 0;
  // Every node's latest state that passes the filter, ordered by node name.
  virtual Result<std::vector<NodeState>> Nodes(const NodeFilter& filter) = 0;
  // One node's state, retired or not; NotFound when it never uploaded.
  virtual Result<NodeState> Node(std::string_view node) = 0;
  // A node's uploads, newest first, at most `limit`; documents included only when asked.
  virtual Result<std::vector<Upload>> History(std::string_view node, size_t limit,
                                              bool with_documents) = 0;
  // The latest upload of every node in the fleet (retired nodes left out), ordered by node, with
  // id, node, hardware, start time, verdict and row (typed: learning reads the rows as they are):
  // what criteria are learned from and what a learn judges again. No documents.
  virtual Result<std::vector<Upload>> LatestUploads() = 0;
  // Replaces the verdicts of stored uploads, durably, in steps of a few hundred (each verdict
  // stands alone); a node's latest state follows when the upload is still its latest. NotFound
  // for an id not stored: nothing of its step is written (earlier steps stay).
  virtual Status PutVerdicts(const std::vector<VerdictUpdate>& verdicts) = 0;

  // Takes a node out of the fleet (node lists, learning, metrics) at `when` (Unix seconds); its
  // history stays readable, and its next upload brings it back. Retiring a retired node keeps
  // the first time. NotFound when it never uploaded.
  virtual Status RetireNode(std::string_view node, double when) = 0;
  // Gives a node and its history (uploads and incidents) another name. NotFound when `from` never
  // uploaded; InvalidArgument when `to` is a node already (retired or not).
  virtual Status RenameNode(std::string_view from, std::string_view to) = 0;

  // Stores new criteria as the next version and returns it.
  virtual Result<int64_t> PutCriteria(const CriteriaVersion& criteria) = 0;
  // The given version (0: the latest) with its body; nullopt when there is none.
  virtual Result<std::optional<CriteriaVersion>> Criteria(int64_t version) = 0;
  // Every version, oldest first, without bodies.
  virtual Result<std::vector<CriteriaVersion>> CriteriaVersions() = 0;

  // Stores alerts in one durable step and assigns their ids.
  virtual Status PutAlerts(std::vector<StoredAlert>& alerts) = 0;
  // The newest alerts that pass the filter, newest first.
  virtual Result<std::vector<StoredAlert>> Alerts(const AlertFilter& filter) = 0;

  // Stores incidents in one durable step and assigns their ids; one equal to a stored incident (or
  // to one before it in `incidents`) in node, time, kind and job is not stored again but marked
  // `repeated`, with that one's id. Their nodes are not checked here (the service does).
  virtual Status PutIncidents(std::vector<StoredIncident>& incidents) = 0;
  // The newest incidents that pass the filter, newest first.
  virtual Result<std::vector<StoredIncident>> Incidents(const IncidentFilter& filter) = 0;

  // Remediation's audit log (remediate/audit.h): stores one record durably and assigns its id.
  virtual Status PutRemediation(remediate::AuditRecord& record) = 0;
  // The newest records that pass the filter, newest first.
  virtual Result<std::vector<remediate::AuditRecord>> Remediations(
      const remediate::AuditFilter& filter) = 0;

  // Nodes counts those in the fleet (not retired).
  virtual Result<StoreCounts> Counts() = 0;

  // OK while the store can write: Unavailable once its database was deleted, replaced or
  // truncated under it (then every write fails the same way until a restart), IoError when it
  // cannot tell.
  virtual Status Health() = 0;
};

}  // namespace vigil::store
