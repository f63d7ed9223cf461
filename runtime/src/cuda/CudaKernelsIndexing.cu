//===- CudaKernelsIndexing.cu - Kernels: embedding, index and index_put ---===//
//
// See CudaKernelsIndexing.h. The scatters (embedding_dense_backward,
// index_put) run one thread per destination row, adding in index order.
//
//===----------------------------------------------------------------------===//

#include "CudaDevice.cuh"
#include "CudaKernelsIndexing.h"

namespace coop::rt::cuda {
namespace {

//===----------------------------------------------------------------------===//
// Embedding
//===----------------------------------------------------------------------===//

__global__ void embeddingKernel(Embedding p, int64_t n) {
  COOP_GRID_STRIDE(e, n) {
    int64_t row = intAt(p.indices, e / p.width), d = e % p.width;
    reinterpret_cast<float *>(p.out)[e] =
        row >= 0 && row < p.rows
            ? loadFloat(p.weight, row * p.weight.strides[0] + d * p.weight.strides[1])
            : 0.f;
  }
}

/// Weight row r's gradient: its index occurrences' gradients, added in
/// index order (the CPU's order for every element).
__global__ void embeddingBackwardKernel(Embedding p) {
  COOP_GRID_STRIDE(r, p.rows) {
    float *o = reinterpret_cast<float *>(p.out) + r * p.width;
    for (int64_t d = 0; d < p.width; ++d)
      o[d] = 0.f;
    if (r == p.paddingIdx)
      continue;
    for (int64_t i = 0; i < p.count; ++i) {
      if (intAt(p.indices, i) != r)
        continue;
      for (int64_t d = 0; d < p.width; ++d)
        o[d] += floatAt(p.grad, i * p.width + d);
    }
  }
}

//===----------------------------------------------------------------------===//
// index.Tensor, index_put
//===----------------------------------------------------------------------===//

/// The row of self that index element i selects, or -1 when out of range.
__device__ inline int64_t indexedRow(const IndexRows &p, int64_t i) {
  int64_t row = intAt(p.index, i);
  row += row < 0 ? p.rows : 0;
  return row >= 0 && row < p.rows ? row : -1;
}

__global__ void indexKernel(IndexRows p, int64_t n) {
  COOP_GRID_STRIDE(e, n) {
    int64_t row = indexedRow(p, e / p.inner);
    char *dst = p.out + e * p.width;
    if (row < 0) {
      for (int b = 0; b < p.width; ++b)
        dst[b] = 0;
      continue;
    }
    const char *src =
        p.self.t.data +
        offsetOf(row * p.inner + e % p.inner, p.self.shape, p.self.t.strides) * p.width;
    for (int b = 0; b < p.width; ++b)
      dst[b] = src[b];
  }
}

/// Row r of the output takes the values of the index elements selecting
/// it in index order: the last one, or all of them added.
__global__ void indexPutKernel(IndexRows p) {
  COOP_GRID_STRIDE(r, p.rows) {
    float *o = reinterpret_cast<float *>(p.out) + r * p.inner;
    for (int64_t i = 0; i < p.count; ++i) {
      if (indexedRow(p, i) != r)
        continue;
      for (int64_t k = 0; k < p.inner; ++k) {
        float v = loadFloat(p.values, offsetOf(i * p.inner + k, p.indexed, p.values.strides));
        o[k] = p.accumulate ? o[k] + v : v;
      }
    }
  }
}

} // namespace

cudaError_t launchEmbedding(const Embedding &p, cudaStream_t stream) {
  int64_t n = p.count * p.width;
  return launchOver(n, stream, embeddingKernel, p, n);
}

cudaError_t launchEmbeddingBackward(const Embedding &p, cudaStream_t stream) {
  return launchOver(p.rows, stream, embeddingBackwardKernel, p);
}

cudaError_t launchIndex(const IndexRows &p, cudaStream_t stream) {
  int64_t n = p.count * p.inner;
  return launchOver(n, stream, indexKernel, p, n);
}

cudaError_t launchIndexPut(const IndexRows &p, cudaStream_t stream) {
  if (p.rows > 0 && p.inner > 0)
    COOP_LAUNCH(indexPutKernel, blocksFor(p.rows), kThreads, stream)(p);
  return cudaGetLastError();
}

} // namespace coop::rt::cuda
