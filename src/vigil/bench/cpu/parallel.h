// Helpers shared by the host benchmarks: memory that is placed where it is first touched, and a
// team of threads pinned one per CPU that runs rounds of work in lockstep.
#pragma once

#include <barrier>
#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

#include "vigil/core/status.h"

namespace vigil {

// Anonymous memory, 2 MiB aligned, with transparent huge pages requested (fewer TLB misses, so
// that bandwidth and latency figures measure memory rather than page walks). Pages are not
// touched here: the first thread to write a page places it on that thread's NUMA node.
class PageBuffer {
 public:
  // IoError when the memory cannot be mapped.
  static Result<PageBuffer> Allocate(size_t bytes);

  PageBuffer(PageBuffer&& other) noexcept;
  PageBuffer& operator=(PageBuffer&& other) noexcept;
  PageBuffer(const PageBuffer&) = delete;
  PageBuffer& operator=(const PageBuffer&) = delete;
  ~PageBuffer();

  template <typename T>
  T* As() const {
    return static_cast<T*>(data_);
  }
  size_t size() const { return size_; }

 private:
  PageBuffer(void* data, size_t size) : data_(data), size_(size) {}
  void* data_ = nullptr;
  size_t size_ = 0;
};

// One thread per CPU in `cpus`, each pinned to its CPU for its whole life.
// Not thread-safe: one caller drives the team.
class PinnedTeam {
 public:
  explicit PinnedTeam(std::vector<int> cpus);
  ~PinnedTeam();
  PinnedTeam(const PinnedTeam&) = delete;
  PinnedTeam& operator=(const PinnedTeam&) = delete;

  size_t size() const { return threads_.size(); }

  // Runs work(i) on every thread i at once and returns the seconds from the release of all
  // threads to the end of the last one.
  double Run(const std::function<void(size_t)>& work);

 private:
  void Loop(size_t index, int cpu);

  std::vector<std::thread> threads_;
  std::barrier<> start_;
  std::barrier<> done_;
  const std::function<void(size_t)>* work_ = nullptr;  // set between the two barriers
  bool stop_ = false;
};

// Splits [0, n) into `parts` contiguous ranges, the first ones one longer; returns range i.
struct Range {
  size_t begin;
  size_t end;
};
Range SplitRange(size_t n, size_t parts, size_t i);

}  // namespace vigil
