#include "vigil/detect/options.h"

#include "vigil/telemetry/frame.h"

namespace vigil::detect {

Status ValidateDetectorOptions(const DetectorOptions& o) {
  VIGIL_RETURN_IF_ERROR(CheckBounds("--step", o.step, telemetry::kStepBounds));
  VIGIL_RETURN_IF_ERROR(CheckBounds("lateness", o.lateness, kLatenessBounds));
  VIGIL_RETURN_IF_ERROR(CheckBounds("--grace", o.missing_grace, kGraceBounds));
  VIGIL_RETURN_IF_ERROR(CheckBounds("--rearm", o.rearm, kRearmBounds));
  VIGIL_RETURN_IF_ERROR(CheckBounds("--persistence", o.peer.persistence_s, kPersistenceBounds));
  VIGIL_RETURN_IF_ERROR(CheckBounds("--warmup", o.peer.warmup_s, kWarmupBounds));
  VIGIL_RETURN_IF_ERROR(CheckBounds("--min-sd", o.peer.z_min, kMinSdBounds));
  VIGIL_RETURN_IF_ERROR(CheckBounds("--min-effect", o.peer.effect_min, kMinEffectBounds));
  return CheckBounds("--strong-effect", o.peer.strong_effect, kStrongEffectBounds);
}

Result<std::unique_ptr<Detector>> Detector::Create(const DetectorOptions& options,
                                                   const telemetry::Normalizer& names) {
  VIGIL_RETURN_IF_ERROR(ValidateDetectorOptions(options));
  return std::make_unique<Detector>(options, names);
}

}  // namespace vigil::detect
