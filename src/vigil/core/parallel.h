// Splitting independent work (lines of a file, nodes of a fleet) over threads.
#pragma once

#include <cstddef>
#include <functional>
#include <utility>

namespace vigil {

// Threads for `items` units of work: `requested` when positive; otherwise one per `grain` units
// (below that, starting a thread costs more than it saves), at least one and at most the
// hardware's count.
size_t WorkerCount(size_t items, size_t grain, int requested);

// Runs fn(worker) for every worker in [0, workers), each on a thread of its own (worker 0 on the
// caller's), and returns when all have finished.
void RunWorkers(size_t workers, const std::function<void(size_t worker)>& fn);

// The part of [0, items) that worker `w` of `workers` takes: consecutive, disjoint, covering.
inline std::pair<size_t, size_t> ShareOf(size_t items, size_t w, size_t workers) {
  return {items * w / workers, items * (w + 1) / workers};
}

}  // namespace vigil
