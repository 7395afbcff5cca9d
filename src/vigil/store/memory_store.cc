#include "vigil/store/memory_store.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <span>
#include <utility>
#include <vector>

#include "vigil/core/mutex.h"
#include "vigil/core/text.h"

namespace vigil::store {
namespace {

Status NoNode(std::string_view node) {
  return Status::NotFound(fmt::format("no node {}", Quote(node)));
}

class MemoryStore final : public Store {
 public:
  Status PutUploads(std::vector<Upload>& uploads) override EXCLUDES(mu_) {
    MutexLock lock(mu_);
    for (Upload& u : uploads) {
      if (!u.key.empty()) {
        const auto stored = by_key_.find(u.key);
        u.repeated = stored != by_key_.end();
        if (u.repeated) {
          const Upload& first = uploads_.at(stored->second);
          u.id = first.id;
          u.received = first.received;
          u.verdict = first.verdict;
          u.criteria_version = first.criteria_version;
          u.failing = first.failing;
          u.findings = first.findings;
          continue;
        }
      }
      u.id = ++last_upload_id_;
      Upload& kept = uploads_[u.id] = u;
      kept.repeated = false;
      if (!u.key.empty()) by_key_[u.key] = u.id;
      nodes_[u.node].Follow(u);
    }
    return Status::Ok();
  }

  Result<std::vector<NodeState>> Nodes(const NodeFilter& filter) override EXCLUDES(mu_) {
    MutexLock lock(mu_);
    std::vector<NodeState> out;
    for (const auto& [name, n] : nodes_) {
      if ((!filter.verdict || n.verdict == *filter.verdict) &&
          (filter.hardware.empty() || n.hardware == filter.hardware) &&
          (n.retired > 0) == filter.retired) {
        out.push_back(n);
      }
    }
    return out;
  }

  Result<NodeState> Node(std::string_view node) override EXCLUDES(mu_) {
    MutexLock lock(mu_);
    const auto it = nodes_.find(std::string(node));
    if (it == nodes_.end()) return NoNode(node);
    return it->second;
  }

  Result<std::vector<Upload>> History(std::string_view node, size_t limit,
                                      bool with_documents) override EXCLUDES(mu_) {
    MutexLock lock(mu_);
    std::vector<Upload> out;
    for (auto it = uploads_.rbegin(); it != uploads_.rend() && out.size() < limit; ++it) {
      if (it->second.node != node) continue;
      Upload& u = out.emplace_back(it->second);
      u.key.clear();
      if (!with_documents) u.document.clear();
    }
    return out;
  }

  Result<std::vector<Upload>> LatestUploads() override EXCLUDES(mu_) {
    MutexLock lock(mu_);
    std::vector<Upload> out;
    for (const auto& [name, n] : nodes_) {
      if (n.retired > 0) continue;
      const Upload& stored = uploads_.at(n.last_upload);
      Upload& u = out.emplace_back();
      u.id = stored.id;
      u.node = stored.node;
      u.hardware = stored.hardware;
      u.start_time = stored.start_time;
      u.verdict = stored.verdict;
      u.row = stored.row;
      u.row.node = stored.node;
      u.row.hardware = stored.hardware;
    }
    return out;
  }

  // In steps of as many verdicts as the SQLite store commits at once, each all or nothing.
  Status PutVerdicts(const std::vector<VerdictUpdate>& verdicts) override EXCLUDES(mu_) {
    constexpr size_t kVerdictsPerStep = 200;
    MutexLock lock(mu_);
    for (size_t first = 0; first < verdicts.size(); first += kVerdictsPerStep) {
      const std::span<const VerdictUpdate> step(
          verdicts.data() + first, std::min(kVerdictsPerStep, verdicts.size() - first));
      for (const VerdictUpdate& v : step) {
        if (!uploads_.contains(v.upload)) {
          return Status::NotFound(fmt::format("memory store: no upload {}", v.upload));
        }
      }
      for (const VerdictUpdate& v : step) {
        Upload& u = uploads_.at(v.upload);
        u.verdict = v.verdict;
        u.criteria_version = v.criteria_version;
        u.failing = v.failing;
        u.findings = v.findings;
        NodeState& n = nodes_.at(u.node);
        if (n.last_upload == u.id) {
          n.verdict = v.verdict;
          n.failing = v.failing;
        }
      }
    }
    return Status::Ok();
  }

  Status RetireNode(std::string_view node, double when) override EXCLUDES(mu_) {
    MutexLock lock(mu_);
    const auto it = nodes_.find(std::string(node));
    if (it == nodes_.end()) return NoNode(node);
    if (it->second.retired == 0) it->second.retired = when;
    return Status::Ok();
  }

  Status RenameNode(std::string_view from, std::string_view to) override EXCLUDES(mu_) {
    MutexLock lock(mu_);
    auto it = nodes_.find(std::string(from));
    if (it == nodes_.end()) return NoNode(from);
    const std::string name(to);
    if (nodes_.contains(name)) {
      return Status::InvalidArgument(
          fmt::format("a node {} exists already (retired or not)", Quote(to)));
    }
    auto moved = nodes_.extract(it);
    moved.key() = name;
    moved.mapped().node = name;
    nodes_.insert(std::move(moved));
    for (auto& [id, u] : uploads_) {
      if (u.node != from) continue;
      u.node = name;
      u.row.node = name;  // the document stays as it came
    }
    for (StoredIncident& i : incidents_) {
      if (i.node == from) i.node = name;
    }
    for (StoredAlert& a : alerts_) {
      if (a.machine == from) a.machine = name;  // the body stays as it came
    }
    return Status::Ok();
  }

  Result<int64_t> PutCriteria(const CriteriaVersion& criteria) override EXCLUDES(mu_) {
    MutexLock lock(mu_);
    CriteriaVersion& kept = criteria_.emplace_back(criteria);
    kept.version = static_cast<int64_t>(criteria_.size());
    return kept.version;
  }

  Result<std::optional<CriteriaVersion>> Criteria(int64_t version) override EXCLUDES(mu_) {
    MutexLock lock(mu_);
    if (criteria_.empty()) return std::optional<CriteriaVersion>();
    if (version == 0) return std::optional<CriteriaVersion>(criteria_.back());
    if (version < 0 || version > static_cast<int64_t>(criteria_.size())) {
      return std::optional<CriteriaVersion>();
    }
    return std::optional<CriteriaVersion>(criteria_[static_cast<size_t>(version - 1)]);
  }

  Result<std::vector<CriteriaVersion>> CriteriaVersions() override EXCLUDES(mu_) {
    MutexLock lock(mu_);
    std::vector<CriteriaVersion> out = criteria_;
    for (CriteriaVersion& c : out) c.body.clear();
    return out;
  }

  Status PutAlerts(std::vector<StoredAlert>& alerts) override EXCLUDES(mu_) {
    MutexLock lock(mu_);
    for (StoredAlert& a : alerts) {
      a.id = static_cast<int64_t>(alerts_.size()) + 1;
      alerts_.push_back(a);
    }
    return Status::Ok();
  }

  Result<std::vector<StoredAlert>> Alerts(const AlertFilter& filter) override EXCLUDES(mu_) {
    MutexLock lock(mu_);
    std::vector<StoredAlert> out;
    for (auto it = alerts_.rbegin(); it != alerts_.rend() && out.size() < filter.limit; ++it) {
      if (filter.machine.empty() || it->machine == filter.machine) out.push_back(*it);
    }
    return out;
  }

  Status PutIncidents(std::vector<StoredIncident>& incidents) override EXCLUDES(mu_) {
    MutexLock lock(mu_);
    for (StoredIncident& i : incidents) {
      const auto same = std::find_if(incidents_.begin(), incidents_.end(), [&](const auto& o) {
        return o.node == i.node && o.time == i.time && o.kind == i.kind && o.job == i.job;
      });
      if (same != incidents_.end()) {
        i.id = same->id;
        i.received = same->received;
        i.repeated = true;
        continue;
      }
      i.id = static_cast<int64_t>(incidents_.size()) + 1;
      incidents_.push_back(i);
    }
    return Status::Ok();
  }

  Result<std::vector<StoredIncident>> Incidents(const IncidentFilter& filter) override
      EXCLUDES(mu_) {
    MutexLock lock(mu_);
    std::vector<StoredIncident> out;
    for (auto it = incidents_.rbegin(); it != incidents_.rend() && out.size() < filter.limit;
         ++it) {
      if (filter.node.empty() || it->node == filter.node) out.push_back(*it);
    }
    return out;
  }

  Status PutRemediation(remediate::AuditRecord& record) override EXCLUDES(mu_) {
    MutexLock lock(mu_);
    record.id = static_cast<int64_t>(remediations_.size()) + 1;
    remediations_.push_back(record);
    return Status::Ok();
  }

  Result<std::vector<remediate::AuditRecord>> Remediations(
      const remediate::AuditFilter& filter) override EXCLUDES(mu_) {
    MutexLock lock(mu_);
    std::vector<remediate::AuditRecord> out;
    for (auto it = remediations_.rbegin(); it != remediations_.rend() && out.size() < filter.limit;
         ++it) {
      if (filter.before > 0 && it->id >= filter.before) continue;
      if (filter.node.empty() || it->node == filter.node) out.push_back(*it);
    }
    return out;
  }

  Result<StoreCounts> Counts() override EXCLUDES(mu_) {
    MutexLock lock(mu_);
    const auto in_fleet = std::count_if(nodes_.begin(), nodes_.end(),
                                        [](const auto& n) { return n.second.retired == 0; });
    return StoreCounts{last_upload_id_, static_cast<int64_t>(in_fleet),
                       static_cast<int64_t>(alerts_.size()),
                       static_cast<int64_t>(criteria_.size())};
  }

  Status Health() override { return Status::Ok(); }

 private:
  Mutex mu_;
  int64_t last_upload_id_ GUARDED_BY(mu_) = 0;
  std::map<int64_t, Upload> uploads_ GUARDED_BY(mu_);       // by id, keys included
  std::map<std::string, int64_t> by_key_ GUARDED_BY(mu_);   // idempotency key -> upload id
  std::map<std::string, NodeState> nodes_ GUARDED_BY(mu_);  // by node name
  std::vector<CriteriaVersion> criteria_ GUARDED_BY(mu_);   // version i at [i - 1]
  std::vector<StoredAlert> alerts_ GUARDED_BY(mu_);         // alert i at [i - 1]
  std::vector<remediate::AuditRecord> remediations_ GUARDED_BY(mu_);  // record i at [i - 1]
  std::vector<StoredIncident> incidents_ GUARDED_BY(mu_);             // incident i at [i - 1]
};

}  // namespace

std::unique_ptr<Store> NewMemoryStore() { return std::make_unique<MemoryStore>(); }

}  // namespace vigil::store
