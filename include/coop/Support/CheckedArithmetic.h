//===- CheckedArithmetic.h - Byte and element counts that never wrap -*- C++ -*-===//
//
// Offsets, sizes, element offsets and strides come from files; every sum
// and product of them goes through these, so a value near 2^63 is refused
// rather than wrapped. Header-only and dependency-free: the planner core,
// the dialects and the runtime all use it.
//
//===----------------------------------------------------------------------===//
#ifndef COOP_SUPPORT_CHECKEDARITHMETIC_H
#define COOP_SUPPORT_CHECKEDARITHMETIC_H

#include <cstdint>
#include <optional>
#include <string>

namespace coop {

/// The largest byte count (tensor, workspace, budget) the compiler plans:
/// the sum of any two stays representable.
constexpr int64_t kMaxPlannedBytes = int64_t(1) << 62;

/// a + b, or nullopt when it does not fit in int64_t.
inline std::optional<int64_t> checkedAdd(int64_t a, int64_t b) {
  int64_t result;
  if (__builtin_add_overflow(a, b, &result))
    return std::nullopt;
  return result;
}

/// a * b, or nullopt when it does not fit in int64_t.
inline std::optional<int64_t> checkedMul(int64_t a, int64_t b) {
  int64_t result;
  if (__builtin_mul_overflow(a, b, &result))
    return std::nullopt;
  return result;
}

/// base + a * b (an element `a` strides of `b` past `base`), or nullopt
/// when a step of it does not fit in int64_t.
inline std::optional<int64_t> checkedMulAdd(int64_t base, int64_t a,
                                            int64_t b) {
  std::optional<int64_t> product = checkedMul(a, b);
  return product ? checkedAdd(base, *product) : std::nullopt;
}

/// The index of the farthest storage element a strided layout addresses:
/// elementOffset plus (size - 1) * stride over its dimensions of non-zero
/// size, or nullopt when a step of it does not fit in int64_t. Sizes and
/// strides must be non-negative; the compiler's coop_rt verifier and the
/// runtime's plan verifier both bound a buffer's reads with it.
template <typename Sizes, typename Strides>
std::optional<int64_t> lastElementAddressed(const Sizes &sizes,
                                            const Strides &strides,
                                            int64_t elementOffset) {
  std::optional<int64_t> last = elementOffset;
  for (size_t d = 0; last && d < size_t(sizes.size()); ++d)
    if (sizes[d] > 0)
      last = checkedMulAdd(*last, sizes[d] - 1, strides[d]);
  return last;
}

/// "[offset, offset + size)" for messages, also when the end is past 2^63.
inline std::string byteRangeText(int64_t offset, int64_t size) {
  std::optional<int64_t> end = checkedAdd(offset, size);
  return "[" + std::to_string(offset) + ", " +
         (end ? std::to_string(*end)
              : std::to_string(offset) + " + " + std::to_string(size)) +
         ")";
}

} // namespace coop

#endif // COOP_SUPPORT_CHECKEDARITHMETIC_H
