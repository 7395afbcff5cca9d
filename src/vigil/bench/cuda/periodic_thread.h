// A thread that does something every so often (gpu-stress reads NVML with one) while other
// threads work.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

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
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;   // guarded by mu_
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace vigil
