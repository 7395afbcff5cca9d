#include "vigil/results/document.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <cmath>
#include <limits>

#include "vigil/core/bounds.h"
#include "vigil/core/file.h"
#include "vigil/core/json.h"
#include "vigil/core/text.h"

namespace vigil {
namespace {

constexpr double kNull = std::numeric_limits<double>::quiet_NaN();

// JSON has no NaN: a missing figure is written as null and read back as NaN.
Json NumberOrNull(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

Json ToJson(const Metric& m) {
  Json samples = Json::array();
  for (double s : m.samples) samples.push_back(NumberOrNull(s));
  return Json{{"key", m.key.ToString()},
              {"value", NumberOrNull(m.value)},
              {"unit", m.unit},
              {"higher_is_better", m.higher_is_better},
              {"samples", std::move(samples)}};
}

}  // namespace

Json ToJson(const BenchmarkRecord& r) {
  Json metrics = Json::array();
  for (const Metric& m : r.metrics) metrics.push_back(ToJson(m));
  return Json{{"name", r.name},
              {"component", r.component},
              {"status", BenchStatusName(r.status)},
              {"return_code", r.return_code},
              {"error", r.error},
              {"duration_s", r.duration_s},
              {"metrics", std::move(metrics)}};
}

namespace {

Json ToJson(const Inventory& inv) {
  Json gpus = Json::array();
  for (const GpuInfo& g : inv.gpus) {
    gpus.push_back(Json{{"index", g.index}, {"name", g.name}, {"bus_id", g.bus_id}});
  }
  const auto number = [](const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); };
  Json pci = Json::array();
  for (const PciGpuInfo& g : inv.pci_gpus) {
    pci.push_back(Json{{"bus_id", g.bus_id},
                       {"driver", g.driver},
                       {"link_width", number(g.link_width)},
                       {"link_width_max", number(g.link_width_max)},
                       {"link_speed_gts", number(g.link_speed_gts)},
                       {"link_speed_max_gts", number(g.link_speed_max_gts)}});
  }
  return Json{{"hostname", inv.hostname},
              {"cpu_model", inv.cpu_model},
              {"sockets", inv.sockets},
              {"cores", inv.cores},
              {"threads", inv.threads},
              {"numa_nodes", inv.numa_nodes},
              {"cpu_vector_extensions", inv.cpu_vector_extensions},
              {"memory_bytes", inv.memory_bytes},
              {"kernel", inv.kernel},
              {"os", inv.os},
              {"gpu_driver", inv.gpu_driver},
              {"gpus", std::move(gpus)},
              {"pci_gpus", std::move(pci)}};
}

using simdjson::dom::element;

// Ranges of a results document's numbers (docs/formats.md, "Ranges"). A figure may also be null.
constexpr Bounds kSocketsBounds{.lo = 0, .hi = 1024};
constexpr Bounds kCpusBounds{.lo = 0, .hi = 1048576};  // cores and threads
constexpr Bounds kNumaNodesBounds{.lo = 0, .hi = 1024};
constexpr Bounds kMemoryBytesBounds{.lo = 0, .hi = 1152921504606846976.0};  // 1 EiB
constexpr Bounds kGpuIndexBounds{.lo = 0, .hi = 1023};
constexpr Bounds kLinkWidthBounds{.lo = 0, .hi = 64};    // PCIe lanes
constexpr Bounds kLinkSpeedBounds{.lo = 0, .hi = 1000};  // GT/s
constexpr Bounds kBenchDurationBounds{.lo = 0, .hi = 365 * 86400.0, .seconds = true};

// Typed access to the fields of a JSON object, with errors that name the field's path.
class Fields {
 public:
  Fields(element obj, std::string path) : obj_(obj), path_(std::move(path)) {}

  Status CheckObject() const {
    return obj_.is_object() ? Status::Ok() : Error("", "expected an object");
  }

  Result<element> Get(std::string_view name, bool (element::*is_type)() const noexcept,
                      std::string_view type) const {
    element e;
    if (obj_.at_key(name).get(e)) return Error(name, "missing");
    if (!(e.*is_type)()) return Error(name, fmt::format("expected {}", type));
    return e;
  }

  Result<std::string> String(std::string_view name) const {
    VIGIL_ASSIGN_OR_RETURN(element e, Get(name, &element::is_string, "a string"));
    return std::string(e.get_string().value_unsafe());
  }
  // A number, or null for a missing figure (NaN).
  Result<double> Number(std::string_view name) const {
    element e;
    if (!obj_.at_key(name).get(e) && e.is_null()) return kNull;
    VIGIL_ASSIGN_OR_RETURN(e, Get(name, &element::is_number, "a number"));
    return e.get_double().value_unsafe();
  }
  // As Number, and within `bounds` unless null.
  Result<double> Number(std::string_view name, const Bounds& bounds) const {
    VIGIL_ASSIGN_OR_RETURN(const double v, Number(name));
    if (!std::isnan(v) && !bounds.Contains(v)) return Error(name, DescribeOutside(v, bounds));
    return v;
  }
  // As Int, and within `bounds`.
  Result<int> Int(std::string_view name, const Bounds& bounds) const {
    VIGIL_ASSIGN_OR_RETURN(const int v, Int(name));
    if (!bounds.Contains(v)) return Error(name, DescribeOutside(v, bounds));
    return v;
  }
  Result<int> Int(std::string_view name) const {
    VIGIL_ASSIGN_OR_RETURN(element e, Get(name, &element::is_number, "an integer"));
    if (e.type() == simdjson::dom::element_type::DOUBLE) return Error(name, "expected an integer");
    int64_t v = 0;
    if (e.get_int64().get(v) || v < std::numeric_limits<int>::min() ||
        v > std::numeric_limits<int>::max()) {
      return Error(name, "integer out of range");
    }
    return static_cast<int>(v);
  }
  Result<bool> Bool(std::string_view name) const {
    VIGIL_ASSIGN_OR_RETURN(element e, Get(name, &element::is_bool, "true or false"));
    return e.get_bool().value_unsafe();
  }
  // A number or null (empty).
  Result<std::optional<double>> OptionalNumber(std::string_view name, const Bounds& bounds) const {
    VIGIL_ASSIGN_OR_RETURN(const double v, Number(name, bounds));
    return std::isnan(v) ? std::nullopt : std::optional<double>(v);
  }
  bool Has(std::string_view name) const {
    element e;
    return !obj_.at_key(name).get(e);
  }
  Result<simdjson::dom::array> Array(std::string_view name) const {
    VIGIL_ASSIGN_OR_RETURN(element e, Get(name, &element::is_array, "an array"));
    return e.get_array().value_unsafe();
  }
  // Calls `each(Fields)` for every element of the array `name`, each of which must be an object
  // (its path "<name>[i]"), and returns the first error.
  template <typename Each>
  Status ForEachObject(std::string_view name, Each&& each) const {
    VIGIL_ASSIGN_OR_RETURN(simdjson::dom::array items, Array(name));
    size_t i = 0;
    for (element item : items) {
      Fields g(item, fmt::format("{}[{}]", Path(name), i++));
      VIGIL_RETURN_IF_ERROR(g.CheckObject());
      VIGIL_RETURN_IF_ERROR(each(g));
    }
    return Status::Ok();
  }
  std::string Path(std::string_view name) const {
    return path_.empty() ? std::string(name) : fmt::format("{}.{}", path_, name);
  }

 private:
  Status Error(std::string_view name, std::string_view what) const {
    const std::string where = name.empty() ? path_ : Path(name);
    return Status::InvalidArgument(fmt::format("{}: {}", where.empty() ? "document" : where, what));
  }

  element obj_;
  std::string path_;
};

Result<Metric> MetricFrom(element j, const std::string& path) {
  Fields f(j, path);
  VIGIL_RETURN_IF_ERROR(f.CheckObject());
  Metric m;
  VIGIL_ASSIGN_OR_RETURN(std::string key, f.String("key"));
  Result<MetricKey> parsed = MetricKey::Parse(key);
  if (!parsed.ok()) return parsed.status().WithContext(f.Path("key"));
  m.key = std::move(parsed).value();
  VIGIL_ASSIGN_OR_RETURN(m.value, f.Number("value", kMetricValueBounds));
  VIGIL_ASSIGN_OR_RETURN(m.unit, f.String("unit"));
  VIGIL_ASSIGN_OR_RETURN(m.higher_is_better, f.Bool("higher_is_better"));
  VIGIL_ASSIGN_OR_RETURN(simdjson::dom::array samples, f.Array("samples"));
  size_t i = 0;
  for (element s : samples) {
    if (!s.is_number() && !s.is_null()) {
      return Status::InvalidArgument(
          fmt::format("{}[{}]: expected a number or null", f.Path("samples"), i));
    }
    const double v = s.is_null() ? kNull : s.get_double().value_unsafe();
    if (!std::isnan(v) && !kMetricValueBounds.Contains(v)) {
      return Status::InvalidArgument(
          fmt::format("{}[{}]: {}", f.Path("samples"), i, DescribeOutside(v, kMetricValueBounds)));
    }
    m.samples.push_back(v);
    ++i;
  }
  return m;
}

Result<BenchStatus> BenchStatusFromName(std::string_view name, const std::string& path) {
  for (BenchStatus s : {BenchStatus::kOk, BenchStatus::kFailed, BenchStatus::kSkipped}) {
    if (BenchStatusName(s) == name) return s;
  }
  return Status::InvalidArgument(
      fmt::format("{}: unknown status {} (expected ok, failed or skipped)", path, Quote(name)));
}

Result<BenchmarkRecord> BenchmarkRecordFrom(element j, const std::string& path) {
  Fields f(j, path);
  VIGIL_RETURN_IF_ERROR(f.CheckObject());
  BenchmarkRecord r;
  VIGIL_ASSIGN_OR_RETURN(r.name, f.String("name"));
  VIGIL_ASSIGN_OR_RETURN(r.component, f.String("component"));
  VIGIL_ASSIGN_OR_RETURN(std::string status, f.String("status"));
  VIGIL_ASSIGN_OR_RETURN(r.status, BenchStatusFromName(status, f.Path("status")));
  VIGIL_ASSIGN_OR_RETURN(r.return_code, f.Int("return_code"));
  VIGIL_ASSIGN_OR_RETURN(r.error, f.String("error"));
  VIGIL_ASSIGN_OR_RETURN(r.duration_s, f.Number("duration_s", kBenchDurationBounds));
  VIGIL_ASSIGN_OR_RETURN(simdjson::dom::array metrics, f.Array("metrics"));
  size_t i = 0;
  for (element m : metrics) {
    VIGIL_ASSIGN_OR_RETURN(Metric metric,
                           MetricFrom(m, fmt::format("{}[{}]", f.Path("metrics"), i++)));
    r.metrics.push_back(std::move(metric));
  }
  return r;
}

Result<Inventory> InventoryFrom(element j, const std::string& path) {
  Fields f(j, path);
  VIGIL_RETURN_IF_ERROR(f.CheckObject());
  Inventory inv;
  VIGIL_ASSIGN_OR_RETURN(inv.hostname, f.String("hostname"));
  VIGIL_ASSIGN_OR_RETURN(inv.cpu_model, f.String("cpu_model"));
  VIGIL_ASSIGN_OR_RETURN(inv.sockets, f.Int("sockets", kSocketsBounds));
  VIGIL_ASSIGN_OR_RETURN(inv.cores, f.Int("cores", kCpusBounds));
  VIGIL_ASSIGN_OR_RETURN(inv.threads, f.Int("threads", kCpusBounds));
  VIGIL_ASSIGN_OR_RETURN(inv.numa_nodes, f.Int("numa_nodes", kNumaNodesBounds));
  VIGIL_ASSIGN_OR_RETURN(simdjson::dom::array ext, f.Array("cpu_vector_extensions"));
  size_t i = 0;
  for (element e : ext) {
    std::string_view name;
    if (e.get_string().get(name)) {
      return Status::InvalidArgument(
          fmt::format("{}[{}]: expected a string", f.Path("cpu_vector_extensions"), i));
    }
    inv.cpu_vector_extensions.emplace_back(name);
    ++i;
  }
  VIGIL_ASSIGN_OR_RETURN(inv.memory_bytes, f.Number("memory_bytes", kMemoryBytesBounds));
  VIGIL_ASSIGN_OR_RETURN(inv.kernel, f.String("kernel"));
  VIGIL_ASSIGN_OR_RETURN(inv.os, f.String("os"));
  VIGIL_ASSIGN_OR_RETURN(inv.gpu_driver, f.String("gpu_driver"));
  VIGIL_RETURN_IF_ERROR(f.ForEachObject("gpus", [&](const Fields& g) -> Status {
    GpuInfo& info = inv.gpus.emplace_back();
    VIGIL_ASSIGN_OR_RETURN(info.index, g.Int("index", kGpuIndexBounds));
    VIGIL_ASSIGN_OR_RETURN(info.name, g.String("name"));
    VIGIL_ASSIGN_OR_RETURN(info.bus_id, g.String("bus_id"));
    return Status::Ok();
  }));
  if (!f.Has("pci_gpus")) return inv;  // documents written before Vigil read PCI
  VIGIL_RETURN_IF_ERROR(f.ForEachObject("pci_gpus", [&](const Fields& g) -> Status {
    PciGpuInfo& info = inv.pci_gpus.emplace_back();
    VIGIL_ASSIGN_OR_RETURN(info.bus_id, g.String("bus_id"));
    VIGIL_ASSIGN_OR_RETURN(info.driver, g.String("driver"));
    VIGIL_ASSIGN_OR_RETURN(info.link_width, g.OptionalNumber("link_width", kLinkWidthBounds));
    VIGIL_ASSIGN_OR_RETURN(info.link_width_max,
                           g.OptionalNumber("link_width_max", kLinkWidthBounds));
    VIGIL_ASSIGN_OR_RETURN(info.link_speed_gts,
                           g.OptionalNumber("link_speed_gts", kLinkSpeedBounds));
    VIGIL_ASSIGN_OR_RETURN(info.link_speed_max_gts,
                           g.OptionalNumber("link_speed_max_gts", kLinkSpeedBounds));
    return Status::Ok();
  }));
  return inv;
}

Result<NodeResults> NodeResultsFrom(element json) {
  Fields f(json, "");
  VIGIL_RETURN_IF_ERROR(f.CheckObject());
  VIGIL_ASSIGN_OR_RETURN(std::string schema, f.String("schema"));
  if (schema != kResultsSchema) {
    return Status::InvalidArgument(
        fmt::format("schema: {} is not a Vigil results document of this version (expected {})",
                    Quote(schema), Quote(kResultsSchema)));
  }
  NodeResults doc;
  VIGIL_ASSIGN_OR_RETURN(doc.node, f.String("node"));
  VIGIL_ASSIGN_OR_RETURN(doc.vigil_version, f.String("vigil_version"));
  VIGIL_ASSIGN_OR_RETURN(doc.suite, f.String("suite"));
  VIGIL_ASSIGN_OR_RETURN(doc.start_time, f.String("start_time"));
  VIGIL_ASSIGN_OR_RETURN(doc.end_time, f.String("end_time"));
  VIGIL_ASSIGN_OR_RETURN(element inv, f.Get("inventory", &element::is_object, "an object"));
  VIGIL_ASSIGN_OR_RETURN(doc.inventory, InventoryFrom(inv, "inventory"));
  VIGIL_ASSIGN_OR_RETURN(simdjson::dom::array benches, f.Array("benchmarks"));
  size_t i = 0;
  for (element b : benches) {
    VIGIL_ASSIGN_OR_RETURN(BenchmarkRecord r,
                           BenchmarkRecordFrom(b, fmt::format("benchmarks[{}]", i++)));
    doc.benchmarks.push_back(std::move(r));
  }
  return doc;
}

// Parses JSON text with simdjson, many times faster than nlohmann on a 66 KB document (the fleet
// service reads one per upload). Python's NaN and Infinity are read as null, as ParseJson reads
// them.
simdjson::error_code ParseDom(simdjson::dom::parser& parser, std::string_view text, element& root) {
  simdjson::error_code e = parser.parse(text.data(), text.size()).get(root);
  if (e) {
    if (std::string fixed = PythonNonFiniteAsNull(text); !fixed.empty()) {
      e = parser.parse(fixed).get(root);  // the parser keeps its own padded copy of `fixed`
    }
  }
  return e;
}

// As ParseDom; text that is not JSON is reported by ParseJson, which names the line and column.
Result<element> ParseDomOrExplain(simdjson::dom::parser& parser, std::string_view text,
                                  std::string_view source) {
  element root;
  const simdjson::error_code e = ParseDom(parser, text, root);
  if (!e) return root;
  Result<Json> json = ParseJson(text, source);
  if (!json.ok()) return json.status();
  return Status::InvalidArgument(
      fmt::format("{}: not valid JSON ({})", source, simdjson::error_message(e)));
}

template <typename T>
Result<T> ParseWith(std::string_view text, std::string_view source, Result<T> (*from)(element)) {
  simdjson::dom::parser parser;
  VIGIL_ASSIGN_OR_RETURN(element root, ParseDomOrExplain(parser, text, source));
  Result<T> r = from(root);
  if (!r.ok()) return r.status().WithContext(source);
  return r;
}

}  // namespace

std::string_view BenchStatusName(BenchStatus status) {
  switch (status) {
    case BenchStatus::kOk:
      return "ok";
    case BenchStatus::kFailed:
      return "failed";
    case BenchStatus::kSkipped:
      return "skipped";
  }
  return "unknown";
}

std::vector<std::string> BenchmarksRun(const NodeResults& doc) {
  std::vector<std::string> out;
  for (const BenchmarkRecord& r : doc.benchmarks) {
    if (r.status != BenchStatus::kSkipped) out.push_back(r.name);
  }
  return out;
}

Json ToJson(const NodeResults& doc) {
  Json benches = Json::array();
  for (const BenchmarkRecord& r : doc.benchmarks) benches.push_back(ToJson(r));
  return Json{{"schema", kResultsSchema},           {"node", doc.node},
              {"vigil_version", doc.vigil_version}, {"suite", doc.suite},
              {"start_time", doc.start_time},       {"end_time", doc.end_time},
              {"inventory", ToJson(doc.inventory)}, {"benchmarks", std::move(benches)}};
}

Result<NodeResults> ParseNodeResults(std::string_view text, std::string_view source) {
  return ParseWith<NodeResults>(text, source, &NodeResultsFrom);
}

Result<std::optional<NodeResults>> ParseIfResultsDocument(std::string_view text,
                                                          std::string_view source) {
  simdjson::dom::parser parser;
  element root;
  if (ParseDom(parser, text, root) || !root.is_object() || root.at_key("schema").error()) {
    return std::optional<NodeResults>();
  }
  Result<NodeResults> doc = NodeResultsFrom(root);
  if (!doc.ok()) return doc.status().WithContext(source);
  return std::optional<NodeResults>(std::move(doc).value());
}

Result<BenchmarkRecord> ParseBenchmarkRecord(std::string_view text, std::string_view source) {
  return ParseWith<BenchmarkRecord>(text, source,
                                    [](element e) { return BenchmarkRecordFrom(e, "record"); });
}

Result<NodeResults> ReadNodeResults(const std::string& path) {
  VIGIL_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseNodeResults(text, path);
}

Status WriteNodeResults(const std::string& path, const NodeResults& doc) {
  return WriteFileAtomic(path, DumpJson(ToJson(doc), 2) + "\n");
}

}  // namespace vigil
