#include "vigil/bench/cuda/memtest.h"

#include <gtest/gtest.h>

#include <bitset>
#include <set>

namespace vigil::gpu {
namespace {

TEST(MemtestPatternTest, SolidAndAlternatingWordsFillEveryByte) {
  for (const uint64_t address : {uint64_t{0}, uint64_t{0x7f0000001008}}) {
    EXPECT_EQ(PatternWord(MemPattern::kZeros, address, 1), 0u);
    EXPECT_EQ(PatternWord(MemPattern::kOnes, address, 1), 0xffffffffffffffffu);
    EXPECT_EQ(PatternWord(MemPattern::kAA, address, 1), 0xaaaaaaaaaaaaaaaau);
    EXPECT_EQ(PatternWord(MemPattern::k55, address, 1), 0x5555555555555555u);
  }
  // 0xAA and 0x55 are each other's complement: every bit is written both ways.
  EXPECT_EQ(PatternWord(MemPattern::kAA, 0, 0) ^ PatternWord(MemPattern::k55, 0, 0), ~uint64_t{0});
}

TEST(MemtestPatternTest, AWordCanHoldItsOwnAddress) {
  EXPECT_EQ(PatternWord(MemPattern::kAddress, 0x7f0000001008, 9), 0x7f0000001008u);
  EXPECT_NE(PatternWord(MemPattern::kAddress, 8, 9), PatternWord(MemPattern::kAddress, 16, 9));
}

TEST(MemtestPatternTest, RandomWordsAreRecomputedFromTheAddressAndDifferAcrossWordsAndSeeds) {
  // The same address and seed give the same word: verification needs no second buffer.
  static_assert(PatternWord(MemPattern::kRandom, 4096, 7) == MemHash(4096, 7));
  EXPECT_EQ(PatternWord(MemPattern::kRandom, 4096, 7), PatternWord(MemPattern::kRandom, 4096, 7));
  EXPECT_NE(PatternWord(MemPattern::kRandom, 4096, 7), PatternWord(MemPattern::kRandom, 4096, 8));
  std::set<uint64_t> words;
  size_t ones = 0;
  constexpr int kWords = 4096;
  for (uint64_t i = 0; i < kWords; ++i) {
    const uint64_t w = PatternWord(MemPattern::kRandom, 0x7f0000000000 + 8 * i, 7);
    words.insert(w);
    ones += std::bitset<64>(w).count();
  }
  EXPECT_EQ(words.size(), size_t{kWords});  // neighbours differ
  // About half the bits set: each bit is written both ways across the memory.
  EXPECT_NEAR(static_cast<double>(ones) / (64.0 * kWords), 0.5, 0.01);
}

TEST(MemtestSizeTest, AShareOfFreeMemoryInWholePagesAtMostTheCap) {
  constexpr size_t kGiB = size_t{1} << 30;
  // An H100 with 79 GiB free: the full suite's 0.9 with no cap; the quick suite's 0.1, at most
  // 4 GiB.
  EXPECT_EQ(MemtestBytes(79 * kGiB, 0.9, 1024 * kGiB), size_t{72806} << 20);
  EXPECT_EQ(MemtestBytes(79 * kGiB, 0.1, 4 * kGiB), 4 * kGiB);
  EXPECT_EQ(MemtestBytes(20 * kGiB, 0.1, 4 * kGiB), size_t{2048} << 20);
  EXPECT_EQ(MemtestBytes(20 * kGiB, 0.1, 4 * kGiB) % kMemtestAlign, 0u);
  EXPECT_EQ(MemtestBytes(size_t{3} << 20, 0.5, 4 * kGiB), 0u);  // less than a page
}

TEST(MemtestSizeTest, ChunksHalveAfterFailuresAndStopBelowTheSmallest) {
  constexpr size_t kMiB = size_t{1} << 20;
  EXPECT_EQ(MemtestChunk(4096 * kMiB, 4096 * kMiB), 4096 * kMiB);  // all at once first
  EXPECT_EQ(MemtestChunk(4096 * kMiB, 2048 * kMiB), 2048 * kMiB);  // after one failure
  EXPECT_EQ(MemtestChunk(100 * kMiB, 2048 * kMiB), 100 * kMiB);    // what remains
  EXPECT_EQ(MemtestChunk(4096 * kMiB, 3 * kMiB + 5), 0u);          // below the smallest chunk
  EXPECT_EQ(MemtestChunk(4096 * kMiB, 65 * kMiB), 64 * kMiB);      // whole pages
  EXPECT_EQ(MemtestChunk(10 * kMiB, 10 * kMiB), 10 * kMiB);        // a small test: one chunk
  EXPECT_EQ(MemtestChunk(10 * kMiB, 5 * kMiB), 0u);                // which failed: stop
}

}  // namespace
}  // namespace vigil::gpu
