#include "vigil/core/mutex.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

namespace vigil {
namespace {

struct Counter {
  Mutex mu;
  int64_t value GUARDED_BY(mu) = 0;
};

TEST(MutexTest, MutexLockMakesIncrementsFromManyThreadsExact) {
  Counter c;
  constexpr int kThreads = 4, kEach = 10000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&c] {
      for (int i = 0; i < kEach; ++i) {
        MutexLock lock(c.mu);
        ++c.value;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  MutexLock lock(c.mu);
  EXPECT_EQ(c.value, int64_t{kThreads} * kEach);
}

TEST(CondVarTest, AWaiterSeesWhatTheNotifierWroteUnderTheMutex) {
  struct {
    Mutex mu;
    CondVar cv;
    bool ready GUARDED_BY(mu) = false;
  } s;
  std::thread notifier([&s] {
    MutexLock lock(s.mu);
    s.ready = true;
    s.cv.NotifyAll();
  });
  {
    MutexLock lock(s.mu);
    while (!s.ready) s.cv.Wait(s.mu);
    EXPECT_TRUE(s.ready);
  }
  notifier.join();
}

TEST(CondVarTest, WaitUntilReturnsFalseOnceTheDeadlinePassesWithNoNotification) {
  Mutex mu;
  CondVar cv;
  MutexLock lock(mu);
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::milliseconds(20);
  bool woken = true;
  while (woken) woken = cv.WaitUntil(mu, deadline);  // a spurious wake-up waits again
  EXPECT_GE(std::chrono::steady_clock::now(), deadline);
}

}  // namespace
}  // namespace vigil
