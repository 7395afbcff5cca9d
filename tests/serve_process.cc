#include "serve_process.h"

#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "vigil/core/file.h"
#include "vigil/core/text.h"

namespace vigil::testing {

ServeProcess::ServeProcess(const TempDir& dir, const std::string& db,
                           const std::vector<std::string>& extra)
    : port_file_(dir.File("port")) {
  std::filesystem::remove(port_file_);
  if (!WriteFileAtomic(dir.File("token"), kServeToken).ok()) return;
  std::vector<std::string> args = {"serve",    "--db",         db,
                                   "--listen", "127.0.0.1:0",  "--port-file",
                                   port_file_, "--token-file", dir.File("token")};
  args.insert(args.end(), extra.begin(), extra.end());
  process_ = std::make_unique<VigilProcess>(args);
  for (int i = 0; i < 200; ++i) {
    Result<std::string> p = ReadFile(port_file_);
    if (p.ok()) {
      port_ = std::stoi(std::string(Trim(*p)));
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
}

Json GetJson(int port, const std::string& path) {
  httplib::Client c("127.0.0.1", port);
  auto res = c.Get(path.c_str());
  if (!res) return Json();
  Result<Json> j = ParseJson(res->body, path);
  return j.ok() ? *j : Json();
}

}  // namespace vigil::testing
