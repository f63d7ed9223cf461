//===- HostDeviceMath.h - Arithmetic both backends' kernels share -*- C++ -*-===//
//
// Plain inline functions without dependencies, callable from host code and
// from CUDA kernels (and their host emulation), so that the CPU and CUDA
// kernels compute these from one definition: the counter-based random
// stream (Random.h) and a convolution's and a transposed convolution's
// index maps.
//
//===----------------------------------------------------------------------===//
#ifndef COOP_RUNTIME_HOSTDEVICEMATH_H
#define COOP_RUNTIME_HOSTDEVICEMATH_H

#include <cstdint>

#ifdef __CUDACC__
#define COOP_HOST_DEVICE __host__ __device__
#else
#define COOP_HOST_DEVICE
#endif

namespace coop::rt {

COOP_HOST_DEVICE inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// A float in [0, 1), a multiple of 2^-24.
COOP_HOST_DEVICE inline float uniform(uint64_t key, uint64_t counter) {
  uint64_t bits = mix64(counter * 0x9E3779B97F4A7C15ull ^ key);
  return static_cast<float>(bits >> 40) * (1.0f / 16777216.0f);
}

/// The input row that output row `o` of a convolution reads through tap
/// `r`, or -1 if it falls in the padding.
COOP_HOST_DEVICE inline int64_t convolvedSource(int64_t o, int64_t r, int64_t stride,
                                                int64_t pad, int64_t dil, int64_t size) {
  int64_t i = o * stride - pad + r * dil;
  return i >= 0 && i < size ? i : -1;
}

/// The input row that reaches output row `o` of a transposed convolution
/// through tap `r` (or a convolution's input gradient), or -1 if none.
COOP_HOST_DEVICE inline int64_t transposedSource(int64_t o, int64_t r, int64_t stride,
                                                 int64_t pad, int64_t dil, int64_t size) {
  int64_t t = o + pad - r * dil;
  if (t < 0 || t % stride)
    return -1;
  t /= stride;
  return t < size ? t : -1;
}

} // namespace coop::rt

#endif // COOP_RUNTIME_HOSTDEVICEMATH_H
