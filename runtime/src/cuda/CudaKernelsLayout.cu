//===- CudaKernelsLayout.cu - Kernels: activations, comparisons, fills and layout ops (cat, stack, split, pad, ...) ===//
//
// See CudaKernelsLayout.h. One thread per output element, which reads the
// element it takes (no atomics, no order between threads).
//
//===----------------------------------------------------------------------===//

#include "CudaDevice.cuh"
#include "CudaKernelsLayout.h"

namespace coop::rt::cuda {
namespace {

/// Copies one element of `width` bytes (1, 2, 4 or 8) as it is.
__device__ inline void moveElement(char *dst, const char *src, int width) {
  switch (width) {
  case 1: *dst = *src; break;
  case 2: *reinterpret_cast<uint16_t *>(dst) = *reinterpret_cast<const uint16_t *>(src); break;
  case 4: *reinterpret_cast<uint32_t *>(dst) = *reinterpret_cast<const uint32_t *>(src); break;
  default: *reinterpret_cast<uint64_t *>(dst) = *reinterpret_cast<const uint64_t *>(src); break;
  }
}

/// Element `off` of a float32, int64 or bool operand as double (the CPU's
/// valueAt).
__device__ inline double loadValue(const Operand &t, int64_t off) {
  return t.dtype == F32 ? loadFloat(t, off) : static_cast<double>(loadInt(t, off));
}

/// Stores `value` as a float32, int64 or bool element (the CPU's store).
__device__ inline void storeValue(char *p, int dtype, double value) {
  switch (dtype) {
  case F32: *reinterpret_cast<float *>(p) = static_cast<float>(value); break;
  case I64: *reinterpret_cast<int64_t *>(p) = static_cast<int64_t>(value); break;
  default: *reinterpret_cast<uint8_t *>(p) = value != 0; break;
  }
}

/// The address of element `off` (in elements) of `t`'s elements of `width` bytes.
__device__ inline const char *elementAt(const Operand &t, int64_t off, int width) {
  return t.data + off * width;
}

/// `i` modulo `size`, in [0, size).
__device__ inline int64_t wrap(int64_t i, int64_t size) {
  return size ? ((i % size) + size) % size : 0;
}

__global__ void stridedCopyKernel(StridedCopy p, int64_t n) {
  COOP_GRID_STRIDE(i, n) {
    char *dst = p.dst + offsetOf(i, p.shape, p.dstStrides) * p.width;
    if (!p.src.data) {
      storeValue(dst, p.dstDtype, p.value);
      continue;
    }
    int64_t off = offsetOf(i, p.shape, p.src.strides);
    if (p.convert)
      storeValue(dst, p.dstDtype, loadValue(p.src, off));
    else
      moveElement(dst, elementAt(p.src, off, p.width), p.width);
  }
}

__global__ void maskedFillKernel(MaskedFill p, int64_t n) {
  COOP_GRID_STRIDE(i, n) {
    char *out = p.out + i * p.width;
    if (loadInt(p.mask, offsetOf(i, p.shape, p.mask.strides)))
      storeValue(out, p.self.dtype, p.value);
    else
      moveElement(out, elementAt(p.self, offsetOf(i, p.shape, p.self.strides), p.width),
                  p.width);
  }
}

__global__ void triangleKernel(Triangle p, int64_t n) {
  int64_t rows = p.shape.dims[p.shape.rank - 2], cols = p.shape.dims[p.shape.rank - 1];
  const uint64_t zero = 0;
  COOP_GRID_STRIDE(k, n) {
    int64_t j = k % cols, i = (k / cols) % rows;
    bool keep = p.lower ? j - i <= p.diagonal : j - i >= p.diagonal;
    const char *from = keep ? elementAt(p.self, offsetOf(k, p.shape, p.self.strides), p.width)
                            : reinterpret_cast<const char *>(&zero);
    moveElement(p.out + k * p.width, from, p.width);
  }
}

__global__ void logicalKernel(Logical p, int64_t n) {
  COOP_GRID_STRIDE(i, n) {
    int64_t off = offsetOf(i, p.shape, p.self.strides);
    if (p.op != Logic::Not) {
      bool equal = loadValue(p.self, off) == p.other;
      reinterpret_cast<uint8_t *>(p.out)[i] = equal == (p.op == Logic::Equal);
    } else if (p.self.dtype == BOOL) {
      reinterpret_cast<uint8_t *>(p.out)[i] = !loadInt(p.self, off);
    } else {
      reinterpret_cast<int64_t *>(p.out)[i] = ~loadInt(p.self, off);
    }
  }
}

__global__ void rollKernel(Roll p, int64_t n) {
  COOP_GRID_STRIDE(k, n) {
    int64_t off = 0;
    if (p.flat) {
      off = offsetOf(wrap(k - p.shift[0], n), p.shape, p.self.strides);
    } else {
      int64_t linear = k;
      for (int d = p.shape.rank - 1; d >= 0; --d) {
        int64_t size = p.shape.dims[d];
        off += wrap(linear % size - p.shift[d], size) * p.self.strides[d];
        linear /= size;
      }
    }
    moveElement(p.out + k * p.width, elementAt(p.self, off, p.width), p.width);
  }
}

__global__ void arangeKernel(char *out, int dtype, int64_t n, double start, double step) {
  COOP_GRID_STRIDE(i, n)
    storeValue(out + i * (dtype == F32 ? 4 : 8), dtype, start + i * step);
}

} // namespace

cudaError_t launchStridedCopy(const StridedCopy &p, cudaStream_t stream) {
  int64_t n = numel(p.shape);
  return launchOver(n, stream, stridedCopyKernel, p, n);
}

cudaError_t launchMaskedFill(const MaskedFill &p, cudaStream_t stream) {
  int64_t n = numel(p.shape);
  return launchOver(n, stream, maskedFillKernel, p, n);
}

cudaError_t launchTriangle(const Triangle &p, cudaStream_t stream) {
  int64_t n = numel(p.shape);
  return launchOver(n, stream, triangleKernel, p, n);
}

cudaError_t launchLogical(const Logical &p, cudaStream_t stream) {
  int64_t n = numel(p.shape);
  return launchOver(n, stream, logicalKernel, p, n);
}

cudaError_t launchRoll(const Roll &p, cudaStream_t stream) {
  int64_t n = numel(p.shape);
  return launchOver(n, stream, rollKernel, p, n);
}

cudaError_t launchArange(char *out, int dtype, int64_t count, double start, double step,
                         cudaStream_t stream) {
  return launchOver(count, stream, arangeKernel, out, dtype, count, start, step);
}

} // namespace coop::rt::cuda
