// Time zones of the tz database, for the times that tools print in the cluster's local time:
// Slurm's sacct prints Start and End as "2026-11-22T09:30:00" in the zone of the host it ran on,
// without saying which. Vigil reads and writes such times in a zone the user names (or the
// machine's own) and keeps Unix seconds inside.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "vigil/core/status.h"

namespace date {
class time_zone;
}

namespace vigil {

class TimeZone {
 public:
  TimeZone() = default;  // UTC

  // A zone by its tz database name ("Europe/Berlin", "America/Chicago", "UTC"); "local" is the
  // machine's own ($TZ when it names a zone, else /etc/localtime; UTC when neither says).
  // InvalidArgument naming the zone when the database has no such zone.
  static Result<TimeZone> Find(std::string_view name);

  const std::string& name() const { return name_; }

  // Unix seconds of a local wall-clock time, given as seconds since 1970-01-01T00:00 on the
  // local clock (what ParseIsoSeconds makes of "2026-11-22T09:30:00"). A time that occurs twice
  // (the hour repeated when clocks go back) is the earlier; a time that never occurs (the hour
  // skipped when they go forward) is the instant the gap ends.
  int64_t ToUnix(int64_t local_seconds) const;
  // The local wall-clock seconds of a Unix time (the inverse, where there is one).
  int64_t ToLocal(int64_t unix_seconds) const;

 private:
  const date::time_zone* zone_ = nullptr;  // null: UTC
  std::string name_ = "UTC";
};

// Reads "2026-11-22T09:30:00" (ParseIsoSeconds' forms) as a time in `zone`; a trailing Z says UTC
// whatever the zone. Nullopt for anything ParseIsoSeconds does not read.
std::optional<int64_t> ParseZonedIsoSeconds(std::string_view text, const TimeZone& zone);

// Writes Unix seconds as "2026-11-22T09:30:00" in `zone`, as sacct would on a host there.
std::string FormatZonedIsoSeconds(int64_t unix_seconds, const TimeZone& zone);

}  // namespace vigil
