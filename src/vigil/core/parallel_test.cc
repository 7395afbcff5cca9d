#include "vigil/core/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace vigil {
namespace {

TEST(ParallelTest, WorkerCount) {
  EXPECT_EQ(WorkerCount(1'000'000, 10, 3), 3u);  // asked for: given
  EXPECT_EQ(WorkerCount(5, 64, 0), 1u);          // too little work for a second thread
  const size_t hardware = std::max(1u, std::thread::hardware_concurrency());
  EXPECT_EQ(WorkerCount(1'000'000, 1, 0), hardware);
  EXPECT_EQ(WorkerCount(128, 64, 0), std::min<size_t>(2, hardware));
}

TEST(ParallelTest, SharesCoverEveryItemOnce) {
  for (size_t workers : {1u, 2u, 3u, 7u, 20u}) {
    std::vector<std::atomic<int>> seen(10);
    RunWorkers(workers, [&](size_t w) {
      const auto [begin, end] = ShareOf(seen.size(), w, workers);
      for (size_t i = begin; i < end; ++i) ++seen[i];
    });
    for (const auto& s : seen) EXPECT_EQ(s.load(), 1) << workers;
  }
}

}  // namespace
}  // namespace vigil
