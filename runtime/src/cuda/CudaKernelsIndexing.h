//===- CudaKernelsIndexing.h - Kernels: embedding, index, index_put -*- C++ -*-===//
//
// Mirrors of the CPU reference kernels of the same names
// (CpuKernelsIndexing.cpp). The scatters (embedding_dense_backward,
// index_put) run one thread per destination row, adding in index order,
// so results are deterministic without atomics.
//
//===----------------------------------------------------------------------===//
#ifndef COOP_RUNTIME_CUDA_CUDAKERNELSINDEXING_H
#define COOP_RUNTIME_CUDA_CUDAKERNELSINDEXING_H

#include "CudaKernels.h"

namespace coop::rt::cuda {

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

} // namespace coop::rt::cuda

#endif // COOP_RUNTIME_CUDA_CUDAKERNELSINDEXING_H
