// Errors as values: Status (a code and a message) and Result<T> (a value or a Status).
//
// Library code never throws and never exits; it returns a Status that names what failed and where
// (file, line, field), and the CLI turns the code into an exit code (see ExitCodeFor in the CLI).
// Both types are cheap to move and safe to use from any thread (they hold no shared state).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace vigil {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,   // bad usage or bad input data: the user can fix it (exit 2)
  kNotFound,          // a named file, benchmark or record does not exist (exit 2)
  kIoError,           // the environment failed us: disk, permissions, devices (exit 3)
  kUnavailable,       // cannot run here: missing hardware, driver or feature (skip, not fail)
  kDeadlineExceeded,  // ran out of its time limit
  kCancelled,         // stopped on request (Ctrl-C)
  kInternal,          // a bug or an impossible state (exit 3)
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string msg) {
    return {StatusCode::kInvalidArgument, std::move(msg)};
  }
  static Status NotFound(std::string msg) { return {StatusCode::kNotFound, std::move(msg)}; }
  static Status IoError(std::string msg) { return {StatusCode::kIoError, std::move(msg)}; }
  static Status Unavailable(std::string msg) { return {StatusCode::kUnavailable, std::move(msg)}; }
  static Status DeadlineExceeded(std::string msg) {
    return {StatusCode::kDeadlineExceeded, std::move(msg)};
  }
  static Status Cancelled(std::string msg) { return {StatusCode::kCancelled, std::move(msg)}; }
  static Status Internal(std::string msg) { return {StatusCode::kInternal, std::move(msg)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Returns a copy whose message is "<context>: <message>", to add where an error happened.
  Status WithContext(std::string_view context) const;

  // "OK" or "<code name>: <message>".
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Holds either a T or a non-OK Status. Accessing value() of an error is a precondition violation.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : data_(std::move(value)) {}        // NOLINT: implicit by design, like StatusOr
  Result(Status status) : data_(std::move(status)) {  // NOLINT
    if (std::get<Status>(data_).ok()) {
      data_ = Status::Internal("Result constructed from an OK status without a value");
    }
  }

  bool ok() const { return std::holds_alternative<T>(data_); }
  // REQUIRES: ok().
  const T& value() const& { return std::get<T>(data_); }
  T& value() & { return std::get<T>(data_); }
  T&& value() && { return std::get<T>(std::move(data_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

  // OK when a value is held.
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(data_); }

 private:
  std::variant<T, Status> data_;
};

}  // namespace vigil

#define VIGIL_CONCAT_INNER_(a, b) a##b
#define VIGIL_CONCAT_(a, b) VIGIL_CONCAT_INNER_(a, b)

// Returns the Status of `expr` (a Status or a Result) from the enclosing function if it is an
// error.
#define VIGIL_RETURN_IF_ERROR(expr)                                                   \
  do {                                                                                \
    auto vigil_status_or_ = (expr);                                                   \
    if (!vigil_status_or_.ok()) return ::vigil::internal::ToStatus(vigil_status_or_); \
  } while (0)

// Declares `lhs` from the value of the Result `expr`, or returns its Status.
#define VIGIL_ASSIGN_OR_RETURN(lhs, expr) \
  VIGIL_ASSIGN_OR_RETURN_IMPL_(VIGIL_CONCAT_(vigil_result_, __LINE__), lhs, expr)
#define VIGIL_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return tmp.status();                \
  lhs = std::move(tmp).value()

namespace vigil::internal {
inline Status ToStatus(const Status& s) { return s; }
template <typename T>
Status ToStatus(const Result<T>& r) {
  return r.status();
}
}  // namespace vigil::internal
