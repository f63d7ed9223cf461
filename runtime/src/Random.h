//===- Random.h - The counter-based random stream ---------------*- C++ -*-===//
//
// Element i of a random kernel with rng (seed, offset) draws
// uniform(seed, offset + i): a keyed splitmix64 hash of the counter, so a
// recomputation redraws exactly the same values, in any order.
// runtime/test/small_models.py mirrors this for the PyTorch reference.
//
//===----------------------------------------------------------------------===//
#ifndef COOP_RUNTIME_RANDOM_H
#define COOP_RUNTIME_RANDOM_H

#include "HostDeviceMath.h"
#include "Kernel.h"
#include "coop/runtime.h"

#include <cstdint>
#include <string>

namespace coop::rt {

inline uint64_t streamKey(uint64_t seed) {
  return mix64(seed * 0x9E3779B97F4A7C15ull ^ 0xD1B54A32D192ED03ull);
}

/// Seeded contents of a step argument (see coop_session_init_random).
void fillRandomArgument(const std::string &name, coop_role_t role, const Tensor &layout,
                        uint64_t seed, char *out);

} // namespace coop::rt

#endif // COOP_RUNTIME_RANDOM_H
