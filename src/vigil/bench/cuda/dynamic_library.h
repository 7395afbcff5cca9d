// Functions of a library opened at run time with dlopen (NVML, cuBLASLt, NCCL), so that the vigil
// binary starts on nodes without them.
#pragma once

#include <dlfcn.h>

namespace vigil::gpu {

// Sets `fn` to `symbol` of `library` (a dlopen handle), typed as the caller declares it; false
// when the library lacks it.
template <typename Fn>
bool Resolve(void* library, Fn& fn, const char* symbol) {
  fn = reinterpret_cast<Fn>(dlsym(library, symbol));
  return fn != nullptr;
}

}  // namespace vigil::gpu
