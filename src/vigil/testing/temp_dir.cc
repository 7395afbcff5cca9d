#include "vigil/testing/temp_dir.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>

namespace vigil::testing {

TempDir::TempDir(const std::string& parent) {
  const std::string base = parent.empty() ? std::filesystem::current_path().string() : parent;
  std::string tmpl = base + "/vigil-test-XXXXXX";
  if (mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  if (!path_.empty()) std::filesystem::remove_all(path_, ec);
}

void TempDir::Write(const std::string& relative, const std::string& text) const {
  const std::filesystem::path p = std::filesystem::path(path_) / relative;
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

size_t TempDir::EntryCount() const {
  return static_cast<size_t>(std::distance(std::filesystem::directory_iterator(path_),
                                           std::filesystem::directory_iterator()));
}

}  // namespace vigil::testing
