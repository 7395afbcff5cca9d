// What gpu-memtest writes into GPU memory, one 64-bit word at a time, and how much memory it
// takes: the same functions on the GPU (memtest.cu, which writes and verifies) and the host (which
// tests them). Plain C++17; `__host__ __device__` only under nvcc.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define VIGIL_HOST_DEVICE __host__ __device__
#else
#define VIGIL_HOST_DEVICE
#endif

namespace vigil::gpu {

// The patterns of DCGM's and memtest86's memory checks: solid words find bits stuck at one value,
// alternating bits find shorts between neighbours, a word holding its own address finds address
// lines that alias two words, and pseudo-random data finds what depends on the data.
enum class MemPattern : int {
  kZeros,    // 0x00...
  kOnes,     // 0xFF...
  kAA,       // 0xAA...: 1010...
  k55,       // 0x55...: 0101...
  kAddress,  // each word holds its own address
  kRandom,   // a counter-based hash of the word's address and a seed
};

inline constexpr MemPattern kMemPatterns[] = {MemPattern::kZeros,   MemPattern::kOnes,
                                              MemPattern::kAA,      MemPattern::k55,
                                              MemPattern::kAddress, MemPattern::kRandom};

// SplitMix64's finaliser of `address` and `seed`: every bit of the word depends on every bit of
// both, so verification recomputes it from the address alone, with no second buffer.
VIGIL_HOST_DEVICE constexpr uint64_t MemHash(uint64_t address, uint64_t seed) {
  uint64_t x = address * 0x9e3779b97f4a7c15ull + seed;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The word `pattern` puts at `address` (the word's address on the GPU).
VIGIL_HOST_DEVICE constexpr uint64_t PatternWord(MemPattern pattern, uint64_t address,
                                                 uint64_t seed) {
  switch (pattern) {
    case MemPattern::kZeros:
      return 0;
    case MemPattern::kOnes:
      return ~uint64_t{0};
    case MemPattern::kAA:
      return 0xaaaaaaaaaaaaaaaaull;
    case MemPattern::k55:
      return 0x5555555555555555ull;
    case MemPattern::kAddress:
      return address;
    case MemPattern::kRandom:
      return MemHash(address, seed);
  }
  return 0;
}

// Allocations are whole multiples of this: the GPU maps memory in 2 MiB pages.
inline constexpr size_t kMemtestAlign = size_t{2} << 20;
// The smallest allocation worth trying when larger ones fail: below it, the rest of the memory is
// too fragmented (or held by others) to be worth the calls.
inline constexpr size_t kMemtestMinChunk = size_t{64} << 20;

// The bytes to test on a GPU with `free_bytes` free: `fraction` of them, at most `most`, in whole
// kMemtestAlign pages (so possibly 0). REQUIRES: 0 <= fraction <= 1.
constexpr size_t MemtestBytes(size_t free_bytes, double fraction, size_t most) {
  const auto share = static_cast<size_t>(static_cast<double>(free_bytes) * fraction);
  return std::min(share, most) / kMemtestAlign * kMemtestAlign;
}

// The next allocation to try with `remaining` bytes still to allocate, when allocations above
// `ceiling` have failed (halve it after each failure; start it at `remaining`): the smaller of the
// two in whole pages, or 0 (stop) when the ceiling has fallen below both kMemtestMinChunk and
// `remaining`, or no whole page remains.
constexpr size_t MemtestChunk(size_t remaining, size_t ceiling) {
  if (ceiling < kMemtestMinChunk && ceiling < remaining) return 0;
  return std::min(remaining, ceiling) / kMemtestAlign * kMemtestAlign;
}

}  // namespace vigil::gpu

#undef VIGIL_HOST_DEVICE
