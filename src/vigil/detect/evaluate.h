// Scoring alerts against fault labels (machine,onset,kind[,end]): precision, recall, F1 and the
// time from onset to detection, per fault kind (docs/detect.md, "Scoring").
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "vigil/core/json.h"
#include "vigil/core/status.h"
#include "vigil/detect/detector.h"

namespace vigil::detect {

struct FaultLabel {
  std::string machine;
  double onset = 0;
  std::string kind;
  double end = 0;  // 0: the fault lasts to the end of the data
};

// The labels CSV: a header naming machine, onset, kind and optionally end (any order).
Result<std::vector<FaultLabel>> ParseLabels(std::string_view text, std::string_view source);

struct KindScore {
  int64_t faults = 0;
  int64_t detected = 0;
  std::vector<double> latencies;  // detection - onset of each detected fault
};

struct Score {
  int64_t alerts = 0;       // that name a machine
  int64_t job_alerts = 0;   // job-wide stalls that name none ("*")
  int64_t true_alerts = 0;  // on a labelled machine, at or after its onset, before its end
  int64_t faults = 0;
  int64_t detected = 0;
  std::vector<double> latencies;
  std::map<std::string, KindScore> by_kind;      // by label kind
  std::map<std::string, int64_t> false_by_rule;  // false alerts by kind/rule, to see why

  double precision() const;  // 1 when there was no alert
  double recall() const;     // 1 when there was no fault
  double f1() const;
  void Add(const Score& other);
};

// An alert is true when its machine has a label whose onset is at or before the detection time
// (less `slack` seconds, for onsets inside the step that detected them) and whose end, if any,
// is after it. A fault is detected by its first true alert.
Score ScoreAlerts(const std::vector<Alert>& alerts, const std::vector<FaultLabel>& labels,
                  double slack = 1.0);

Json ScoreToJson(const Score& score);

}  // namespace vigil::detect
