#include "vigil/core/parallel.h"

#include <algorithm>
#include <thread>
#include <vector>

namespace vigil {

size_t WorkerCount(size_t items, size_t grain, int requested) {
  if (requested > 0) return static_cast<size_t>(requested);
  const size_t hardware = std::max(1u, std::thread::hardware_concurrency());
  return std::clamp<size_t>(items / std::max<size_t>(grain, 1), 1, hardware);
}

void RunWorkers(size_t workers, const std::function<void(size_t worker)>& fn) {
  std::vector<std::thread> pool;
  for (size_t w = 1; w < workers; ++w) pool.emplace_back(fn, w);
  if (workers > 0) fn(0);
  for (std::thread& t : pool) t.join();
}

}  // namespace vigil
