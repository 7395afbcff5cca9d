#include "vigil/bench/cpu/parallel.h"

#include <fmt/format.h>
#include <sys/mman.h>

#include <chrono>

#include "vigil/bench/cpu/topology.h"
#include "vigil/core/file.h"

namespace vigil {
namespace {
constexpr size_t kHugePage = 2u << 20;
}

Result<PageBuffer> PageBuffer::Allocate(size_t bytes) {
  const size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  // Over-allocate by one huge page so that the start can be aligned to one.
  void* raw = mmap(nullptr, rounded + kHugePage, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (raw == MAP_FAILED) return ErrnoError(fmt::format("cannot map {} bytes", bytes));
  auto addr = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (addr + kHugePage - 1) / kHugePage * kHugePage;
  if (aligned > addr) munmap(raw, aligned - addr);
  const uintptr_t tail = aligned + rounded;
  const uintptr_t end = addr + rounded + kHugePage;
  if (end > tail) munmap(reinterpret_cast<void*>(tail), end - tail);
  void* data = reinterpret_cast<void*>(aligned);
  madvise(data, rounded, MADV_HUGEPAGE);  // advice only: fine if THP is off
  return PageBuffer(data, rounded);
}

PageBuffer::PageBuffer(PageBuffer&& other) noexcept : data_(other.data_), size_(other.size_) {
  other.data_ = nullptr;
  other.size_ = 0;
}

PageBuffer& PageBuffer::operator=(PageBuffer&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) munmap(data_, size_);
    data_ = other.data_;
    size_ = other.size_;
    other.data_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

PageBuffer::~PageBuffer() {
  if (data_ != nullptr) munmap(data_, size_);
}

PinnedTeam::PinnedTeam(std::vector<int> cpus)
    : start_(static_cast<ptrdiff_t>(cpus.size() + 1)),
      done_(static_cast<ptrdiff_t>(cpus.size() + 1)) {
  threads_.reserve(cpus.size());
  for (size_t i = 0; i < cpus.size(); ++i) {
    threads_.emplace_back([this, i, cpu = cpus[i]] { Loop(i, cpu); });
  }
}

PinnedTeam::~PinnedTeam() {
  stop_ = true;
  start_.arrive_and_wait();
  for (std::thread& t : threads_) t.join();
}

void PinnedTeam::Loop(size_t index, int cpu) {
  (void)PinThisThread(cpu);  // unpinned still measures, only less reproducibly
  while (true) {
    start_.arrive_and_wait();
    if (stop_) return;
    (*work_)(index);
    done_.arrive_and_wait();
  }
}

double PinnedTeam::Run(const std::function<void(size_t)>& work) {
  work_ = &work;
  const auto t0 = std::chrono::steady_clock::now();
  start_.arrive_and_wait();
  done_.arrive_and_wait();
  const auto t1 = std::chrono::steady_clock::now();
  work_ = nullptr;
  return std::chrono::duration<double>(t1 - t0).count();
}

Range SplitRange(size_t n, size_t parts, size_t i) {
  const size_t base = n / parts;
  const size_t extra = n % parts;
  const size_t begin = i * base + std::min(i, extra);
  return Range{begin, begin + base + (i < extra ? 1 : 0)};
}

}  // namespace vigil
