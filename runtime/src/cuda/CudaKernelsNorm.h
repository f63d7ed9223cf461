//===- CudaKernelsNorm.h - Kernels: normalization, embedding, indexing and the 2-d loss -*- C++ -*-===//
//
// Mirrors of the CPU reference kernels of the same names
// (CpuKernelsNorm.cpp, CpuKernelsIndexing.cpp, CpuKernelsLoss.cpp). Every statistic is summed by one thread, in double
// where the CPU sums in double and in the CPU's order: one thread per row
// (layer norm), per channel (batch norm) or per destination row (the
// scatters: embedding_dense_backward, index_put), so results are
// deterministic without atomics.
//
//===----------------------------------------------------------------------===//
#ifndef COOP_RUNTIME_CUDA_CUDAKERNELSNORM_H
#define COOP_RUNTIME_CUDA_CUDAKERNELSNORM_H

#include "CudaKernels.h"

namespace coop::rt::cuda {

/// A strided tensor read by row-major element index, as Tensor::at does.
/// data == nullptr: an absent optional tensor.
struct ElementView {
  Operand t;
  Shape shape;
};

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

/// embedding (out[i, d] = weight[indices[i], d], zero out of range) and
/// embedding_dense_backward (one thread per weight row summing its
/// gradients in index order).
struct Embedding {
  ElementView indices;                    // int64
  int64_t count = 0, rows = 0, width = 0; // indices' numel, V, D
  Operand weight;                         // forward: [V, D], its strides
  ElementView grad;                       // backward: [count * D] elements
  int64_t paddingIdx = -1;                // backward: a row left zero
  char *out = nullptr;
};
cudaError_t launchEmbedding(const Embedding &p, cudaStream_t stream);
cudaError_t launchEmbeddingBackward(const Embedding &p, cudaStream_t stream);

/// index.Tensor and index_put with one int64 index over self's first
/// dimension (negative counts from the end; out of range: zeros, or
/// skipped). Each index element selects a row of `inner` elements.
struct IndexRows {
  ElementView index;
  int64_t count = 0, rows = 0, inner = 0; // index's numel, self's rows, row size
  ElementView self;                       // index.Tensor: any dtype
  int width = 4;                          // index.Tensor: element bytes
  Operand values; // index_put: float, aligned to `indexed` (0 where it broadcasts)
  Shape indexed;  // index_put: index's shape, then self's trailing dims
  bool accumulate = false;
  char *out = nullptr; // contiguous; index_put: holding self already
};
cudaError_t launchIndex(const IndexRows &p, cudaStream_t stream);
cudaError_t launchIndexPut(const IndexRows &p, cudaStream_t stream);

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

} // namespace coop::rt::cuda

#endif // COOP_RUNTIME_CUDA_CUDAKERNELSNORM_H
