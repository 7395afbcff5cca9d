#include "vigil/telemetry/signals.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <array>
#include <charconv>
#include <cmath>
#include <tuple>
#include <utility>

#include "vigil/core/bounds.h"
#include "vigil/core/duration.h"
#include "vigil/core/file.h"
#include "vigil/core/yaml_fields.h"

namespace vigil::telemetry {
namespace {

constexpr std::array<std::pair<SignalRole, std::string_view>, 8> kRoleNames = {{
    {SignalRole::kPeer, "peer"},
    {SignalRole::kXid, "xid"},
    {SignalRole::kErrorCounter, "error_counter"},
    {SignalRole::kLinkWidth, "link_width"},
    {SignalRole::kLinkWidthMax, "link_width_max"},
    {SignalRole::kLinkGen, "link_gen"},
    {SignalRole::kLinkGenMax, "link_gen_max"},
    {SignalRole::kLinkUp, "link_up"},
}};

SignalMapping Gauge(std::string metric, std::string signal, SignalRole role = SignalRole::kPeer,
                    double scale = 1.0) {
  SignalMapping m;
  m.metric = std::move(metric);
  m.signal = std::move(signal);
  m.role = role;
  m.scale = scale;
  return m;
}

SignalMapping Counter(std::string metric, std::string signal, SignalRole role = SignalRole::kPeer,
                      double scale = 1.0) {
  SignalMapping m = Gauge(std::move(metric), std::move(signal), role, scale);
  m.counter = true;
  return m;
}

}  // namespace

std::optional<std::string_view> FindLabel(const Labels& labels, std::string_view name) {
  for (const auto& [k, v] : labels) {
    if (k == name) return std::string_view(v);
  }
  return std::nullopt;
}

std::string_view RoleName(SignalRole role) {
  for (const auto& [r, name] : kRoleNames) {
    if (r == role) return name;
  }
  return "peer";
}

std::optional<SignalRole> ParseRole(std::string_view name) {
  for (const auto& [r, n] : kRoleNames) {
    if (n == name) return r;
  }
  return std::nullopt;
}

SignalMap SignalMap::Default() {
  SignalMap map;
  using R = SignalRole;
  // Data moved: a fault moves less (a degraded link, a slow peer); a machine moving more than
  // its peers carries traffic moved off another, or a benign burst.
  const auto less_is_worse = [](SignalMapping m) {
    m.worse = Worse::kLower;
    return m;
  };
  // dcgm-exporter, per GPU (label gpu).
  map.Add(Gauge("DCGM_FI_DEV_GPU_UTIL", "gpu_util"));
  map.Add(Gauge("DCGM_FI_DEV_POWER_USAGE", "gpu_power"));
  map.Add(Gauge("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "tensor_active"));
  map.Add(Gauge("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gr_engine_active"));
  // Temperatures follow power with a thermal lag of a minute or more and differ by rack
  // position: a GPU that comes to run hotter than its peers (a failing fan, a blocked inlet)
  // for minutes. One hotter from the job's start is where it sits (fault-free jobgen seed
  // 57,101: a machine 8 C over its seven peers all along was named).
  for (const auto& [metric, signal] : {std::pair{"DCGM_FI_DEV_GPU_TEMP", "gpu_temp"},
                                       std::pair{"DCGM_FI_DEV_MEMORY_TEMP", "memory_temp"}}) {
    SignalMapping temp = Gauge(metric, signal);
    temp.worse = Worse::kHigher;
    temp.persistence = 300;
    temp.level_by_position = true;
    map.Add(std::move(temp));
  }
  map.Add(less_is_worse(Gauge("DCGM_FI_PROF_NVLINK_TX_BYTES", "nvlink_tx_bytes")));
  map.Add(less_is_worse(Gauge("DCGM_FI_PROF_NVLINK_RX_BYTES", "nvlink_rx_bytes")));
  map.Add(less_is_worse(Counter("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "nvlink_bytes")));
  map.Add(less_is_worse(Gauge("DCGM_FI_PROF_PCIE_TX_BYTES", "pcie_tx_bytes")));
  map.Add(less_is_worse(Gauge("DCGM_FI_PROF_PCIE_RX_BYTES", "pcie_rx_bytes")));
  map.Add(Gauge("DCGM_FI_DEV_XID_ERRORS", "xid", R::kXid));
  map.Add(Counter("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "ecc_uncorrectable", R::kErrorCounter));
  map.Add(Counter("DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", "ecc_uncorrectable_agg", R::kErrorCounter));
  // Corrected by replay: a healthy link counts a few now and then; a failing one hundreds a
  // second.
  SignalMapping crc = Counter("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "nvlink_crc_errors",
                              R::kErrorCounter);
  crc.threshold = 1;
  map.Add(std::move(crc));
  map.Add(Counter("DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", "nvlink_recovery_errors",
                  R::kErrorCounter));
  map.Add(Gauge("DCGM_FI_DEV_PCIE_LINK_WIDTH", "pcie_width", R::kLinkWidth));
  map.Add(Gauge("DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH", "pcie_width_max", R::kLinkWidthMax));
  map.Add(Gauge("DCGM_FI_DEV_PCIE_LINK_GEN", "pcie_gen", R::kLinkGen));
  map.Add(Gauge("DCGM_FI_DEV_PCIE_MAX_LINK_GEN", "pcie_gen_max", R::kLinkGenMax));
  // node-exporter, per host (labels cpu, device).
  SignalMapping idle = Counter("node_cpu_seconds_total", "cpu_idle");
  idle.label = "mode";
  idle.label_value = "idle";
  idle.persistence = 120;  // cron jobs, log rotation, backups: minutes on healthy hosts
  map.Add(std::move(idle));
  map.Add(less_is_worse(Counter("node_network_receive_bytes_total", "net_rx_bytes")));
  map.Add(less_is_worse(Counter("node_network_transmit_bytes_total", "net_tx_bytes")));
  map.Add(less_is_worse(Counter("node_infiniband_port_data_received_bytes_total", "net_rx_bytes")));
  map.Add(
      less_is_worse(Counter("node_infiniband_port_data_transmitted_bytes_total", "net_tx_bytes")));
  map.Add(Gauge("node_network_up", "net_up", R::kLinkUp));
  SignalMapping pause = Counter("node_ethtool_rx_prio3_pause", "pfc_pause");
  pause.worse = Worse::kHigher;  // a congested or degraded path pauses its sender
  map.Add(std::move(pause));
  // The training job itself, per worker.
  SignalMapping step = Gauge("training_step_seconds", "step_time");
  step.worse = Worse::kHigher;
  step.duration = true;
  map.Add(std::move(step));
  // Every canonical signal under its own name, as a gauge with its role: files that hold
  // normalised telemetry (vigil simulate telemetry --out) keep their meaning.
  const std::vector<SignalMapping> exporters = map.mappings();
  for (const SignalMapping& m : exporters) {
    if (map.Knows(m.signal)) continue;
    SignalMapping own = Gauge(m.signal, m.signal, m.role);
    own.worse = m.worse;
    own.threshold = m.threshold;
    own.persistence = m.persistence;
    own.level_by_position = m.level_by_position;
    own.duration = m.duration;
    map.Add(std::move(own));
  }
  return map;
}

void SignalMap::Add(SignalMapping mapping) {
  auto& indexes = by_metric_[mapping.metric];
  for (size_t i : indexes) {
    SignalMapping& old = mappings_[i];
    if (old.label == mapping.label && old.label_value == mapping.label_value) {
      old = std::move(mapping);
      return;
    }
  }
  const bool conditional = !mapping.label.empty();
  mappings_.push_back(std::move(mapping));
  if (conditional) {
    indexes.insert(indexes.begin(), mappings_.size() - 1);
  } else {
    indexes.push_back(mappings_.size() - 1);
  }
}

const SignalMapping* SignalMap::Find(std::string_view metric, const Labels& labels) const {
  auto it = by_metric_.find(metric);
  if (it == by_metric_.end()) return nullptr;
  for (size_t i : it->second) {
    const SignalMapping& m = mappings_[i];
    if (m.label.empty()) return &m;
    if (FindLabel(labels, m.label) == std::optional<std::string_view>(m.label_value)) return &m;
  }
  return nullptr;
}

bool SignalMap::Knows(std::string_view metric) const { return by_metric_.contains(metric); }

Status SignalMap::AddYaml(std::string_view text, std::string_view source) {
  VIGIL_ASSIGN_OR_RETURN(YAML::Node doc, LoadYaml(text, source));
  const YAML::Node list = doc.IsMap() ? doc["signals"] : YAML::Node();
  if (!list || !list.IsSequence()) {
    return Status::InvalidArgument(
        fmt::format("{}: expected a top-level 'signals:' list of mappings", source));
  }
  std::vector<SignalMapping> parsed;
  for (const YAML::Node& entry : list) {
    const int line = entry.Mark().line + 1;
    auto bad = [&](std::string_view field, std::string_view what) {
      return Status::InvalidArgument(fmt::format("{}:{}: {}: {}", source, line, field, what));
    };
    if (!entry.IsMap()) return bad("signals", "each entry must be a mapping");
    auto text_of = [&](const char* field, bool required, std::string* out) -> Status {
      const YAML::Node n = entry[field];
      if (!n) return required ? bad(field, "missing") : Status::Ok();
      if (!n.IsScalar() || n.Scalar().empty()) return bad(field, "must be a non-empty string");
      *out = n.Scalar();
      return Status::Ok();
    };
    SignalMapping m;
    std::string type = "gauge";
    std::string role = "peer";
    std::string scale;
    std::string worse = "either";
    std::string threshold, persistence, by_position, duration;
    VIGIL_RETURN_IF_ERROR(text_of("metric", true, &m.metric));
    VIGIL_RETURN_IF_ERROR(text_of("signal", true, &m.signal));
    VIGIL_RETURN_IF_ERROR(text_of("label", false, &m.label));
    VIGIL_RETURN_IF_ERROR(text_of("value", false, &m.label_value));
    VIGIL_RETURN_IF_ERROR(text_of("type", false, &type));
    VIGIL_RETURN_IF_ERROR(text_of("role", false, &role));
    VIGIL_RETURN_IF_ERROR(text_of("scale", false, &scale));
    VIGIL_RETURN_IF_ERROR(text_of("worse", false, &worse));
    VIGIL_RETURN_IF_ERROR(text_of("threshold", false, &threshold));
    VIGIL_RETURN_IF_ERROR(text_of("persistence", false, &persistence));
    VIGIL_RETURN_IF_ERROR(text_of("level_by_position", false, &by_position));
    VIGIL_RETURN_IF_ERROR(text_of("duration", false, &duration));
    for (const auto& [field, given, out] :
         {std::tuple{"level_by_position", &by_position, &m.level_by_position},
          std::tuple{"duration", &duration, &m.duration}}) {
      if (!given->empty() && *given != "true" && *given != "false") {
        return bad(field, fmt::format("{} is not true or false", Quote(*given)));
      }
      *out = *given == "true";
    }
    if (worse != "either" && worse != "higher" && worse != "lower") {
      return bad("worse", fmt::format("{} is not either, higher or lower", Quote(worse)));
    }
    m.worse = worse == "higher"  ? Worse::kHigher
              : worse == "lower" ? Worse::kLower
                                 : Worse::kEither;
    if (m.label.empty() != m.label_value.empty()) {
      return bad("label", "'label' and 'value' go together");
    }
    if (type != "gauge" && type != "counter") {
      return bad("type", fmt::format("{} is not gauge or counter", Quote(type)));
    }
    m.counter = type == "counter";
    const auto r = ParseRole(role);
    if (!r) {
      return bad("role", fmt::format("{} is not a role (peer, xid, error_counter, link_width, "
                                     "link_width_max, link_gen, link_gen_max, link_up)",
                                     Quote(role)));
    }
    m.role = *r;
    auto number = [&](const char* field, const std::string& given, Bounds bounds,
                      double* out) -> Status {
      if (given.empty()) return Status::Ok();
      const std::string_view written = Trim(given);
      const auto [end, ec] = std::from_chars(written.data(), written.data() + written.size(), *out);
      if (written.empty() || ec != std::errc() || end != written.data() + written.size()) {
        return bad(field, fmt::format("{} is not a number", Quote(given)));
      }
      if (!bounds.Contains(*out)) return bad(field, DescribeOutside(*out, bounds, written));
      return Status::Ok();
    };
    // From nano- to tera-: any unit conversion, and values stay far from overflow.
    VIGIL_RETURN_IF_ERROR(number("scale", scale, {.lo = -1e12, .hi = 1e12}, &m.scale));
    VIGIL_RETURN_IF_ERROR(number("threshold", threshold, {.lo = 0, .hi = 1e12}, &m.threshold));
    if (!persistence.empty()) {
      constexpr Bounds kPersistence{.lo = 1, .hi = 3600, .seconds = true};
      Result<double> d = ParseDuration(persistence);
      if (!d.ok()) return bad("persistence", d.status().message());
      if (!kPersistence.Contains(*d)) {
        return bad("persistence", DescribeOutside(*d, kPersistence, persistence));
      }
      m.persistence = *d;
    }
    parsed.push_back(std::move(m));
  }
  for (SignalMapping& m : parsed) Add(std::move(m));
  return Status::Ok();
}

Status SignalMap::AddYamlFile(const std::string& path) {
  VIGIL_ASSIGN_OR_RETURN(const std::string text, ReadFile(path));
  return AddYaml(text, path);
}

}  // namespace vigil::telemetry
