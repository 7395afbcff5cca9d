// `vigil serve` as a child process for end-to-end tests: on a free port of loopback, with a
// token, killed when it goes out of scope.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "vigil/core/json.h"
#include "vigil/testing/temp_dir.h"
#include "vigil_process.h"

namespace vigil::testing {

inline constexpr char kServeToken[] = "e2e-token";

class ServeProcess {
 public:
  // Starts `vigil serve --db db` with the token in dir/token and `extra` flags; port() is -1
  // when it did not start listening within 5 s.
  ServeProcess(const TempDir& dir, const std::string& db,
               const std::vector<std::string>& extra = {});
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  VigilProcess& process() { return *process_; }

 private:
  std::string port_file_;
  std::unique_ptr<VigilProcess> process_;
  int port_ = -1;
};

// GET `path` from the server on `port` as JSON; null when it cannot be had.
Json GetJson(int port, const std::string& path);

}  // namespace vigil::testing
