//===- CudaKernelsLayout.h - Kernels: activations, comparisons, fills and layout ops (cat, stack, split, pad, ...) -*- C++ -*-===//
//
// The kernels of runtime/src/CpuKernelsLayout.cpp: masks, comparisons,
// fills and element moves, joins, splits and scattered gradients (the activations are cases of CudaKernels.h's
// elementwise kernel). Elements move as raw bytes of their width, so any
// dtype moves unchanged; a conversion goes through double between
// float32, int64 and bool, as the CPU kernels' valueAt / store.
//
//===----------------------------------------------------------------------===//
#ifndef COOP_RUNTIME_CUDA_CUDAKERNELSLAYOUT_H
#define COOP_RUNTIME_CUDA_CUDAKERNELSLAYOUT_H

#include "CudaKernels.h"

namespace coop::rt::cuda {

/// dst = src, both strided views walked over `shape` (src broadcasts where
/// its stride is 0), or dst = `value` everywhere when src.data is null.
/// The one copy of the layout ops: cat, stack and split copy between a
/// view of the joined tensor and a piece, slice/select_backward and
/// constant_pad_nd fill and then copy into a window, copy_ and fill_
/// convert.
struct StridedCopy {
  Shape shape;
  Operand src;
  double value = 0;
  char *dst = nullptr;
  int dstDtype = F32;
  int64_t dstStrides[kRank] = {};
  int width = 4;        // bytes of an element of dst (and src, unless convert)
  bool convert = false; // src's value through double into dstDtype
};
cudaError_t launchStridedCopy(const StridedCopy &p, cudaStream_t stream);

/// masked_fill.Scalar: out = value where the (broadcast) bool mask is set,
/// else self; out contiguous, self and mask aligned to its shape.
struct MaskedFill {
  Shape shape;
  Operand self, mask;
  double value = 0;
  char *out = nullptr;
  int width = 4;
};
cudaError_t launchMaskedFill(const MaskedFill &p, cudaStream_t stream);

/// tril / triu: element (..., i, j) of self where j - i <= diagonal
/// (lower) or j - i >= diagonal (upper), else zero; out contiguous.
struct Triangle {
  Shape shape;
  Operand self;
  int64_t diagonal = 0;
  bool lower = true;
  char *out = nullptr;
  int width = 4;
};
cudaError_t launchTriangle(const Triangle &p, cudaStream_t stream);

/// bitwise_not (logical not of bool, ~ of int64) and eq/ne.Scalar (a bool
/// of self == other); out contiguous.
enum class Logic : int { Not, Equal, NotEqual };
struct Logical {
  Logic op = Logic::Not;
  Shape shape;
  Operand self;
  double other = 0; // rounded to float for a float32 self, as PyTorch
  char *out = nullptr;
};
cudaError_t launchLogical(const Logical &p, cudaStream_t stream);

/// roll: out[i] = self[i - shift] modulo the size along every dimension,
/// or, `flat`, along the row-major order (shift[0]); out contiguous.
struct Roll {
  Shape shape;
  Operand self;
  int64_t shift[kRank] = {};
  bool flat = false;
  char *out = nullptr;
  int width = 4;
};
cudaError_t launchRoll(const Roll &p, cudaStream_t stream);

/// arange: out[i] = start + i * step, float32 or int64.
cudaError_t launchArange(char *out, int dtype, int64_t count, double start, double step,
                         cudaStream_t stream);

} // namespace coop::rt::cuda

#endif // COOP_RUNTIME_CUDA_CUDAKERNELSLAYOUT_H
