// Persistence of the fleet service (`vigil serve`): node uploads with their verdicts, learned
// criteria in versions, and detector alerts. Store is the interface; SQLite (sqlite_store.h) is
// the implementation Vigil ships, and a PostgreSQL one can take its place behind the same calls.
//
// Contract of every implementation: a write that returned OK is durable (it survives a crash of
// the process at any later instant), and every method may be called from many threads at once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vigil/core/status.h"

namespace vigil::store {

// One validation of one node, as uploaded and judged.
struct Upload {
  int64_t id = 0;  // assigned by PutUploads, increasing in commit order
  std::string node;
  std::string hardware;    // the node's hardware class; "" when it did not say
  double received = 0;     // Unix seconds when the server accepted it
  std::string start_time;  // the run's start (ISO 8601) from the document; "" for a summary line
  std::string verdict;     // "healthy", "defective" or "unjudged" (no criteria for its class)
  int64_t criteria_version = 0;      // the criteria that judged it; 0 for none
  std::vector<std::string> failing;  // the components named defective ("GPU 3", "NIC 5")
  std::string findings;              // JSON array of the findings (validate::FindingToJson)
  std::string row;                   // the node's flat fleet-summary line (results::FormatFleetRow)
  std::string document;  // the results document as uploaded; "" when a summary line came in
};

// The latest upload of one node, with how many it has made.
struct NodeState {
  std::string node;
  std::string hardware;
  int64_t last_upload = 0;
  double received = 0;
  std::string start_time;
  std::string verdict;
  std::vector<std::string> failing;
  int64_t uploads = 0;
};

struct NodeFilter {
  std::string verdict;   // "" for any
  std::string hardware;  // "" for any
};

struct CriteriaVersion {
  int64_t version = 0;  // 1, 2, ... in the order they were learned
  double created = 0;   // Unix seconds
  int64_t nodes = 0;    // how many nodes' latest results they were learned from
  std::string body;     // the criteria JSON (validate::CriteriaToJson); empty in listings
};

struct StoredAlert {
  int64_t id = 0;
  double received = 0;
  std::string machine;
  std::string kind;
  double detected = 0;  // detection time the detector reported
  std::string body;     // the alert JSON as posted
};

struct AlertFilter {
  std::string machine;  // "" for any
  size_t limit = 1000;  // the newest this many
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

  // Stores the uploads in one durable step and assigns their ids; all or none. Callers on many
  // threads are committed together (group commit), each told its own outcome.
  virtual Status PutUploads(std::vector<Upload>& uploads) = 0;
  // Every node's latest state that passes the filter, ordered by node name.
  virtual Result<std::vector<NodeState>> Nodes(const NodeFilter& filter) = 0;
  // One node's state; NotFound when it never uploaded.
  virtual Result<NodeState> Node(std::string_view node) = 0;
  // A node's uploads, newest first, at most `limit`; documents included only when asked.
  virtual Result<std::vector<Upload>> History(std::string_view node, size_t limit,
                                              bool with_documents) = 0;
  // The flat summary line of every node's latest upload, ordered by node: what criteria are
  // learned from.
  virtual Result<std::vector<std::string>> LatestRows() = 0;

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

  virtual Result<StoreCounts> Counts() = 0;
};

}  // namespace vigil::store
