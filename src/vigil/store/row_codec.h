// The stored form of a node's flat metrics (store::Upload::row): its keys and values in order,
// in bytes that read back into the same FleetRow without parsing text. The node's name and
// hardware class are columns of their own, so that a rename does not rewrite the row.
//
//   u32 count, then per value: u32 key length, the key's bytes, the value's IEEE 754 binary64
//   bits as u64 (NaN included); every integer little-endian, whatever the machine.
#pragma once

#include <string>
#include <string_view>

#include "vigil/core/status.h"
#include "vigil/results/summary.h"

namespace vigil::store {

// The row's values in the stored form (row.node and row.hardware are not written).
std::string EncodeRowValues(const FleetRow& row);

// Reads EncodeRowValues' bytes into row->values (replacing them). IoError naming `what` for bytes
// that are not such a form (a damaged database).
Status DecodeRowValues(std::string_view bytes, std::string_view what, FleetRow* row);

}  // namespace vigil::store
