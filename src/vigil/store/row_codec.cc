#include "vigil/store/row_codec.h"

#include <fmt/format.h>

#include <bit>
#include <cstdint>

namespace vigil::store {
namespace {

template <typename U>
void Put(std::string& out, U v) {
  for (size_t i = 0; i < sizeof(U); ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

// Reads a little-endian U at `at`, advancing it; false when the bytes end first.
template <typename U>
bool Get(std::string_view bytes, size_t& at, U* v) {
  if (bytes.size() - at < sizeof(U)) return false;
  U x = 0;
  for (size_t i = 0; i < sizeof(U); ++i) {
    x |= static_cast<U>(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
  }
  at += sizeof(U);
  *v = x;
  return true;
}

}  // namespace

std::string EncodeRowValues(const FleetRow& row) {
  size_t size = sizeof(uint32_t);
  for (const auto& [key, value] : row.values) size += sizeof(uint32_t) + key.size() + 8;
  std::string out;
  out.reserve(size);
  Put(out, static_cast<uint32_t>(row.values.size()));
  for (const auto& [key, value] : row.values) {
    Put(out, static_cast<uint32_t>(key.size()));
    out += key;
    Put(out, std::bit_cast<uint64_t>(value));
  }
  return out;
}

Status DecodeRowValues(std::string_view bytes, std::string_view what, FleetRow* row) {
  const auto damaged = [&] { return Status::IoError(fmt::format("{}: damaged stored row", what)); };
  size_t at = 0;
  uint32_t count = 0;
  if (!Get(bytes, at, &count)) return damaged();
  // Each value takes 12 bytes at least: a count beyond that is damage, not a reason to allocate.
  if (count > (bytes.size() - at) / 12) return damaged();
  row->values.clear();
  row->values.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t length = 0;
    uint64_t bits = 0;
    if (!Get(bytes, at, &length) || bytes.size() - at < length) return damaged();
    std::string key(bytes.substr(at, length));
    at += length;
    if (!Get(bytes, at, &bits)) return damaged();
    row->values.emplace_back(std::move(key), std::bit_cast<double>(bits));
  }
  if (at != bytes.size()) return damaged();
  return Status::Ok();
}

}  // namespace vigil::store
