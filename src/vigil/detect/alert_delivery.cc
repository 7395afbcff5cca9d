#include "vigil/detect/alert_delivery.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <utility>

#include "vigil/core/duration.h"

namespace vigil::detect {

AlertDelivery::AlertDelivery(PostAlerts post, std::string destination, const Clock& clock)
    : post_(std::move(post)), destination_(std::move(destination)), clock_(clock) {}

Status AlertDelivery::Add(const std::vector<Alert>& alerts, bool last) {
  for (const Alert& a : alerts) AppendAlertJsonl(a, &unsent_);
  unsent_count_ += alerts.size();
  if (unsent_count_ == 0) return Status::Ok();
  if (!last && clock_.MonotonicSeconds() < next_try_) return Status::Ok();
  const Status posted = post_(unsent_);
  if (posted.ok()) {
    spdlog::info("{}: {} alerts sent", destination_, unsent_count_);
    unsent_.clear();
    unsent_count_ = 0;
    retry_.Reset();
    return Status::Ok();
  }
  if (posted.code() != StatusCode::kUnavailable) return posted;
  last_error_ = posted.message();
  if (last) return Status::Ok();
  const double wait = retry_.Fail();
  next_try_ = clock_.MonotonicSeconds() + wait;
  spdlog::warn("{} ({} alerts kept; next try in {})", last_error_, unsent_count_,
               FormatDuration(wait));
  return Status::Ok();
}

Status AlertDelivery::Delivered(std::string_view kept_in) const {
  if (unsent_count_ == 0) return Status::Ok();
  return Status::Unavailable(
      fmt::format("{} alerts not sent: {}{}", unsent_count_, last_error_,
                  kept_in.empty() ? "" : fmt::format("; they are in {}", kept_in)));
}

}  // namespace vigil::detect
