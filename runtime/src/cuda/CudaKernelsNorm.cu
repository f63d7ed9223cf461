//===- CudaKernelsNorm.cu - Kernels: layer norm and batch norm ------------===//
//
// See CudaKernelsNorm.h. The formulas, their evaluation order and the
// float/double conversions are the CPU kernels', term by term.
//
//===----------------------------------------------------------------------===//

#include "CudaDevice.cuh"
#include "CudaKernelsNorm.h"

namespace coop::rt::cuda {
namespace {

/// An optional parameter's element, or `fallback` when it is absent.
__device__ inline float floatOr(const ElementView &v, int64_t linear, float fallback) {
  return v.t.data ? floatAt(v, linear) : fallback;
}

//===----------------------------------------------------------------------===//
// Layer norm
//===----------------------------------------------------------------------===//

__global__ void layerNormKernel(LayerNorm p) {
  COOP_GRID_STRIDE(r, p.rows) {
    int64_t first = r * p.cols;
    double sum = 0, sq = 0;
    for (int64_t k = 0; k < p.cols; ++k)
      sum += floatAt(p.input, first + k);
    double mu = sum / p.cols;
    for (int64_t k = 0; k < p.cols; ++k) {
      double d = floatAt(p.input, first + k) - mu;
      sq += d * d;
    }
    double inv = 1 / sqrt(sq / p.cols + p.eps);
    reinterpret_cast<float *>(p.mean)[r] = static_cast<float>(mu);
    reinterpret_cast<float *>(p.rstd)[r] = static_cast<float>(inv);
    for (int64_t k = 0; k < p.cols; ++k) {
      double x = (floatAt(p.input, first + k) - mu) * inv;
      if (p.weight.t.data)
        x *= floatAt(p.weight, k);
      if (p.bias.t.data) // not `+ 0`: that would turn -0 into +0
        x += floatAt(p.bias, k);
      reinterpret_cast<float *>(p.out)[first + k] = static_cast<float>(x);
    }
  }
}

/// The weighted gradient and the normalized input at (r, k).
__device__ inline void layerNormTerms(const LayerNorm &p, int64_t r, int64_t k, double mu,
                                      double inv, double &gw, double &xh) {
  int64_t at = r * p.cols + k;
  gw = floatAt(p.grad, at) * (p.weight.t.data ? double(floatAt(p.weight, k)) : 1.0);
  xh = (floatAt(p.input, at) - mu) * inv;
}

__global__ void layerNormInputGradKernel(LayerNorm p) {
  COOP_GRID_STRIDE(r, p.rows) {
    double mu = floatAt(p.savedMean, r), inv = floatAt(p.savedRstd, r), sg = 0, sgx = 0;
    double gw, xh;
    for (int64_t k = 0; k < p.cols; ++k) {
      layerNormTerms(p, r, k, mu, inv, gw, xh);
      sg += gw;
      sgx += gw * xh;
    }
    for (int64_t k = 0; k < p.cols; ++k) {
      layerNormTerms(p, r, k, mu, inv, gw, xh);
      reinterpret_cast<float *>(p.gradInput)[r * p.cols + k] =
          static_cast<float>(inv * (gw - sg / p.cols - xh * sgx / p.cols));
    }
  }
}

/// Column k of the weight and bias gradients, summed over the rows.
__global__ void layerNormParamGradKernel(LayerNorm p) {
  COOP_GRID_STRIDE(k, p.cols) {
    double weightSum = 0, biasSum = 0;
    for (int64_t r = 0; r < p.rows; ++r) {
      int64_t at = r * p.cols + k;
      double gv = floatAt(p.grad, at);
      biasSum += gv;
      weightSum +=
          gv * (double(floatAt(p.input, at)) - floatAt(p.savedMean, r)) * floatAt(p.savedRstd, r);
    }
    if (p.gradWeight)
      reinterpret_cast<float *>(p.gradWeight)[k] = static_cast<float>(weightSum);
    if (p.gradBias)
      reinterpret_cast<float *>(p.gradBias)[k] = static_cast<float>(biasSum);
  }
}

//===----------------------------------------------------------------------===//
// Batch norm
//===----------------------------------------------------------------------===//

/// Row-major index of element (n, ch, i) of an [N, C, S...] tensor.
__device__ inline int64_t nchIndex(const BatchNorm &p, int64_t n, int64_t ch, int64_t i) {
  return (n * p.C + ch) * p.S + i;
}

__global__ void batchNormKernel(BatchNorm p) {
  int64_t count = p.N * p.S;
  COOP_GRID_STRIDE(ch, p.C) {
    double mu, var;
    if (p.training) {
      double sum = 0, sq = 0;
      for (int64_t n = 0; n < p.N; ++n)
        for (int64_t i = 0; i < p.S; ++i)
          sum += floatAt(p.input, nchIndex(p, n, ch, i));
      mu = sum / count;
      for (int64_t n = 0; n < p.N; ++n)
        for (int64_t i = 0; i < p.S; ++i) {
          double d = floatAt(p.input, nchIndex(p, n, ch, i)) - mu;
          sq += d * d;
        }
      var = sq / count;
    } else {
      mu = floatOr(p.runningMean, ch, 0);
      var = floatOr(p.runningVar, ch, 1);
    }
    double inv = 1 / sqrt(var + p.eps);
    if (ch < p.saveMeanCount)
      reinterpret_cast<float *>(p.saveMean)[ch] = static_cast<float>(mu);
    if (ch < p.saveInvstdCount)
      reinterpret_cast<float *>(p.saveInvstd)[ch] = static_cast<float>(inv);
    double scale = floatOr(p.weight, ch, 1), shift = floatOr(p.bias, ch, 0);
    for (int64_t n = 0; n < p.N; ++n)
      for (int64_t i = 0; i < p.S; ++i) {
        int64_t at = nchIndex(p, n, ch, i);
        reinterpret_cast<float *>(p.out)[at] =
            static_cast<float>((floatAt(p.input, at) - mu) * inv * scale + shift);
      }
    if (p.training && p.newMean) {
      float *newMean = reinterpret_cast<float *>(p.newMean);
      float *newVar = reinterpret_cast<float *>(p.newVar);
      double unbiased = count > 1 ? var * count / (count - 1) : var;
      newMean[ch] = static_cast<float>((1 - p.momentum) * newMean[ch] + p.momentum * mu);
      newVar[ch] = static_cast<float>((1 - p.momentum) * newVar[ch] + p.momentum * unbiased);
    }
  }
}

__global__ void batchNormBackwardKernel(BatchNorm p) {
  int64_t count = p.N * p.S;
  COOP_GRID_STRIDE(ch, p.C) {
    double mu, inv;
    if (p.training) {
      mu = floatOr(p.savedMean, ch, 0);
      inv = floatOr(p.savedInvstd, ch, 1);
    } else {
      mu = floatOr(p.runningMean, ch, 0);
      inv = 1 / sqrt(floatOr(p.runningVar, ch, 1) + p.eps);
    }
    double sg = 0, sgx = 0;
    for (int64_t n = 0; n < p.N; ++n)
      for (int64_t i = 0; i < p.S; ++i) {
        int64_t at = nchIndex(p, n, ch, i);
        double gv = floatAt(p.grad, at);
        sg += gv;
        sgx += gv * (floatAt(p.input, at) - mu) * inv;
      }
    double scale = floatOr(p.weight, ch, 1);
    if (p.gradInput)
      for (int64_t n = 0; n < p.N; ++n)
        for (int64_t i = 0; i < p.S; ++i) {
          int64_t at = nchIndex(p, n, ch, i);
          double gv = floatAt(p.grad, at), xh = (floatAt(p.input, at) - mu) * inv;
          double value =
              p.training ? scale * inv * (gv - sg / count - xh * sgx / count) : scale * inv * gv;
          reinterpret_cast<float *>(p.gradInput)[at] = static_cast<float>(value);
        }
    if (p.gradWeight)
      reinterpret_cast<float *>(p.gradWeight)[ch] = static_cast<float>(sgx);
    if (p.gradBias)
      reinterpret_cast<float *>(p.gradBias)[ch] = static_cast<float>(sg);
  }
}

} // namespace

cudaError_t launchLayerNorm(const LayerNorm &p, cudaStream_t stream) {
  return launchOver(p.rows, stream, layerNormKernel, p);
}

cudaError_t launchLayerNormBackward(const LayerNorm &p, cudaStream_t stream) {
  if (p.gradInput && p.rows > 0)
    COOP_LAUNCH(layerNormInputGradKernel, blocksFor(p.rows), kThreads, stream)(p);
  if ((p.gradWeight || p.gradBias) && p.cols > 0)
    COOP_LAUNCH(layerNormParamGradKernel, blocksFor(p.cols), kThreads, stream)(p);
  return cudaGetLastError();
}

cudaError_t launchBatchNorm(const BatchNorm &p, cudaStream_t stream) {
  return launchOver(p.C, stream, batchNormKernel, p);
}

cudaError_t launchBatchNormBackward(const BatchNorm &p, cudaStream_t stream) {
  return launchOver(p.C, stream, batchNormBackwardKernel, p);
}

} // namespace coop::rt::cuda
