// Random numbers for simulators and generators: one reproducible stream per (seed, stream index),
// so that run i of a simulation is the same whether or not other runs are made.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>

namespace vigil {

class Rng {
 public:
  // Streams for different indices are decorrelated by SplitMix64 (Steele et al. 2014), the
  // seeding that the xoshiro authors recommend.
  Rng(uint64_t seed, uint64_t stream) : engine_(Mix(seed ^ Mix(stream + kGolden))) {}

  // Uniform in (0, 1]: never 0, so that log() of it is finite.
  double Uniform() { return static_cast<double>((engine_() >> 11) + 1) * 0x1.0p-53; }

  // Exponential with the given rate. REQUIRES: rate > 0.
  double Exponential(double rate) { return -std::log(Uniform()) / rate; }

  // Normal with the given mean and standard deviation.
  double Normal(double mean, double sd) { return mean + sd * normal_(engine_); }

  // True with probability p.
  bool Bernoulli(double p) { return Uniform() <= p; }

  // Uniform integer in [0, n). REQUIRES: n > 0.
  uint64_t Below(uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(engine_); }

  std::mt19937_64& engine() { return engine_; }

 private:
  static constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ULL;
  static uint64_t Mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  std::mt19937_64 engine_;
  std::normal_distribution<double> normal_;
};

}  // namespace vigil
