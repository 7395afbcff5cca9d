// A mutex, its scoped lock and a condition variable that clang's thread-safety analysis
// understands (LevelDB port/port_stdcxx.h with port/thread_annotations.h, Abseil's Mutex): a
// member says which mutex guards it (GUARDED_BY), a function which mutexes it needs held
// (REQUIRES) or must not hold (EXCLUDES), and clang's -Wthread-safety (an error in the clang
// builds) checks every access. Under gcc the annotations are empty and these are std::mutex and
// std::condition_variable with nothing added. Abseil is not used: only its runtime library is on
// the build machines, not its headers.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define VIGIL_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define VIGIL_THREAD_ANNOTATION(x)
#endif

// On a class: it is a capability (a lock) of the kind named.
#define CAPABILITY(x) VIGIL_THREAD_ANNOTATION(capability(x))
// On a class: an object of it holds a capability from its construction to its destruction.
#define SCOPED_CAPABILITY VIGIL_THREAD_ANNOTATION(scoped_lockable)
// On a member: read or written only with the mutex held.
#define GUARDED_BY(x) VIGIL_THREAD_ANNOTATION(guarded_by(x))
// On a function: its caller must hold the mutexes.
#define REQUIRES(...) VIGIL_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
// On a function: its caller must not hold the mutexes (the function takes them).
#define EXCLUDES(...) VIGIL_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
// On a function: it takes the mutexes (none named: `this`) and returns holding them.
#define ACQUIRE(...) VIGIL_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
// On a function: it releases the mutexes (none named: `this`) it was called holding.
#define RELEASE(...) VIGIL_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
// On a function: it returns only when the calling thread holds the mutex.
#define ASSERT_CAPABILITY(x) VIGIL_THREAD_ANNOTATION(assert_capability(x))

namespace vigil {

// A mutual-exclusion lock: std::mutex as a capability. Not recursive.
class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }
  // Tells the analysis that the caller holds the mutex (checked by nothing at run time): for a
  // callback that the code holding the lock calls.
  void AssertHeld() const ASSERT_CAPABILITY(this) {}

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds `mu` for the scope: `MutexLock lock(mu_);`.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.Lock(); }
  ~MutexLock() RELEASE() { mu_.Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mu_;
};

// A condition variable for a Mutex (LevelDB port::CondVar). It waits on the Mutex's own
// std::mutex, so it is a std::condition_variable (not std::condition_variable_any, which takes a
// lock of its own on every wait). The waits take no predicate: the caller loops, so that the
// condition it reads is read where the analysis sees the mutex held:
//
//   MutexLock lock(mu_);
//   while (!ready_) cv_.Wait(mu_);
class CondVar {
 public:
  CondVar() = default;
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  // Releases `mu`, waits for a notification (or a spurious wake-up), takes `mu` again.
  void Wait(Mutex& mu) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();  // still held: the caller's
  }
  // As Wait, until `deadline` at the latest. False when the deadline passed.
  template <class Clock, class Duration>
  bool WaitUntil(Mutex& mu, std::chrono::time_point<Clock, Duration> deadline) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    const bool woken = cv_.wait_until(lock, deadline) == std::cv_status::no_timeout;
    lock.release();
    return woken;
  }
  void NotifyOne() { cv_.notify_one(); }
  void NotifyAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace vigil
