#include "vigil/bench/cuda/periodic_thread.h"

#include <utility>

namespace vigil {

PeriodicThread::PeriodicThread(std::chrono::duration<double> period, std::function<void()> fn)
    : thread_([this, period, fn = std::move(fn)] { Loop(period, fn); }) {}

PeriodicThread::~PeriodicThread() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  cv_.NotifyAll();
  thread_.join();
}

void PeriodicThread::Loop(std::chrono::duration<double> period, const std::function<void()>& fn) {
  mu_.Lock();
  while (!stop_) {
    mu_.Unlock();
    fn();
    mu_.Lock();
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::ceil<std::chrono::steady_clock::duration>(period);
    while (!stop_ && cv_.WaitUntil(mu_, deadline)) {
    }
  }
  mu_.Unlock();
}

}  // namespace vigil
