#include "vigil/core/time_zone.h"

#include <date/tz.h>
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <exception>

#include "vigil/core/clock.h"
#include "vigil/core/text.h"

namespace vigil {
namespace {

using date::local_seconds;
using date::sys_seconds;
using std::chrono::seconds;

// The machine's zone: $TZ when it names one of the database (a leading ':' dropped), else
// /etc/localtime; null (UTC) when neither says.
const date::time_zone* LocalZone() {
  try {
    if (const char* tz = std::getenv("TZ"); tz != nullptr && *tz != '\0') {
      return date::locate_zone(tz[0] == ':' ? tz + 1 : tz);
    }
    return date::current_zone();
  } catch (const std::exception&) {
    return nullptr;
  }
}

}  // namespace

Result<TimeZone> TimeZone::Find(std::string_view name) {
  TimeZone z;
  if (name == "UTC" || name == "Etc/UTC") return z;
  try {
    z.zone_ = name == "local" ? LocalZone() : date::locate_zone(name);
  } catch (const std::exception&) {
    return Status::InvalidArgument(
        fmt::format("time zone {}: not in the tz database (a name such as Europe/Berlin, or local)",
                    Quote(name)));
  }
  if (z.zone_ != nullptr) z.name_ = std::string(z.zone_->name());
  if (z.name_ == "Etc/UTC") z.zone_ = nullptr;  // no transitions to look up
  return z;
}

int64_t TimeZone::ToUnix(int64_t local) const {
  if (zone_ == nullptr) return local;
  const local_seconds t{seconds(local)};
  return zone_->to_sys(t, date::choose::earliest).time_since_epoch().count();
}

int64_t TimeZone::ToLocal(int64_t unix_seconds) const {
  if (zone_ == nullptr) return unix_seconds;
  const sys_seconds t{seconds(unix_seconds)};
  return zone_->to_local(t).time_since_epoch().count();
}

std::optional<int64_t> ParseZonedIsoSeconds(std::string_view text, const TimeZone& zone) {
  const std::optional<int64_t> t = ParseIsoSeconds(text);
  if (!t || text.ends_with('Z')) return t;
  return zone.ToUnix(*t);
}

std::string FormatZonedIsoSeconds(int64_t unix_seconds, const TimeZone& zone) {
  return FormatIsoSeconds(zone.ToLocal(unix_seconds));
}

}  // namespace vigil
