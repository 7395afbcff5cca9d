#include "vigil/bench/cuda/periodic_thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace vigil {
namespace {

TEST(PeriodicThreadTest, CallsAtOnceAndStopsPromptly) {
  std::atomic<int> calls{0};
  {
    const PeriodicThread t(std::chrono::milliseconds(1), [&] { ++calls; });
    while (calls.load() < 3) std::this_thread::yield();
  }
  const int seen = calls.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(calls.load(), seen);  // no call after the destructor returned
  // A long period: the first call comes at once, and the destructor does not wait out the hour.
  std::atomic<int> once{0};
  const auto t0 = std::chrono::steady_clock::now();
  {
    const PeriodicThread t(std::chrono::hours(1), [&] { ++once; });
    while (once.load() == 0) std::this_thread::yield();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  EXPECT_EQ(once.load(), 1);
}

}  // namespace
}  // namespace vigil
