// A Store that keeps everything in memory, for tests of the code above the store (the fleet
// service, the API) that need no database file: it behaves as the SQLite store does on every
// behaviour that store_test.cc checks (it runs the same tests on both), and forgets everything
// when destroyed. Writes are durable only in the sense that later reads see them; Health() is
// always OK. Thread-safe (one mutex).
#pragma once

#include <memory>

#include "vigil/store/store.h"

namespace vigil::store {

std::unique_ptr<Store> NewMemoryStore();

}  // namespace vigil::store
