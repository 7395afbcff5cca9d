// The set of benchmarks Vigil knows, in the order a suite runs them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "vigil/bench/benchmark.h"

namespace vigil {

class Registry {
 public:
  // REQUIRES: no benchmark of the same name was added before.
  void Add(std::unique_ptr<Benchmark> benchmark);

  // nullptr when no benchmark has that name. The registry keeps ownership.
  const Benchmark* Find(std::string_view name) const;
  std::vector<const Benchmark*> All() const;

  // The benchmarks to run: `names` in registry order when given (each must exist: otherwise
  // InvalidArgument listing the valid names), else every benchmark of `suite`.
  Result<std::vector<const Benchmark*>> Select(Suite suite,
                                               const std::vector<std::string>& names) const;

 private:
  std::vector<std::unique_ptr<Benchmark>> benchmarks_;
};

// Every benchmark built into this binary: the host benchmarks, and the GPU ones when Vigil was
// built with CUDA.
Registry BuiltinRegistry();

}  // namespace vigil
