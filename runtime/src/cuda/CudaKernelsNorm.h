//===- CudaKernelsNorm.h - Kernels: layer norm and batch norm ---*- C++ -*-===//
//
// Mirrors of the CPU reference kernels of the same names
// (CpuKernelsNorm.cpp). Every statistic is summed by one thread, in double
// where the CPU sums in double and in the CPU's order: one thread per row
// (layer norm) or per channel (batch norm), so results are deterministic
// without atomics.
//
//===----------------------------------------------------------------------===//
#ifndef COOP_RUNTIME_CUDA_CUDAKERNELSNORM_H
#define COOP_RUNTIME_CUDA_CUDAKERNELSNORM_H

#include "CudaKernels.h"

namespace coop::rt::cuda {

/// native_layer_norm (forward) and native_layer_norm_backward: the input
/// as `rows` rows of `cols` elements (the normalized trailing dims).
struct LayerNorm {
  ElementView input, weight, bias; // weight, bias: over the normalized shape
  int64_t rows = 0, cols = 0;
  float eps = 1e-5f; // the CPU rounds eps to float
  // forward outputs: out [rows * cols], mean and rstd [rows]
  char *out = nullptr, *mean = nullptr, *rstd = nullptr;
  // backward inputs, and outputs (nullptr where output_mask leaves them out)
  ElementView grad, savedMean, savedRstd;
  char *gradInput = nullptr, *gradWeight = nullptr, *gradBias = nullptr;
};
cudaError_t launchLayerNorm(const LayerNorm &p, cudaStream_t stream);
cudaError_t launchLayerNormBackward(const LayerNorm &p, cudaStream_t stream);

/// native_batch_norm (forward) and native_batch_norm_backward: an
/// [N, C, ...] input, S the spatial size; one thread per channel.
struct BatchNorm {
  ElementView input, weight, runningMean, runningVar;
  int64_t N = 0, C = 0, S = 1;
  bool training = false;
  double momentum = 0.1, eps = 1e-5;
  // forward: save_mean and save_invstd are written for ch < their counts
  // (empty in evaluation); newMean and newVar (training, when given) hold
  // the old running statistics and are updated in place
  ElementView bias;
  char *out = nullptr, *saveMean = nullptr, *saveInvstd = nullptr;
  int64_t saveMeanCount = 0, saveInvstdCount = 0;
  char *newMean = nullptr, *newVar = nullptr;
  // backward (outputs nullptr where output_mask leaves them out)
  ElementView grad, savedMean, savedInvstd;
  char *gradInput = nullptr, *gradWeight = nullptr, *gradBias = nullptr;
};
cudaError_t launchBatchNorm(const BatchNorm &p, cudaStream_t stream);
cudaError_t launchBatchNormBackward(const BatchNorm &p, cudaStream_t stream);

} // namespace coop::rt::cuda

#endif // COOP_RUNTIME_CUDA_CUDAKERNELSNORM_H
