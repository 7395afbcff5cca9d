// The fleet service behind `vigil serve`, apart from HTTP: it judges uploads with the current
// criteria and stores them, learns new criteria from every node's latest results, and keeps the
// counters that /metrics exports. Thread-safe: the HTTP server calls it from many threads.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "vigil/core/clock.h"
#include "vigil/core/status.h"
#include "vigil/store/store.h"
#include "vigil/validate/learn.h"

namespace vigil::server {

// The criteria uploads are judged by, and their version in the store.
class ActiveCriteria {
 public:
  ActiveCriteria(int64_t v, validate::LearnedCriteria c) : version(v), criteria(std::move(c)) {}

  const int64_t version;
  const validate::LearnedCriteria criteria;

  // `criteria` restricted to `benchmarks` (what one node ran: RestrictToBenchmarks), made once
  // per set of benchmarks and shared by the uploads that ran the same set. Thread-safe.
  std::shared_ptr<const validate::LearnedCriteria> For(std::vector<std::string> benchmarks) const;

 private:
  static constexpr size_t kMaxSets = 64;  // kept at once; a fleet runs a handful of suites
  mutable std::mutex mu_;
  mutable std::map<std::vector<std::string>, std::shared_ptr<const validate::LearnedCriteria>>
      restricted_;  // guarded by mu_
};

struct IngestCounters {
  std::atomic<int64_t> uploads{0};       // node results stored
  std::atomic<int64_t> upload_bytes{0};  // bytes of the accepted bodies
  std::atomic<int64_t> rejected{0};      // bodies refused as malformed
  std::atomic<int64_t> alerts{0};        // detector alerts stored
};

class FleetService {
 public:
  FleetService(store::Store& store, Clock& clock, validate::LearnOptions learn);

  // Loads the newest criteria from the store; InvalidArgument if they do not parse.
  Status Start();

  // Parses, judges and durably stores an upload (ParseUpload's formats); the stored uploads
  // with their ids and verdicts. InvalidArgument for a malformed body, which stores nothing.
  Result<std::vector<store::Upload>> Ingest(std::string_view body, std::string_view source);

  // Learns criteria from every node's latest results, stores them as the next version and
  // judges later uploads by them. InvalidArgument when there is too little to learn from.
  Result<store::CriteriaVersion> Learn();

  // Alerts as `vigil detect --out` writes them (one JSON object per line), or a JSON array.
  Result<std::vector<store::StoredAlert>> IngestAlerts(std::string_view body,
                                                       std::string_view source);

  // nullptr until criteria are learned.
  std::shared_ptr<const ActiveCriteria> criteria() const;
  store::Store& store() { return store_; }
  IngestCounters& counters() { return counters_; }
  Clock& clock() { return clock_; }

 private:
  store::Store& store_;
  Clock& clock_;
  const validate::LearnOptions learn_;
  mutable std::mutex mu_;
  std::shared_ptr<const ActiveCriteria> criteria_;  // guarded by mu_
  std::mutex learn_mu_;                             // one learning at a time
  IngestCounters counters_;
};

}  // namespace vigil::server
