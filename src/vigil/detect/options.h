// The ranges of the detector's options (`vigil detect`'s flags, docs/detect.md "Ranges of the
// flags") and their check: a detector is built only from options within them.
#pragma once

#include "vigil/core/bounds.h"
#include "vigil/core/status.h"
#include "vigil/detect/detector.h"

namespace vigil::detect {

// DetectorOptions::step is within telemetry::kStepBounds (10 ms to 1 h).
inline constexpr Bounds kLatenessBounds{.lo = 0, .hi = 3600, .seconds = true};
inline constexpr Bounds kPersistenceBounds{.lo = 1, .hi = 3600, .seconds = true};
inline constexpr Bounds kWarmupBounds{.lo = 0, .hi = 3600, .seconds = true};
inline constexpr Bounds kMinSdBounds{.lo = 0.5, .hi = 1000};
inline constexpr Bounds kMinEffectBounds{.lo = 0.001, .hi = 100};
inline constexpr Bounds kStrongEffectBounds{.lo = 0, .hi = 100};  // 0: off
inline constexpr Bounds kGraceBounds{.lo = 0, .hi = 7 * 86400.0, .seconds = true};
inline constexpr Bounds kRearmBounds{.lo = 0, .hi = 30 * 86400.0, .seconds = true};

// OK when every option lies within its range: step, lateness, missing_grace, rearm, and the peer
// comparison's persistence_s, warmup_s, z_min (kMinSdBounds), effect_min (kMinEffectBounds) and
// strong_effect (kStrongEffectBounds).
// Else InvalidArgument "<flag>: <value> is outside <range>" for the first one that does not (NaN
// lies in no range), naming the option as `vigil detect` names its flag: --step, --grace,
// --rearm, --persistence, --warmup, --min-sd, --min-effect, --strong-effect (lateness, which has no
// flag, as "lateness").
Status ValidateDetectorOptions(const DetectorOptions& options);

}  // namespace vigil::detect
