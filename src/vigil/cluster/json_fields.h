// Fields of the JSON that ranks and the coordinator of `vigil fleet run` send each other, read
// without trusting their types: a field that is missing or of another type reads as the fallback
// (nlohmann's value() would throw on a type it did not expect).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace vigil::cluster {

inline double NumberField(const nlohmann::json& j, const char* key, double fallback) {
  if (!j.is_object()) return fallback;
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}

inline bool BoolField(const nlohmann::json& j, const char* key, bool fallback) {
  if (!j.is_object()) return fallback;
  const auto it = j.find(key);
  return it != j.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

inline std::string TextField(const nlohmann::json& j, const char* key,
                             const std::string& fallback = "") {
  if (!j.is_object()) return fallback;
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

}  // namespace vigil::cluster
