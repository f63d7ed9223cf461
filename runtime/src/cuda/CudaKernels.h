//===- CudaKernels.h - The CUDA backend's own kernels -----------*- C++ -*-===//
//
// Plain structs and launchers, no protobuf and no runtime headers, so that
// nvcc compiles only the kernel files. The types every kernel file shares,
// and the launchers of the families whose handlers are in CudaBackend.cpp:
// each family's kernels in CudaKernels<Family>.cu, as the CPU reference
// kernels are in runtime/src/CpuKernels<Family>.cpp (Elementwise, Fill,
// Reduction, Matmul, Loss; nll_loss2d's handler is in CudaOpsNorm.cpp).
// Each launcher enqueues on `stream` and returns the launch status
// (cudaGetLastError). The kernels mirror the CPU kernels: the same
// formulas, the same sequential double summation order for reductions,
// softmax and the fallback matrix product, and the same counter-based
// random stream. The kernel files are compiled with --fmad=false so that
// float arithmetic is not contracted into FMAs the CPU does not use.
//
//===----------------------------------------------------------------------===//
#ifndef COOP_RUNTIME_CUDA_CUDAKERNELS_H
#define COOP_RUNTIME_CUDA_CUDAKERNELS_H

#include <cuda_runtime_api.h>

#include <cstdint>

namespace coop::rt::cuda {

constexpr int kRank = 8;

/// Element types the kernels read (the Plan's DType values).
enum DType : int { F32 = 1, F64 = 4, I64 = 5, I32 = 6, U8 = 9, BOOL = 10 };

/// A strided operand, its strides already aligned to the shape being
/// walked (0 where it broadcasts).
struct Operand {
  const char *data = nullptr;
  int dtype = F32;
  int64_t strides[kRank] = {};
};

/// A shape walked in row-major order.
struct Shape {
  int rank = 0;
  int64_t dims[kRank] = {};
};

/// A strided tensor read by row-major element index, as Tensor::at does.
/// data == nullptr: an absent optional tensor.
struct ElementView {
  Operand t;
  Shape shape;
};

enum class Op : int {
  Add,          // a + alpha * b
  Sub,          // a - alpha * b
  Mul,          // a * b
  Div,          // a / b
  Relu,         // a > 0 ? a : 0
  Sqrt,         // sqrt(a)
  ThresholdBwd, // b <= threshold ? 0 : a
  DropoutBwd,   // a * b * scale
  Addcmul,      // a + value * (b * c)
  Addcdiv,      // a + value * (b / c)
  Gelu,         // flag: tanh approximation
  GeluBwd,      // a: grad, b: x
  Scale,        // alpha * a (addmm's beta * self)
  AddInt64,     // int64: a + alpha * b
  MulInt64,     // int64: a * b
  Sigmoid,      // 1 / (1 + exp(-a))
  Tanh,         // tanh(a)
  SigmoidBwd,   // a: grad, b: output
  TanhBwd,      // a: grad, b: output
  Neg,          // -a
  PowScalarBase, // pow(scalar, a): pow.Scalar, a scalar base (Adam's bias corrections)
};

struct Elementwise {
  Op op = Op::Add;
  Shape shape;  // the output's
  char *out = nullptr; // contiguous
  int numInputs = 0;
  Operand in[3];
  bool scalarB = false; // b is `scalar`, not in[1]
  double scalar = 0, alpha = 1;
  int64_t scalarInt = 0, alphaInt = 1;
  bool flag = false;
};
cudaError_t launchElementwise(const Elementwise &p, cudaStream_t stream);

/// Fills `count` contiguous elements of `width` bytes (dtype F32, F64, I64,
/// I32 or a byte type) with `value`.
cudaError_t launchFill(char *out, int dtype, int64_t count, double value, cudaStream_t stream);

/// A strided copy of `src` (walked over `shape`) into contiguous `dst`,
/// elements of `width` bytes (1, 2, 4, 8). `overlap`: the ranges may
/// overlap (a contiguous memmove); copied in order by one thread.
cudaError_t launchCopy(char *dst, const Operand &src, const Shape &shape, int width,
                       bool overlap, bool backwards, cudaStream_t stream);

/// native_dropout (mask != nullptr) or bernoulli_ (mask == nullptr):
/// element i draws uniform(key, offset + i).
struct Random {
  Shape shape;
  Operand in;         // dropout's input
  char *out = nullptr;
  char *mask = nullptr;
  uint64_t key = 0, offset = 0;
  double p = 0;
  float scale = 0;
};
cudaError_t launchRandom(const Random &p, cudaStream_t stream);

/// sum/mean: one thread per output element sums its reduced elements
/// sequentially in double, in the CPU kernel's row-major order.
struct Reduce {
  Shape kept;    // the input's shape with reduced dims set to 1
  Shape reduced; // the input's shape with kept dims set to 1
  Operand in;    // strides of the input
  char *out = nullptr;
  int64_t outCount = 0, count = 0;
  bool mean = false;
  bool integer = false; // an int64 sum of bool or int64 elements
};
cudaError_t launchReduce(const Reduce &p, cudaStream_t stream);

/// softmax / log_softmax forward (in[0] = x) and backward (in[0] = grad,
/// in[1] = output): one thread per line along the dim.
struct Softmax {
  Shape outer; // the shape with the dim set to 1
  int64_t length = 0;
  Operand in[2];
  int64_t lineStride[3] = {}; // along the dim: in[0], in[1], out
  int64_t outStrides[kRank] = {}; // of the output (contiguous), aligned
  char *out = nullptr;
  bool log = false, backward = false;
};
cudaError_t launchSoftmax(const Softmax &p, cudaStream_t stream);

/// nll_loss_forward: one thread; nll_loss_backward: one thread per element.
struct Nll {
  const char *self = nullptr;
  int64_t rowStride = 0, classStride = 0; // self
  const char *target = nullptr;
  int64_t targetStride = 0;
  int64_t N = 0, C = 0, ignore = -100;
  bool mean = true;
  char *out = nullptr, *totalWeight = nullptr; // forward outputs
  const char *grad = nullptr, *total = nullptr; // backward inputs
};
cudaError_t launchNllForward(const Nll &p, cudaStream_t stream);
cudaError_t launchNllBackward(const Nll &p, cudaStream_t stream);

/// nll_loss2d_forward (one thread) and nll_loss2d_backward (one thread per
/// element): self [N, C, H, W], target [N, H, W], no class weights.
struct Nll2d {
  Operand self, target; // their own strides
  int64_t N = 0, C = 0, H = 0, W = 0, ignore = -100;
  bool mean = true;
  char *out = nullptr, *totalWeight = nullptr;  // forward outputs
  const char *grad = nullptr, *total = nullptr; // backward inputs
};
cudaError_t launchNll2dForward(const Nll2d &p, cudaStream_t stream);
cudaError_t launchNll2dBackward(const Nll2d &p, cudaStream_t stream);

/// out[t, i, j] = alpha * sum_k a[t, i, k] * b[t, k, j] (+ beta * bias),
/// summed in double in k order: the CPU kernel's product, for operands
/// cuBLAS cannot take (or without cuBLAS).
struct Matmul {
  const char *a = nullptr, *b = nullptr;
  int64_t batch = 1, M = 0, N = 0, K = 0;
  int64_t as0 = 0, as1 = 0, ab = 0, bs0 = 0, bs1 = 0, bb = 0;
  bool hasBias = false;
  Operand bias; // aligned to the [batch?, M, N] output
  Shape outShape;
  double alpha = 1, beta = 0;
  char *out = nullptr;
};
cudaError_t launchMatmul(const Matmul &p, cudaStream_t stream);

} // namespace coop::rt::cuda

#endif // COOP_RUNTIME_CUDA_CUDAKERNELS_H
