//===- CudaKernelsFill.cu - Kernels: fills, copies and random -------------===//
//
// See CudaKernels.h. Fills, strided and overlapping copies, and bernoulli_
// and native_dropout on the counter-based random stream.
//
//===----------------------------------------------------------------------===//

#include "CudaDevice.cuh"

namespace coop::rt::cuda {
namespace {

__global__ void fillKernel(char *out, int dtype, int64_t n, double value) {
  COOP_GRID_STRIDE(i, n) {
    switch (dtype) {
    case F32: reinterpret_cast<float *>(out)[i] = static_cast<float>(value); break;
    case F64: reinterpret_cast<double *>(out)[i] = value; break;
    case I64: reinterpret_cast<int64_t *>(out)[i] = static_cast<int64_t>(value); break;
    case I32: reinterpret_cast<int32_t *>(out)[i] = static_cast<int32_t>(value); break;
    default: reinterpret_cast<uint8_t *>(out)[i] = value != 0; break;
    }
  }
}

template <typename T>
__global__ void copyKernel(char *dst, Operand src, Shape shape, int64_t n) {
  COOP_GRID_STRIDE(i, n)
    reinterpret_cast<T *>(dst)[i] =
        reinterpret_cast<const T *>(src.data)[offsetOf(i, shape, src.strides)];
}

__global__ void memmoveKernel(char *dst, const char *src, int64_t bytes, bool backwards) {
  COOP_SINGLE_THREAD();
  if (backwards)
    for (int64_t i = bytes - 1; i >= 0; --i)
      dst[i] = src[i];
  else
    for (int64_t i = 0; i < bytes; ++i)
      dst[i] = src[i];
}

__global__ void randomKernel(Random p, int64_t n) {
  COOP_GRID_STRIDE(i, n) {
    float u = uniform(p.key, p.offset + i);
    if (!p.mask) { // bernoulli_: 1 with probability p
      reinterpret_cast<float *>(p.out)[i] = u < p.p ? 1.f : 0.f;
      continue;
    }
    bool keep = u < 1 - p.p;
    p.mask[i] = keep;
    reinterpret_cast<float *>(p.out)[i] =
        keep ? loadFloat(p.in, offsetOf(i, p.shape, p.in.strides)) * p.scale : 0.f;
  }
}

} // namespace

cudaError_t launchFill(char *out, int dtype, int64_t count, double value, cudaStream_t stream) {
  return launchOver(count, stream, fillKernel, out, dtype, count, value);
}

cudaError_t launchCopy(char *dst, const Operand &src, const Shape &shape, int width,
                       bool overlap, bool backwards, cudaStream_t stream) {
  int64_t n = numel(shape);
  if (n == 0)
    return cudaGetLastError();
  if (overlap) {
    COOP_LAUNCH(memmoveKernel, 1, 1, stream)(dst, src.data, n * width, backwards);
    return cudaGetLastError();
  }
  switch (width) {
  case 1: return launchOver(n, stream, copyKernel<uint8_t>, dst, src, shape, n);
  case 2: return launchOver(n, stream, copyKernel<uint16_t>, dst, src, shape, n);
  case 4: return launchOver(n, stream, copyKernel<uint32_t>, dst, src, shape, n);
  case 8: return launchOver(n, stream, copyKernel<uint64_t>, dst, src, shape, n);
  default: return cudaErrorInvalidValue;
  }
}

cudaError_t launchRandom(const Random &p, cudaStream_t stream) {
  int64_t n = numel(p.shape);
  return launchOver(n, stream, randomKernel, p, n);
}

} // namespace coop::rt::cuda
