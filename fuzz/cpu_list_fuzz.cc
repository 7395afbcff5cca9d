// Lists of indices from outside: CPU lists from sysfs, which containers and VMs fake in odd ways,
// and GPU lists from CUDA_VISIBLE_DEVICES, which schedulers write. Never a crash; a GPU list that
// parses holds distinct non-negative indices.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "vigil/bench/cpu/topology.h"
#include "vigil/bench/cuda/nvml.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)vigil::ParseCpuList(text);
  vigil::Result<std::vector<int>> gpus = vigil::nvml::GpusOfCudaVisibleDevices(text);
  if (gpus.ok()) {
    std::vector<int> sorted = *gpus;
    std::sort(sorted.begin(), sorted.end());
    if (sorted.empty() || sorted.front() < 0 ||
        std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
      std::abort();
    }
  }
  return 0;
}
