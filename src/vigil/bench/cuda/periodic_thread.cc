#include "vigil/bench/cuda/periodic_thread.h"

#include <utility>

namespace vigil {

PeriodicThread::PeriodicThread(std::chrono::duration<double> period, std::function<void()> fn)
    : thread_([this, period, fn = std::move(fn)] {
        std::unique_lock lock(mu_);
        while (!stop_) {
          lock.unlock();
          fn();
          lock.lock();
          cv_.wait_for(lock, period, [this] { return stop_; });
        }
      }) {}

PeriodicThread::~PeriodicThread() {
  {
    const std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

}  // namespace vigil
