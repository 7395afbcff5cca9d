// The GPU device API of a Vigil built without CUDA (VIGIL_CUDA=OFF, or no nvcc at build time):
// the GPU benchmarks that need it are skipped with this reason.
#include "vigil/bench/cuda/device.h"

namespace vigil::gpu {
namespace {

Status NoCuda() {
  return Status::Unavailable(
      "this Vigil was built without CUDA (VIGIL_CUDA=OFF, or no nvcc at build time)");
}

}  // namespace

bool BuiltWithCuda() { return false; }
Result<int> DeviceCount() { return NoCuda(); }
Result<DeviceProps> Props(int) { return NoCuda(); }
Result<std::vector<double>> TimeMembw(int, MembwKernel, size_t, int) { return NoCuda(); }
Result<LaunchTimes> TimeLaunch(int, int, int) { return NoCuda(); }
Result<std::vector<double>> TimeCopies(const std::vector<CopyPath>&, size_t, int) {
  return NoCuda();
}
Result<bool> CanAccessPeer(int, int) { return NoCuda(); }
Result<std::vector<double>> TimeGemm(int, GemmType, int, int, double) { return NoCuda(); }
Result<double> GemmError(int, GemmType, int) { return NoCuda(); }
Result<StressRun> Stress(int, GemmType, int, double) { return NoCuda(); }
Result<MemtestRun> Memtest(int, size_t, double) { return NoCuda(); }

// Never made: Open and Join fail, so Time and CheckAllReduce have no object to be called on.
class Collectives::Impl {};
Collectives::~Collectives() = default;
Result<std::unique_ptr<Collectives>> Collectives::Open(const std::vector<int>&) { return NoCuda(); }
Result<std::string> NcclVersion() { return NoCuda(); }
Result<std::unique_ptr<Collectives>> Collectives::Join(const std::vector<int>&, int, int) {
  return NoCuda();
}
Result<std::vector<double>> Collectives::Time(Collective, size_t, int) { return NoCuda(); }
Result<std::vector<double>> Collectives::TimeFixed(Collective, size_t, int, int, int) {
  return NoCuda();
}
Status Collectives::CheckAllReduce(size_t) { return NoCuda(); }

}  // namespace vigil::gpu
