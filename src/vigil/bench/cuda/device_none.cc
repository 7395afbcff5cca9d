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
Result<std::vector<double>> TimeGemm(int, GemmType, int, int) { return NoCuda(); }
Result<double> GemmError(int, GemmType, int) { return NoCuda(); }
Result<std::vector<double>> TimeCollective(const std::vector<int>&, Collective, size_t, int) {
  return NoCuda();
}
Status CheckAllReduce(const std::vector<int>&, size_t) { return NoCuda(); }
Result<StressRun> Stress(int, GemmType, int, double, const std::function<void()>&) {
  return NoCuda();
}

}  // namespace vigil::gpu
