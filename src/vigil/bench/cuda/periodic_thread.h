// A thread that does something every so often (gpu-stress reads NVML with one) while other
// threads work.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

#include "vigil/core/mutex.h"

namespace vigil {

// Calls `fn` on a thread of its own at once and then every `period` until destroyed; the
// destructor wakes the thread and waits for a call in progress to end. `fn` must not throw.
class PeriodicThread {
 public:
  PeriodicThread(std::chrono::duration<double> period, std::function<void()> fn);
  ~PeriodicThread();
  PeriodicThread(const PeriodicThread&) = delete;
  PeriodicThread& operator=(const PeriodicThread&) = delete;

 private:
  // Calls `fn` every `period` until stop_.
  void Loop(std::chrono::duration<double> period, const std::function<void()>& fn) EXCLUDES(mu_);

  Mutex mu_;
  CondVar cv_;
  bool stop_ GUARDED_BY(mu_) = false;
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace vigil
