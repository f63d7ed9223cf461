//===- Random.h - The counter-based random stream ---------------*- C++ -*-===//
//
// In step s (0-based: the steps a session ran before it), element i of a
// random kernel with rng (seed, offset) draws uniform(seed, offset + i +
// s * S): a keyed splitmix64 hash of the counter. S, the step's random
// span, is the largest offset + element count of the plan's random
// launches (the exporter's final rng counter), so every step draws fresh
// values and a recomputation within a step redraws exactly the same ones,
// in any order. python/coop/rng.py mirrors this for the PyTorch
// reference.
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

/// The counter of element 0 of a random launch with rng offset `offset` in
/// step `step` of a plan whose random span is `span`.
inline uint64_t stepOffset(uint64_t offset, int64_t step, uint64_t span) {
  return offset + static_cast<uint64_t>(step) * span;
}

/// Seeded contents of a step argument (see coop_session_init_random).
void fillRandomArgument(const std::string &name, coop_role_t role, const Tensor &layout,
                        uint64_t seed, char *out);

} // namespace coop::rt

#endif // COOP_RUNTIME_RANDOM_H
