#include "vigil/core/time_zone.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

TEST(TimeZoneTest, UtcIsTheDefault) {
  const TimeZone utc;
  EXPECT_EQ(utc.name(), "UTC");
  EXPECT_EQ(*ParseZonedIsoSeconds("2026-11-22T09:30:00", utc), 1795339800);
  EXPECT_EQ(FormatZonedIsoSeconds(1795339800, utc), "2026-11-22T09:30:00");
  EXPECT_EQ(TimeZone::Find("UTC")->name(), "UTC");
}

TEST(TimeZoneTest, ALocalTimeIsReadInItsZone) {
  const TimeZone berlin = *TimeZone::Find("Europe/Berlin");
  EXPECT_EQ(berlin.name(), "Europe/Berlin");
  // 09:30 in Berlin in November (UTC+1) is 08:30Z; in July (UTC+2) 07:30Z.
  EXPECT_EQ(*ParseZonedIsoSeconds("2026-11-22T09:30:00", berlin), 1795339800 - 3600);
  EXPECT_EQ(FormatZonedIsoSeconds(1795339800 - 3600, berlin), "2026-11-22T09:30:00");
  EXPECT_EQ(FormatZonedIsoSeconds(*ParseZonedIsoSeconds("2026-07-01T09:30:00", berlin), TimeZone()),
            "2026-07-01T07:30:00");
  // A time that says Z is UTC in any zone.
  EXPECT_EQ(*ParseZonedIsoSeconds("2026-11-22T09:30:00Z", berlin), 1795339800);
  EXPECT_FALSE(ParseZonedIsoSeconds("yesterday", berlin));
}

TEST(TimeZoneTest, TheHoursClocksSkipAndRepeat) {
  const TimeZone chicago = *TimeZone::Find("America/Chicago");
  // 2026-03-08: 02:00 CST jumps to 03:00 CDT; 02:30 never happens and reads as 03:00 CDT (08:00Z).
  EXPECT_EQ(
      FormatZonedIsoSeconds(*ParseZonedIsoSeconds("2026-03-08T02:30:00", chicago), TimeZone()),
      "2026-03-08T08:00:00");
  // 2026-11-01: 01:30 happens twice; the first, in CDT (06:30Z).
  EXPECT_EQ(
      FormatZonedIsoSeconds(*ParseZonedIsoSeconds("2026-11-01T01:30:00", chicago), TimeZone()),
      "2026-11-01T06:30:00");
  // A job from 00:30 to 03:30 local that night ran four hours.
  EXPECT_EQ(*ParseZonedIsoSeconds("2026-11-01T03:30:00", chicago) -
                *ParseZonedIsoSeconds("2026-11-01T00:30:00", chicago),
            4 * 3600);
}

TEST(TimeZoneTest, UnknownZonesAreNamed) {
  const Result<TimeZone> z = TimeZone::Find("Mars/Olympus");
  ASSERT_FALSE(z.ok());
  EXPECT_EQ(z.status().message(),
            "time zone \"Mars/Olympus\": not in the tz database (a name such as Europe/Berlin, or "
            "local)");
  EXPECT_TRUE(TimeZone::Find("local").ok());
}

}  // namespace
}  // namespace vigil
