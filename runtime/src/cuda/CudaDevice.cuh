//===- CudaDevice.cuh - What every kernel file of the backend shares -*- C++ -*-===//
//
// Device helpers (strided offsets, loads, ElementView reads;
// HostDeviceMath.h has the random stream), the launch macros and
// launchOver. Every kernel is a grid-stride loop, so the same
// source also compiles as plain C++ for host emulation
// (runtime/test/cuda-emulation): there a "launch" is one call of the
// kernel function with one block of one thread, which walks every index in
// order.
//
//===----------------------------------------------------------------------===//
#ifndef COOP_RUNTIME_CUDA_CUDADEVICE_CUH
#define COOP_RUNTIME_CUDA_CUDADEVICE_CUH

#include "CudaKernels.h"
#include "HostDeviceMath.h"

#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
/// kernel<<<blocks, threads, 0, stream>>>(...): write
/// COOP_LAUNCH(kernel, blocks, threads, stream)(...).
#define COOP_LAUNCH(kernel, blocks, threads, stream)                           \
  kernel<<<(blocks), (threads), 0, (stream)>>>
#else
#include "CudaHostEmulation.h"
#define COOP_LAUNCH(kernel, blocks, threads, stream) kernel
#endif

/// for (int64_t i = <this thread's first>; i < n; i += <all threads>)
#define COOP_GRID_STRIDE(i, n)                                                 \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n);  \
       i += int64_t(blockDim.x) * gridDim.x)

/// Kernels that must run on one thread (a sequential sum, an ordered copy).
#define COOP_SINGLE_THREAD()                                                   \
  if (blockIdx.x != 0 || threadIdx.x != 0)                                     \
  return

namespace coop::rt::cuda {

constexpr int kThreads = 256;

inline unsigned blocksFor(int64_t n) {
  int64_t blocks = (n + kThreads - 1) / kThreads;
  if (blocks < 1)
    blocks = 1;
  return static_cast<unsigned>(blocks > 65535 ? 65535 : blocks);
}

/// Launches `kernel(args...)` on a thread for each of `count` elements
/// (nothing when there are none) and returns the launch status.
template <typename... Params, typename... Args>
cudaError_t launchOver(int64_t count, cudaStream_t stream, void (*kernel)(Params...),
                       Args... args) {
  if (count > 0)
    COOP_LAUNCH(kernel, blocksFor(count), kThreads, stream)(args...);
  return cudaGetLastError();
}

inline int64_t numel(const Shape &s) {
  int64_t n = 1;
  for (int d = 0; d < s.rank; ++d)
    n *= s.dims[d];
  return n;
}

/// The offset of row-major element `linear` of `shape` under `strides`.
__device__ inline int64_t offsetOf(int64_t linear, const Shape &shape,
                                   const int64_t *strides) {
  int64_t off = 0;
  for (int d = shape.rank - 1; d >= 0; --d) {
    int64_t size = shape.dims[d];
    int64_t idx = size ? linear % size : 0;
    linear = size ? linear / size : 0;
    off += idx * strides[d];
  }
  return off;
}

__device__ inline int64_t loadInt(const Operand &t, int64_t off) {
  switch (t.dtype) {
  case I64: return reinterpret_cast<const int64_t *>(t.data)[off];
  case I32: return reinterpret_cast<const int32_t *>(t.data)[off];
  default: return reinterpret_cast<const uint8_t *>(t.data)[off];
  }
}

/// An operand element as float32: bool and integer operands of a float
/// result are promoted, as on the CPU.
__device__ inline float loadFloat(const Operand &t, int64_t off) {
  if (t.dtype == F32)
    return reinterpret_cast<const float *>(t.data)[off];
  return static_cast<float>(loadInt(t, off));
}

/// Row-major element `linear` of a strided view, as float32 or as an
/// integer.
__device__ inline float floatAt(const ElementView &v, int64_t linear) {
  return loadFloat(v.t, offsetOf(linear, v.shape, v.t.strides));
}

__device__ inline int64_t intAt(const ElementView &v, int64_t linear) {
  return loadInt(v.t, offsetOf(linear, v.shape, v.t.strides));
}

} // namespace coop::rt::cuda

#endif // COOP_RUNTIME_CUDA_CUDADEVICE_CUH
