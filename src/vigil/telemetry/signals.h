// Canonical signals, and the map from exporter metric names (dcgm-exporter, node-exporter, a
// job's own metrics) to them. docs/detect.md lists the default map.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "vigil/core/status.h"
#include "vigil/core/text.h"

namespace vigil::telemetry {

// What a signal means to the detector: compared with peers, or judged by a fast-path rule.
enum class SignalRole {
  kPeer,          // compared with the same signal of the machine's peers
  kXid,           // the last XID error code of a GPU (0: none)
  kErrorCounter,  // a count of errors (after rate conversion: errors per second); any is a fault
  kLinkWidth,     // PCIe link width now
  kLinkWidthMax,  // PCIe link width the link can train to
  kLinkGen,       // PCIe link generation now
  kLinkGenMax,    // PCIe link generation the link can train to
  kLinkUp,        // 1 while a network link is up, 0 when down
};

// Which way a signal's deviation from its peers is a fault: a worker's step time is bad only
// when higher; most signals either way.
enum class Worse { kEither, kHigher, kLower };

// One entry of the map: samples of `metric` (and, when `label` is set, only those whose label
// `label` equals `label_value`) become samples of `signal`. A counter becomes a per-second rate.
struct SignalMapping {
  std::string metric;
  std::string label;
  std::string label_value;
  std::string signal;
  bool counter = false;
  double scale = 1.0;  // applied after rate conversion
  SignalRole role = SignalRole::kPeer;
  Worse worse = Worse::kEither;
  // An error counter's rate (per second) above which it is a fault (0: any increase): corrected
  // errors such as NVLink CRC flit errors come now and then on healthy links.
  double threshold = 0;
  // How long a deviation of this signal from its peers must last to alert (0: the detector's
  // --persistence): a host's background work (cron, log rotation) runs for minutes.
  double persistence = 0;
  // Its healthy level depends on where the machine sits (a GPU's temperature on its rack position
  // and inlet air): a machine alone at its level from its first sample is placed there, like a
  // machine that shares its level, and only a move from it is judged.
  bool level_by_position = false;
  // Its value is the length of the interval that ends at its sample (a step time: the rank's
  // last iteration): a deviation it shows is known to have lasted only to that interval's start.
  bool duration = false;
};

// Labels of one sample, as (name, value) pairs.
using Labels = std::vector<std::pair<std::string, std::string>>;

// Returns the value of label `name`, or nullopt.
std::optional<std::string_view> FindLabel(const Labels& labels, std::string_view name);

class SignalMap {
 public:
  // The documented default: dcgm-exporter and node-exporter names (docs/detect.md).
  static SignalMap Default();

  // Adds (or, for the same metric and label condition, replaces) a mapping.
  void Add(SignalMapping mapping);

  // Reads a YAML file of the form
  //   signals:
  //     - {metric: my_step_seconds, signal: step_time}
  //     - {metric: node_cpu_seconds_total, label: mode, value: idle, signal: cpu_idle,
  //        type: counter, role: peer, scale: 1}
  // and adds its entries; errors name the file, the line and the field.
  Status AddYaml(std::string_view text, std::string_view source);
  Status AddYamlFile(const std::string& path);

  // The mapping for a sample of `metric` with `labels`, or nullptr when none applies.
  const SignalMapping* Find(std::string_view metric, const Labels& labels) const;

  // Whether any mapping for `metric` exists (whatever its label condition).
  bool Knows(std::string_view metric) const;

  const std::vector<SignalMapping>& mappings() const { return mappings_; }

 private:
  std::vector<SignalMapping> mappings_;
  // metric name -> indexes into mappings_, most specific (with a label condition) first.
  std::unordered_map<std::string, std::vector<size_t>, StringHash, std::equal_to<>> by_metric_;
};

// The role's name in YAML and docs ("peer", "xid", "error_counter", ...), and back.
std::string_view RoleName(SignalRole role);
std::optional<SignalRole> ParseRole(std::string_view name);

}  // namespace vigil::telemetry
