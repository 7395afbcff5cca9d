#include "vigil/bench/cuda/nvml.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "vigil/bench/cuda/dynamic_library.h"
#include "vigil/core/text.h"

namespace vigil::nvml {

using gpu::Resolve;

// The part of NVML's C ABI Vigil calls: every function returns an nvmlReturn_t (an int), devices
// are opaque pointers, and the enum arguments are ints.
struct Library::Api {
  using Device = struct nvmlDevice_st*;
  // nvmlTemperature_v1_t: {version, sensorType, temperature}.
  struct TemperatureV1 {
    unsigned version = 0;
    int sensor = 0;
    int celsius = 0;
  };
  // nvmlPciInfo_t (nvmlDeviceGetPciInfo_v3): the bus id in both of NVML's spellings.
  struct PciInfo {
    char bus_id_legacy[16];
    unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
  };
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  const char* (*error_string)(int) = nullptr;
  int (*count)(unsigned*) = nullptr;
  int (*handle)(unsigned, Device*) = nullptr;
  int (*name)(Device, char*, unsigned) = nullptr;
  int (*temperature)(Device, int, unsigned*) = nullptr;  // deprecated in CUDA 13's NVML
  int (*temperature_v)(Device, TemperatureV1*) = nullptr;
  int (*pci_info)(Device, PciInfo*) = nullptr;
  int (*power)(Device, unsigned*) = nullptr;
  int (*pcie_gen)(Device, unsigned*) = nullptr;
  int (*pcie_gen_max)(Device, unsigned*) = nullptr;
  int (*pcie_width)(Device, unsigned*) = nullptr;
  int (*pcie_width_max)(Device, unsigned*) = nullptr;
  int (*ecc)(Device, int, int, unsigned long long*) = nullptr;
  int (*remapped_rows)(Device, unsigned*, unsigned*, unsigned*, unsigned*) = nullptr;
  int (*retired_pending)(Device, int*) = nullptr;
  int (*throttle)(Device, unsigned long long*) = nullptr;
};

namespace {

// nvmlReturn_t values.
constexpr int kSuccess = 0;
constexpr int kInvalidArgument = 2;
constexpr int kNotSupported = 3;
constexpr int kNoPermission = 4;
constexpr int kNotFound = 6;
constexpr int kFunctionNotFound = 13;
constexpr int kArgumentVersionMismatch = 25;

// NVML_STRUCT_VERSION(Temperature, 1): the struct's size and its version in the top byte.
constexpr unsigned kTemperatureV1 = sizeof(Library::Api::TemperatureV1) | (1u << 24);

// Whether `rc` says a field is not there to read on this GPU or driver, rather than that the GPU
// failed: not supported, no permission, a function or struct version the driver lacks, no such
// sensor (invalid argument, not found).
bool FieldAbsent(int rc) {
  return rc == kNotSupported || rc == kNoPermission || rc == kFunctionNotFound ||
         rc == kArgumentVersionMismatch || rc == kInvalidArgument || rc == kNotFound;
}

// nvmlTemperatureSensors_t, nvmlMemoryErrorType_t and nvmlEccCounterType_t values.
constexpr int kTemperatureGpu = 0;
constexpr int kCorrected = 0, kUncorrected = 1;
constexpr int kVolatile = 0, kAggregate = 1;

// Calls one NVML query of GPU `index`: true when it answered, false when this GPU or driver does
// not support it (or the process may not ask), an error naming the call otherwise.
template <typename Fn, typename... Args>
Result<bool> Query(const Library::Api& api, int index, Fn fn, const char* name, Args... args) {
  if (fn == nullptr) return false;
  const int rc = fn(args...);
  if (rc == kSuccess) return true;
  if (FieldAbsent(rc)) return false;
  return Status::Internal(fmt::format("{}(GPU {}): {}", name, index, api.error_string(rc)));
}

}  // namespace

Library::Library(void* handle, std::unique_ptr<Api> api) : handle_(handle), api_(std::move(api)) {}

Library::~Library() {
  api_->shutdown();
  dlclose(handle_);
}

Result<std::unique_ptr<Library>> Library::Load(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    return Status::Unavailable(
        fmt::format("no NVIDIA driver: cannot load {} ({})", path, dlerror()));
  }
  auto api = std::make_unique<Api>();
  Resolve(handle, api->init, "nvmlInit_v2");
  Resolve(handle, api->shutdown, "nvmlShutdown");
  Resolve(handle, api->error_string, "nvmlErrorString");
  Resolve(handle, api->count, "nvmlDeviceGetCount_v2");
  Resolve(handle, api->handle, "nvmlDeviceGetHandleByIndex_v2");
  if (!api->init || !api->shutdown || !api->error_string || !api->count || !api->handle) {
    dlclose(handle);
    return Status::Unavailable(fmt::format("{} lacks NVML's entry points", path));
  }
  Resolve(handle, api->name, "nvmlDeviceGetName");
  Resolve(handle, api->temperature, "nvmlDeviceGetTemperature");
  Resolve(handle, api->temperature_v, "nvmlDeviceGetTemperatureV");
  Resolve(handle, api->pci_info, "nvmlDeviceGetPciInfo_v3");
  Resolve(handle, api->power, "nvmlDeviceGetPowerUsage");
  Resolve(handle, api->pcie_gen, "nvmlDeviceGetCurrPcieLinkGeneration");
  Resolve(handle, api->pcie_gen_max, "nvmlDeviceGetMaxPcieLinkGeneration");
  Resolve(handle, api->pcie_width, "nvmlDeviceGetCurrPcieLinkWidth");
  Resolve(handle, api->pcie_width_max, "nvmlDeviceGetMaxPcieLinkWidth");
  Resolve(handle, api->ecc, "nvmlDeviceGetTotalEccErrors");
  Resolve(handle, api->remapped_rows, "nvmlDeviceGetRemappedRows");
  Resolve(handle, api->retired_pending, "nvmlDeviceGetRetiredPagesPendingStatus");
  // Renamed "clocks event reasons" in recent drivers, which keep the old name as well.
  Resolve(handle, api->throttle, "nvmlDeviceGetCurrentClocksEventReasons");
  if (api->throttle == nullptr) {
    Resolve(handle, api->throttle, "nvmlDeviceGetCurrentClocksThrottleReasons");
  }
  const int rc = api->init();
  if (rc != kSuccess) {
    const std::string why = api->error_string(rc);
    dlclose(handle);
    return Status::Unavailable(fmt::format("NVML does not start: {}", why));
  }
  return std::unique_ptr<Library>(new Library(handle, std::move(api)));
}

Result<int> Library::DeviceCount() const {
  unsigned n = 0;
  const int rc = api_->count(&n);
  if (rc != kSuccess) {
    return Status::Internal(fmt::format("nvmlDeviceGetCount: {}", api_->error_string(rc)));
  }
  return static_cast<int>(n);
}

Result<HealthReading> Library::Read(int index) const {
  const Api& a = *api_;
  Api::Device dev = nullptr;
  if (const int rc = a.handle(static_cast<unsigned>(index), &dev); rc != kSuccess) {
    return Status::Internal(
        fmt::format("nvmlDeviceGetHandleByIndex(GPU {}): {}", index, a.error_string(rc)));
  }
  HealthReading r;
  char name[96] = {};
  VIGIL_ASSIGN_OR_RETURN(bool ok,
                         Query(a, index, a.name, "nvmlDeviceGetName", dev, name, sizeof name));
  if (ok) r.name = name;

  // The queries that answer one unsigned int, stored as a double.
  const auto uint_query = [&](auto fn, const char* what, std::optional<double>& out,
                              double scale) -> Status {
    unsigned v = 0;
    VIGIL_ASSIGN_OR_RETURN(const bool answered, Query(a, index, fn, what, dev, &v));
    if (answered) out = v * scale;
    return Status::Ok();
  };
  // nvmlDeviceGetTemperatureV where the driver has it (the other is deprecated since CUDA 13).
  if (a.temperature_v != nullptr) {
    Api::TemperatureV1 t;
    t.version = kTemperatureV1;
    t.sensor = kTemperatureGpu;
    VIGIL_ASSIGN_OR_RETURN(ok,
                           Query(a, index, a.temperature_v, "nvmlDeviceGetTemperatureV", dev, &t));
    if (ok) r.temperature_c = t.celsius;
  }
  if (!r.temperature_c) {
    unsigned temperature = 0;
    VIGIL_ASSIGN_OR_RETURN(ok, Query(a, index, a.temperature, "nvmlDeviceGetTemperature", dev,
                                     kTemperatureGpu, &temperature));
    if (ok) r.temperature_c = temperature;
  }
  VIGIL_RETURN_IF_ERROR(uint_query(a.power, "nvmlDeviceGetPowerUsage", r.power_w, 1e-3));
  VIGIL_RETURN_IF_ERROR(
      uint_query(a.pcie_gen, "nvmlDeviceGetCurrPcieLinkGeneration", r.pcie_gen, 1));
  VIGIL_RETURN_IF_ERROR(
      uint_query(a.pcie_gen_max, "nvmlDeviceGetMaxPcieLinkGeneration", r.pcie_gen_max, 1));
  VIGIL_RETURN_IF_ERROR(
      uint_query(a.pcie_width, "nvmlDeviceGetCurrPcieLinkWidth", r.pcie_width, 1));
  VIGIL_RETURN_IF_ERROR(
      uint_query(a.pcie_width_max, "nvmlDeviceGetMaxPcieLinkWidth", r.pcie_width_max, 1));

  const auto ecc = [&](int type, int counter, std::optional<double>& out) -> Status {
    unsigned long long v = 0;
    VIGIL_ASSIGN_OR_RETURN(
        const bool answered,
        Query(a, index, a.ecc, "nvmlDeviceGetTotalEccErrors", dev, type, counter, &v));
    if (answered) out = static_cast<double>(v);
    return Status::Ok();
  };
  VIGIL_RETURN_IF_ERROR(ecc(kCorrected, kVolatile, r.ecc_corrected_volatile));
  VIGIL_RETURN_IF_ERROR(ecc(kUncorrected, kVolatile, r.ecc_uncorrected_volatile));
  VIGIL_RETURN_IF_ERROR(ecc(kCorrected, kAggregate, r.ecc_corrected_aggregate));
  VIGIL_RETURN_IF_ERROR(ecc(kUncorrected, kAggregate, r.ecc_uncorrected_aggregate));

  unsigned corrected = 0, uncorrected = 0, pending = 0, failure = 0;
  VIGIL_ASSIGN_OR_RETURN(ok, Query(a, index, a.remapped_rows, "nvmlDeviceGetRemappedRows", dev,
                                   &corrected, &uncorrected, &pending, &failure));
  if (ok) {
    r.remapped_rows_corrected = corrected;
    r.remapped_rows_uncorrected = uncorrected;
    r.row_remap_pending = pending != 0;
    r.row_remap_failure = failure != 0;
  } else {
    int retired = 0;
    VIGIL_ASSIGN_OR_RETURN(ok, Query(a, index, a.retired_pending,
                                     "nvmlDeviceGetRetiredPagesPendingStatus", dev, &retired));
    if (ok) r.retired_pages_pending = retired != 0;
  }
  unsigned long long reasons = 0;
  VIGIL_ASSIGN_OR_RETURN(
      ok, Query(a, index, a.throttle, "nvmlDeviceGetCurrentClocksEventReasons", dev, &reasons));
  if (ok) r.throttle_reasons = reasons;
  return r;
}

Result<std::string> Library::BusId(int index) const {
  const Api& a = *api_;
  Api::Device dev = nullptr;
  if (const int rc = a.handle(static_cast<unsigned>(index), &dev); rc != kSuccess) {
    return Status::Internal(
        fmt::format("nvmlDeviceGetHandleByIndex(GPU {}): {}", index, a.error_string(rc)));
  }
  if (a.pci_info == nullptr) {
    return Status::Unavailable("this driver's NVML lacks nvmlDeviceGetPciInfo_v3");
  }
  Api::PciInfo info{};
  if (const int rc = a.pci_info(dev, &info); rc != kSuccess) {
    return Status::Internal(
        fmt::format("nvmlDeviceGetPciInfo(GPU {}): {}", index, a.error_string(rc)));
  }
  // NVML's domain has 8 digits ("00000000:19:00.0"), sysfs's 4; the function of a GPU is 0.
  return fmt::format("{:04x}:{:02x}:{:02x}.0", info.domain, info.bus, info.device);
}

DriverGpus ReadDriverGpus(const std::string& path) {
  DriverGpus out;
  Result<std::unique_ptr<Library>> lib = Library::Load(path);
  if (!lib.ok()) {
    out.status = lib.status();
    return out;
  }
  Result<int> count = (*lib)->DeviceCount();
  if (!count.ok()) {
    out.status = Status::Unavailable(count.status().message());
    return out;
  }
  for (int i = 0; i < *count; ++i) {
    Result<std::string> id = (*lib)->BusId(i);
    if (id.ok()) {
      out.bus_ids.push_back(*std::move(id));
    } else {
      out.errors.push_back(id.status().message());
    }
  }
  return out;
}

Result<int> VisibleGpus(const std::string& path) {
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<Library> lib, Library::Load(path));
  VIGIL_ASSIGN_OR_RETURN(const int gpus, lib->DeviceCount());
  if (gpus == 0) return Status::Unavailable("NVML sees no GPU");
  return gpus;
}

Status CheckGpusExist(const std::vector<int>& gpus, const std::string& path) {
  int count = 0;
  Result<std::unique_ptr<Library>> lib = Library::Load(path);
  if (lib.ok()) {
    VIGIL_ASSIGN_OR_RETURN(count, (*lib)->DeviceCount());
  }
  for (const int g : gpus) {
    if (g >= 0 && g < count) continue;
    return Status::InvalidArgument(
        !lib.ok() ? fmt::format("GPU {} does not exist: {}", g, lib.status().message())
        : count == 0
            ? fmt::format("GPU {} does not exist: NVML sees no GPU", g)
            : fmt::format("GPU {} does not exist: this node has {} (0-{})", g, count, count - 1));
  }
  return Status::Ok();
}

Result<std::vector<int>> GpusOfCudaVisibleDevices(std::string_view visible) {
  std::vector<int> gpus;
  std::string_view rest = visible;
  while (true) {
    const size_t comma = rest.find(',');
    const std::string_view entry = rest.substr(0, comma);
    int index = -1;
    const auto [end, ec] = std::from_chars(entry.data(), entry.data() + entry.size(), index);
    if (entry.empty() || ec != std::errc() || end != entry.data() + entry.size() || index < 0) {
      return Status::InvalidArgument(
          fmt::format("{} is not a GPU index: Vigil numbers GPUs as nvidia-smi does; unset "
                      "CUDA_VISIBLE_DEVICES and choose GPUs with --gpus",
                      Quote(entry)));
    }
    if (std::find(gpus.begin(), gpus.end(), index) != gpus.end()) {
      return Status::InvalidArgument(fmt::format("GPU {} is listed twice", index));
    }
    gpus.push_back(index);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return gpus;
}

}  // namespace vigil::nvml
