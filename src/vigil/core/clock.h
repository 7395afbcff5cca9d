// Time comes through a Clock so that tests can control it (LevelDB's Env, Envoy's TimeSource).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace vigil {

class Clock {
 public:
  virtual ~Clock() = default;
  // Seconds since the Unix epoch, UTC, with sub-second resolution.
  virtual double WallSeconds() const = 0;
  // Seconds on a clock that never goes backwards; only differences are meaningful.
  virtual double MonotonicSeconds() const = 0;
  // Waits `seconds` (the pause of a polling loop), returning early once `*interrupted` is set
  // (a Ctrl-C; null: never).
  virtual void SleepFor(double seconds, const std::atomic<bool>* interrupted) = 0;
};

// The real clocks (CLOCK_REALTIME, CLOCK_MONOTONIC). Thread-safe; lives for the whole process.
// SleepFor sleeps in steps of 100 ms, looking at `interrupted` after each.
Clock& SystemClock();

// A clock that moves only when told to. Not thread-safe.
class FakeClock : public Clock {
 public:
  explicit FakeClock(double wall_seconds = 0.0) : wall_(wall_seconds) {}
  double WallSeconds() const override { return wall_; }
  double MonotonicSeconds() const override { return mono_; }
  // Moves the clock on at once by the whole wait, unless `*interrupted` is already set: a test
  // drives a polling loop without real time, and interrupts it from what the loop calls.
  void SleepFor(double seconds, const std::atomic<bool>* interrupted) override {
    if (interrupted == nullptr || !interrupted->load()) Advance(seconds);
  }
  void Advance(double seconds) {
    wall_ += seconds;
    mono_ += seconds;
  }

 private:
  double wall_;
  double mono_ = 0.0;
};

// When to try again something that keeps failing (a server that cannot be reached): `first`
// seconds after the first failure, twice as long after each further one, at most `most`.
class Backoff {
 public:
  Backoff(double first, double most) : first_(first), most_(most) {}
  // One more failure: the seconds to wait before the next try.
  double Fail() {
    wait_ = wait_ == 0 ? first_ : std::min(2 * wait_, most_);
    return wait_;
  }
  // A success: the next failure waits `first` again.
  void Reset() { wait_ = 0; }

 private:
  double first_, most_;
  double wait_ = 0;
};

// Formats Unix seconds as ISO 8601 UTC with milliseconds: "2026-11-22T09:30:00.250Z".
std::string FormatUtc(double unix_seconds);

// Formats Unix seconds as a compact UTC stamp for file names: "20261122T093000Z".
std::string FormatUtcCompact(double unix_seconds);

// Formats whole Unix seconds as "2026-11-22T09:30:00", the form of Slurm's sacct.
std::string FormatIsoSeconds(int64_t unix_seconds);

// Reads "2026-11-22T09:30:00" (or with a space for the T, fractional seconds, and a trailing Z)
// as UTC Unix seconds, fractions dropped. Nullopt for anything else, including invalid dates.
std::optional<int64_t> ParseIsoSeconds(std::string_view text);

}  // namespace vigil
