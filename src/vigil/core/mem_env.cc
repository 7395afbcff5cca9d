#include "vigil/core/mem_env.h"

#include <fmt/format.h>

#include <filesystem>
#include <utility>

namespace vigil {
namespace {

// "/a/b/c" for "a//b/./c/", "/a/b/c" or "/a/b/c/d/..".
std::string Normal(const std::string& path) {
  std::string p = (std::filesystem::path("/") / path).lexically_normal().string();
  if (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

std::string Parent(const std::string& normal) {
  const std::string parent = std::filesystem::path(normal).parent_path().string();
  return parent.empty() ? "/" : parent;
}

Status NoSuchFile(std::string_view what, const std::string& path) {
  return Status::NotFound(fmt::format("{} {}: No such file or directory", what, path));
}

}  // namespace

Status MemEnv::CheckWritableLocked(const std::string& p) const {
  if (directories_.contains(p)) {
    return Status::InvalidArgument(fmt::format("{} is a directory, not a file", p));
  }
  const std::string dir = Parent(p);
  if (!directories_.contains(dir)) {
    return Status::IoError(
        fmt::format("cannot create {}: {}", p,
                    files_.contains(dir) ? "Not a directory" : "No such file or directory"));
  }
  return Status::Ok();
}

Result<std::string> MemEnv::ReadFile(const std::string& path) {
  const std::string p = Normal(path);
  MutexLock lock(mu_);
  if (directories_.contains(p)) {
    return Status::InvalidArgument(fmt::format("{} is a directory, not a file", p));
  }
  const auto it = files_.find(p);
  if (it == files_.end()) return NoSuchFile("cannot open", p);
  return it->second;
}

Status MemEnv::WriteFileAtomic(const std::string& path, std::string_view content) {
  const std::string p = Normal(path);
  MutexLock lock(mu_);
  VIGIL_RETURN_IF_ERROR(CheckWritableLocked(p));
  files_[p] = std::string(content);
  return Status::Ok();
}

Status MemEnv::CheckWritable(const std::string& path) {
  const std::string p = Normal(path);
  MutexLock lock(mu_);
  if (directories_.contains(p)) {
    return Status::InvalidArgument(fmt::format("{} is a directory, not a file", p));
  }
  const std::string dir = Parent(p);
  if (!directories_.contains(dir)) {
    return Status::InvalidArgument(
        fmt::format("cannot write {}: directory {} does not exist", p, dir));
  }
  return Status::Ok();
}

Result<bool> MemEnv::WriteNewFile(const std::string& path, std::string_view content) {
  const std::string p = Normal(path);
  MutexLock lock(mu_);
  VIGIL_RETURN_IF_ERROR(CheckWritableLocked(p));
  return files_.emplace(p, std::string(content)).second;
}

Status MemEnv::AppendToFile(const std::string& path, std::string_view content) {
  const std::string p = Normal(path);
  MutexLock lock(mu_);
  VIGIL_RETURN_IF_ERROR(CheckWritableLocked(p));
  files_[p].append(content);
  return Status::Ok();
}

Status MemEnv::CreateDirectories(const std::string& path) {
  const std::string p = Normal(path);
  MutexLock lock(mu_);
  std::vector<std::string> missing;
  for (std::string d = p; !directories_.contains(d); d = Parent(d)) {
    if (files_.contains(d)) {
      return Status::InvalidArgument(
          fmt::format("cannot create the directory {}: {} is a file", p, d));
    }
    missing.push_back(d);
  }
  directories_.insert(missing.begin(), missing.end());
  return Status::Ok();
}

Result<std::vector<std::string>> MemEnv::ListDirectory(const std::string& dir) {
  const std::string p = Normal(dir);
  MutexLock lock(mu_);
  if (!directories_.contains(p)) {
    if (files_.contains(p)) {
      return Status::InvalidArgument(fmt::format("cannot list {}: Not a directory", p));
    }
    return NoSuchFile("cannot list", p);
  }
  // Both are sorted by path; an entry's name is its path after "<p>/".
  const std::string prefix = p == "/" ? p : p + "/";
  std::set<std::string> names;
  const auto add = [&](const std::string& child) {
    const std::string rest = child.substr(prefix.size());
    if (!rest.empty() && rest.find('/') == std::string::npos) names.insert(rest);
  };
  for (auto it = files_.lower_bound(prefix); it != files_.end() && it->first.starts_with(prefix);
       ++it) {
    add(it->first);
  }
  for (auto it = directories_.lower_bound(prefix);
       it != directories_.end() && it->starts_with(prefix); ++it) {
    add(*it);
  }
  return std::vector<std::string>(names.begin(), names.end());
}

Result<FileInfo> MemEnv::Stat(const std::string& path) {
  const std::string p = Normal(path);
  MutexLock lock(mu_);
  if (directories_.contains(p)) return FileInfo{FileType::kDirectory, 0};
  const auto it = files_.find(p);
  if (it == files_.end()) return NoSuchFile("cannot stat", p);
  return FileInfo{FileType::kRegular, it->second.size()};
}

Status MemEnv::RemoveFile(const std::string& path) {
  const std::string p = Normal(path);
  MutexLock lock(mu_);
  if (directories_.contains(p)) {
    return Status::InvalidArgument(fmt::format("cannot remove {}: Is a directory", p));
  }
  if (files_.erase(p) == 0) return NoSuchFile("cannot remove", p);
  return Status::Ok();
}

Status MemEnv::RenameFile(const std::string& from, const std::string& to) {
  const std::string f = Normal(from), t = Normal(to);
  MutexLock lock(mu_);
  const auto it = files_.find(f);
  if (it == files_.end()) {
    if (directories_.contains(f)) {
      return Status::InvalidArgument(fmt::format("cannot rename {}: Is a directory", f));
    }
    return NoSuchFile(fmt::format("cannot rename {} to", f), t);
  }
  VIGIL_RETURN_IF_ERROR(CheckWritableLocked(t));
  std::string content = std::move(it->second);
  files_.erase(it);
  files_[t] = std::move(content);
  return Status::Ok();
}

std::optional<std::string> MemEnv::GetVariable(const std::string& name) const {
  MutexLock lock(mu_);
  const auto it = variables_.find(name);
  if (it == variables_.end()) return std::nullopt;
  return it->second;
}

void MemEnv::SetVariable(const std::string& name, std::optional<std::string> value) {
  MutexLock lock(mu_);
  if (value.has_value()) {
    variables_[name] = std::move(*value);
  } else {
    variables_.erase(name);
  }
}

}  // namespace vigil
