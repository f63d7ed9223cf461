//===- CudaKernelsReduction.cu - Kernels: sum and mean --------------------===//
//
// See CudaKernels.h. One thread per output element sums its elements
// sequentially, in the CPU kernel's order.
//
//===----------------------------------------------------------------------===//

#include "CudaDevice.cuh"

namespace coop::rt::cuda {
namespace {

__global__ void reduceKernel(Reduce p) {
  COOP_GRID_STRIDE(i, p.outCount) {
    int64_t base = offsetOf(i, p.kept, p.in.strides);
    if (p.integer) {
      int64_t sum = 0;
      for (int64_t k = 0; k < p.count; ++k)
        sum += loadInt(p.in, base + offsetOf(k, p.reduced, p.in.strides));
      reinterpret_cast<int64_t *>(p.out)[i] = sum;
      continue;
    }
    double sum = 0;
    for (int64_t k = 0; k < p.count; ++k)
      sum += loadFloat(p.in, base + offsetOf(k, p.reduced, p.in.strides));
    reinterpret_cast<float *>(p.out)[i] = static_cast<float>(p.mean ? sum / p.count : sum);
  }
}

} // namespace

cudaError_t launchReduce(const Reduce &p, cudaStream_t stream) {
  return launchOver(p.outCount, stream, reduceKernel, p);
}

} // namespace coop::rt::cuda
