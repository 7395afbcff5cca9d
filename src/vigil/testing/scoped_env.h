// An environment variable set for a scope, for tests of code that reads the environment or passes
// it on to programs.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace vigil::testing {

// Sets an environment variable for the scope, then puts back what it was. Not thread-safe (the
// environment is the process's): for single-threaded tests.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace vigil::testing
