// Functions of a library opened at run time with dlopen (NVML, cuBLASLt, NCCL), so that the vigil
// binary starts on nodes without them.
#pragma once

#include <dlfcn.h>

#include <string>

#include "vigil/core/status.h"

namespace vigil::gpu {

// Sets `fn` to `symbol` of `library` (a dlopen handle), typed as the caller declares it; false
// when the library lacks it.
template <typename Fn>
bool Resolve(void* library, Fn& fn, const char* symbol) {
  fn = reinterpret_cast<Fn>(dlsym(library, symbol));
  return fn != nullptr;
}

// Opens library `name` and resolves its entry points with `resolve_all(handle)` (Resolve for each,
// true when all are there). Unavailable naming the library, the loader's message and `install`
// (what to install) when it cannot be opened, or naming `api` when an entry point is missing.
template <typename ResolveAll>
Status OpenLibrary(const std::string& name, const char* install, const char* api,
                   ResolveAll resolve_all) {
  void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    return Status::Unavailable("cannot load " + name + " (" + dlerror() + "): " + install);
  }
  if (!resolve_all(lib)) {
    return Status::Unavailable(name + " lacks " + api + "'s entry points");
  }
  return Status::Ok();
}

}  // namespace vigil::gpu
