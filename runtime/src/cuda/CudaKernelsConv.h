//===- CudaKernelsConv.h - Kernels: convolution and pooling -*- C++ -*-===//
//
// 2-D convolution (also transposed, grouped, strided, padded, dilated) with
// its gradients, and max, average and adaptive average pooling with
// theirs, mirroring the CPU kernels (runtime/src/CpuKernelsConv.cpp).
// Every output element is gathered by one thread,
// summed in the CPU kernel's order (in double where it sums in double).
// Inputs are float [N, C, H, W] through their strides (Operand::strides[0..3]);
// outputs are contiguous.
//
//===----------------------------------------------------------------------===//
#ifndef COOP_RUNTIME_CUDA_CUDAKERNELSCONV_H
#define COOP_RUNTIME_CUDA_CUDAKERNELSCONV_H

#include "CudaKernels.h"

namespace coop::rt::cuda {

/// The taps of a convolution: output row o of the "direct" side reads row
/// o * stride - pad + r * dilation of the other side (columns likewise).
struct ConvTaps {
  int64_t R = 1, S = 1; // kernel rows, columns
  int64_t sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
};

/// out[n, o, y, x] = bias[o] + sum over (j, r, s) of
/// src[n, g * srcPerGroup + j, p, q] * weight, with g = o / outPerGroup and,
/// when !transposed, (p, q) = (y, x) * stride - pad + (r, s) * dilation and
/// weight[o, j, r, s]; when transposed, (p, q) the rows and columns whose
/// taps (r, s) reach (y, x) and weight[g * srcPerGroup + j, o % outPerGroup,
/// r, s]. A convolution's forward and its transposed twin's grad_input take
/// the first form, a transposed convolution's forward and a convolution's
/// grad_input the second.
struct ConvGather {
  ConvTaps taps;
  bool transposed = false;
  Operand src, weight;
  int64_t N = 0, srcH = 0, srcW = 0, srcPerGroup = 0;
  int64_t outChannels = 0, outH = 0, outW = 0, outPerGroup = 0;
  bool hasBias = false;
  Operand bias; // its own strides, walked over biasShape
  Shape biasShape;
  char *out = nullptr;
};
cudaError_t launchConvGather(const ConvGather &p, cudaStream_t stream);

/// The weight gradient: dw[a, b, r, s] = sum over (n, p, q) of
/// A[n, a, p, q] * B[n, a / aPerGroup * bPerGroup + b, p * stride - pad +
/// r * dilation, q * ...], over A's rows p and columns q whose tap lands in
/// B. A convolution correlates A = grad_output with B = input, a transposed
/// one A = input with B = grad_output.
struct ConvWeightGrad {
  ConvTaps taps;
  Operand a, b;
  int64_t N = 0, aChannels = 0, aH = 0, aW = 0, aPerGroup = 0;
  int64_t bH = 0, bW = 0, bPerGroup = 0;
  char *out = nullptr; // [aChannels, bPerGroup, R, S]
};
cudaError_t launchConvWeightGrad(const ConvWeightGrad &p, cudaStream_t stream);

/// The bias gradient: grad_output [N, K, OH, OW] summed per channel k in
/// (n, oh, ow) order.
cudaError_t launchConvBiasGrad(const Operand &gradOutput, const Shape &shape, char *out,
                               cudaStream_t stream);

/// A pooling of input planes [N, C, H, W] into [N, C, OH, OW]; window
/// (oh, ow) starts at (oh, ow) * stride - padding.
struct Pool2d {
  int64_t N = 0, C = 0, H = 0, W = 0, OH = 0, OW = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  int64_t divisor = 0;    // average pooling: divisor_override, or 0
  bool includePad = true; // average pooling: count_include_pad
  Operand in;             // forward: self; backward: grad_output
  Operand indices;        // max pooling backward: the forward's indices
  char *out = nullptr;
  char *outIndices = nullptr; // max pooling forward: int64, into H * W
};
/// max_pool2d_with_indices: NaN wins, else the first maximum in window order.
cudaError_t launchMaxPool(const Pool2d &p, cudaStream_t stream);
/// Each input element sums, in float and output order, the gradients of
/// the windows that picked it.
cudaError_t launchMaxPoolBackward(const Pool2d &p, cudaStream_t stream);
cudaError_t launchAvgPool(const Pool2d &p, cudaStream_t stream);
cudaError_t launchAvgPoolBackward(const Pool2d &p, cudaStream_t stream);
/// _adaptive_avg_pool2d and its backward: only N, C, H, W, OH, OW, in, out.
cudaError_t launchAdaptiveAvgPool(const Pool2d &p, cudaStream_t stream);
cudaError_t launchAdaptiveAvgPoolBackward(const Pool2d &p, cudaStream_t stream);

} // namespace coop::rt::cuda

#endif // COOP_RUNTIME_CUDA_CUDAKERNELSCONV_H
