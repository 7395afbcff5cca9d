#include "vigil/results/document.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "vigil/core/file.h"
#include "vigil/core/json.h"
#include "vigil/core/text.h"

namespace vigil {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

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
              {"gpus", std::move(gpus)}};
}

// Typed access to the fields of a JSON object, with errors that name the field's path.
class Fields {
 public:
  Fields(const Json& obj, std::string path) : obj_(obj), path_(std::move(path)) {}

  Status CheckObject() const {
    return obj_.is_object() ? Status::Ok() : Error("", "expected an object");
  }

  Result<const Json*> Get(std::string_view name, bool (Json::*is_type)() const noexcept,
                          std::string_view type) const {
    const auto it = obj_.find(name);
    if (it == obj_.end()) return Error(name, "missing");
    if (!((*it).*is_type)()) return Error(name, fmt::format("expected {}", type));
    return &*it;
  }

  Result<std::string> String(std::string_view name) const {
    VIGIL_ASSIGN_OR_RETURN(const Json* j, Get(name, &Json::is_string, "a string"));
    return j->get<std::string>();
  }
  // A number, or null for a missing figure (NaN).
  Result<double> Number(std::string_view name) const {
    const auto it = obj_.find(name);
    if (it != obj_.end() && it->is_null()) return kNaN;
    VIGIL_ASSIGN_OR_RETURN(const Json* j, Get(name, &Json::is_number, "a number"));
    return j->get<double>();
  }
  Result<int> Int(std::string_view name) const {
    VIGIL_ASSIGN_OR_RETURN(const Json* j, Get(name, &Json::is_number_integer, "an integer"));
    const auto v = j->get<int64_t>();
    if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) {
      return Error(name, "integer out of range");
    }
    return static_cast<int>(v);
  }
  Result<bool> Bool(std::string_view name) const {
    VIGIL_ASSIGN_OR_RETURN(const Json* j, Get(name, &Json::is_boolean, "true or false"));
    return j->get<bool>();
  }
  Result<const Json*> Array(std::string_view name) const {
    return Get(name, &Json::is_array, "an array");
  }
  Result<const Json*> Object(std::string_view name) const {
    return Get(name, &Json::is_object, "an object");
  }
  std::string Path(std::string_view name) const {
    return path_.empty() ? std::string(name) : fmt::format("{}.{}", path_, name);
  }

 private:
  Status Error(std::string_view name, std::string_view what) const {
    const std::string where = name.empty() ? path_ : Path(name);
    return Status::InvalidArgument(fmt::format("{}: {}", where.empty() ? "document" : where, what));
  }

  const Json& obj_;
  std::string path_;
};

Result<Metric> MetricFromJson(const Json& j, const std::string& path) {
  Fields f(j, path);
  VIGIL_RETURN_IF_ERROR(f.CheckObject());
  Metric m;
  VIGIL_ASSIGN_OR_RETURN(std::string key, f.String("key"));
  Result<MetricKey> parsed = MetricKey::Parse(key);
  if (!parsed.ok()) return parsed.status().WithContext(f.Path("key"));
  m.key = std::move(parsed).value();
  VIGIL_ASSIGN_OR_RETURN(m.value, f.Number("value"));
  VIGIL_ASSIGN_OR_RETURN(m.unit, f.String("unit"));
  VIGIL_ASSIGN_OR_RETURN(m.higher_is_better, f.Bool("higher_is_better"));
  VIGIL_ASSIGN_OR_RETURN(const Json* samples, f.Array("samples"));
  for (size_t i = 0; i < samples->size(); ++i) {
    const Json& s = (*samples)[i];
    if (!s.is_number() && !s.is_null()) {
      return Status::InvalidArgument(
          fmt::format("{}[{}]: expected a number or null", f.Path("samples"), i));
    }
    m.samples.push_back(s.is_null() ? kNaN : s.get<double>());
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

}  // namespace

Result<BenchmarkRecord> BenchmarkRecordFromJson(const Json& j, const std::string& path) {
  Fields f(j, path);
  VIGIL_RETURN_IF_ERROR(f.CheckObject());
  BenchmarkRecord r;
  VIGIL_ASSIGN_OR_RETURN(r.name, f.String("name"));
  VIGIL_ASSIGN_OR_RETURN(r.component, f.String("component"));
  VIGIL_ASSIGN_OR_RETURN(std::string status, f.String("status"));
  VIGIL_ASSIGN_OR_RETURN(r.status, BenchStatusFromName(status, f.Path("status")));
  VIGIL_ASSIGN_OR_RETURN(r.return_code, f.Int("return_code"));
  VIGIL_ASSIGN_OR_RETURN(r.error, f.String("error"));
  VIGIL_ASSIGN_OR_RETURN(r.duration_s, f.Number("duration_s"));
  VIGIL_ASSIGN_OR_RETURN(const Json* metrics, f.Array("metrics"));
  for (size_t i = 0; i < metrics->size(); ++i) {
    VIGIL_ASSIGN_OR_RETURN(
        Metric m, MetricFromJson((*metrics)[i], fmt::format("{}[{}]", f.Path("metrics"), i)));
    r.metrics.push_back(std::move(m));
  }
  return r;
}

namespace {

Result<Inventory> InventoryFromJson(const Json& j, const std::string& path) {
  Fields f(j, path);
  Inventory inv;
  VIGIL_ASSIGN_OR_RETURN(inv.hostname, f.String("hostname"));
  VIGIL_ASSIGN_OR_RETURN(inv.cpu_model, f.String("cpu_model"));
  VIGIL_ASSIGN_OR_RETURN(inv.sockets, f.Int("sockets"));
  VIGIL_ASSIGN_OR_RETURN(inv.cores, f.Int("cores"));
  VIGIL_ASSIGN_OR_RETURN(inv.threads, f.Int("threads"));
  VIGIL_ASSIGN_OR_RETURN(inv.numa_nodes, f.Int("numa_nodes"));
  VIGIL_ASSIGN_OR_RETURN(const Json* ext, f.Array("cpu_vector_extensions"));
  for (size_t i = 0; i < ext->size(); ++i) {
    if (!(*ext)[i].is_string()) {
      return Status::InvalidArgument(
          fmt::format("{}[{}]: expected a string", f.Path("cpu_vector_extensions"), i));
    }
    inv.cpu_vector_extensions.push_back((*ext)[i].get<std::string>());
  }
  VIGIL_ASSIGN_OR_RETURN(inv.memory_bytes, f.Number("memory_bytes"));
  VIGIL_ASSIGN_OR_RETURN(inv.kernel, f.String("kernel"));
  VIGIL_ASSIGN_OR_RETURN(inv.os, f.String("os"));
  VIGIL_ASSIGN_OR_RETURN(inv.gpu_driver, f.String("gpu_driver"));
  VIGIL_ASSIGN_OR_RETURN(const Json* gpus, f.Array("gpus"));
  for (size_t i = 0; i < gpus->size(); ++i) {
    Fields g((*gpus)[i], fmt::format("{}[{}]", f.Path("gpus"), i));
    VIGIL_RETURN_IF_ERROR(g.CheckObject());
    GpuInfo info;
    VIGIL_ASSIGN_OR_RETURN(info.index, g.Int("index"));
    VIGIL_ASSIGN_OR_RETURN(info.name, g.String("name"));
    VIGIL_ASSIGN_OR_RETURN(info.bus_id, g.String("bus_id"));
    inv.gpus.push_back(std::move(info));
  }
  return inv;
}

Result<NodeResults> FromJsonNoContext(const Json& json) {
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
  VIGIL_ASSIGN_OR_RETURN(const Json* inv, f.Object("inventory"));
  VIGIL_ASSIGN_OR_RETURN(doc.inventory, InventoryFromJson(*inv, "inventory"));
  VIGIL_ASSIGN_OR_RETURN(const Json* benches, f.Array("benchmarks"));
  for (size_t i = 0; i < benches->size(); ++i) {
    VIGIL_ASSIGN_OR_RETURN(BenchmarkRecord r, BenchmarkRecordFromJson(
                                                  (*benches)[i], fmt::format("benchmarks[{}]", i)));
    doc.benchmarks.push_back(std::move(r));
  }
  return doc;
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

Json ToJson(const NodeResults& doc) {
  Json benches = Json::array();
  for (const BenchmarkRecord& r : doc.benchmarks) benches.push_back(ToJson(r));
  return Json{{"schema", kResultsSchema},           {"node", doc.node},
              {"vigil_version", doc.vigil_version}, {"suite", doc.suite},
              {"start_time", doc.start_time},       {"end_time", doc.end_time},
              {"inventory", ToJson(doc.inventory)}, {"benchmarks", std::move(benches)}};
}

Result<NodeResults> NodeResultsFromJson(const Json& json, std::string_view source) {
  Result<NodeResults> r = FromJsonNoContext(json);
  if (!r.ok()) return r.status().WithContext(source);
  return r;
}

Result<NodeResults> ReadNodeResults(const std::string& path) {
  VIGIL_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  VIGIL_ASSIGN_OR_RETURN(Json json, ParseJson(text, path));
  return NodeResultsFromJson(json, path);
}

Status WriteNodeResults(const std::string& path, const NodeResults& doc) {
  return WriteFileAtomic(path, DumpJson(ToJson(doc), 2) + "\n");
}

}  // namespace vigil
