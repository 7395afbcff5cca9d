// gpu-health: one reading of NVML's health counters per GPU, as metrics, so that the validator
// can flag a GPU whose ECC errors climb, whose rows cannot be remapped, whose PCIe link trained
// narrower than its peers', or whose clocks are held down by hardware. Nothing is measured: the
// figures are the driver's, read in well under a second.

#include <fmt/format.h>

#include "vigil/bench/cuda/gpu_benchmarks.h"

namespace vigil {
namespace {

void Add(std::vector<Metric>& out, int index, const char* metric,
         const std::optional<double>& value, const char* unit, bool higher_is_better) {
  if (value) out.push_back(PerGpu("gpu-health", metric, index, unit, higher_is_better, {*value}));
}

class GpuHealth : public Benchmark {
 public:
  std::string_view name() const override { return "gpu-health"; }
  std::string_view component() const override { return "gpu"; }
  std::string_view description() const override {
    return "NVML health per GPU: ECC errors, row remapping, PCIe link, power, temperature, "
           "throttling";
  }
  bool in_health_suite() const override { return true; }
  double time_limit_s(Suite suite) const override { return suite == Suite::kHealth ? 15 : 60; }

  Status Available(const BenchContext&) const override { return nvml::VisibleGpus().status(); }

  Result<std::vector<Metric>> Run(const BenchContext& ctx) const override {
    VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<nvml::Library> lib, nvml::Library::Load());
    VIGIL_ASSIGN_OR_RETURN(const int gpus, lib->DeviceCount());
    std::vector<Metric> out;
    for (const int i : ctx.Gpus(gpus)) {
      VIGIL_ASSIGN_OR_RETURN(const nvml::HealthReading r, lib->Read(i));
      std::vector<Metric> m = GpuHealthMetrics(i, r);
      out.insert(out.end(), std::make_move_iterator(m.begin()), std::make_move_iterator(m.end()));
    }
    return out;
  }
};

}  // namespace

std::vector<Metric> GpuHealthMetrics(int index, const nvml::HealthReading& r) {
  std::vector<Metric> out;
  Add(out, index, "ecc_corrected_volatile", r.ecc_corrected_volatile, "", false);
  Add(out, index, "ecc_uncorrected_volatile", r.ecc_uncorrected_volatile, "", false);
  Add(out, index, "ecc_corrected_aggregate", r.ecc_corrected_aggregate, "", false);
  Add(out, index, "ecc_uncorrected_aggregate", r.ecc_uncorrected_aggregate, "", false);
  Add(out, index, "remapped_rows_corrected", r.remapped_rows_corrected, "", false);
  Add(out, index, "remapped_rows_uncorrected", r.remapped_rows_uncorrected, "", false);
  Add(out, index, "row_remap_pending", r.row_remap_pending, "", false);
  Add(out, index, "row_remap_failure", r.row_remap_failure, "", false);
  Add(out, index, "retired_pages_pending", r.retired_pages_pending, "", false);
  // An idle GPU may train its link down to save power, so the current generation can read
  // below the maximum on a healthy GPU; the width stays.
  Add(out, index, "pcie_gen", r.pcie_gen, "", true);
  Add(out, index, "pcie_gen_max", r.pcie_gen_max, "", true);
  Add(out, index, "pcie_width", r.pcie_width, "lanes", true);
  Add(out, index, "pcie_width_max", r.pcie_width_max, "lanes", true);
  Add(out, index, "power_w", r.power_w, "W", false);
  Add(out, index, "temperature_c", r.temperature_c, "C", false);
  if (r.throttle_reasons) {
    const auto flag = [&](uint64_t bit) -> std::optional<double> {
      return (*r.throttle_reasons & bit) != 0 ? 1.0 : 0.0;
    };
    Add(out, index, "throttle_hw_slowdown", flag(nvml::throttle::kHwSlowdown), "", false);
    Add(out, index, "throttle_hw_thermal", flag(nvml::throttle::kHwThermal), "", false);
    Add(out, index, "throttle_hw_power_brake", flag(nvml::throttle::kHwPowerBrake), "", false);
    Add(out, index, "throttle_sw_thermal", flag(nvml::throttle::kSwThermal), "", false);
    Add(out, index, "throttle_sw_power_cap", flag(nvml::throttle::kSwPowerCap), "", false);
  }
  return out;
}

std::unique_ptr<Benchmark> MakeGpuHealthBenchmark() { return std::make_unique<GpuHealth>(); }

}  // namespace vigil
