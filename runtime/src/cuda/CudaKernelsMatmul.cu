//===- CudaKernelsMatmul.cu - Kernels: the fallback product ---------------===//
//
// See CudaKernels.h. The product for operands cuBLAS cannot take (or
// without cuBLAS): one thread per output element, summed in double in k
// order.
//
//===----------------------------------------------------------------------===//

#include "CudaDevice.cuh"

namespace coop::rt::cuda {
namespace {

__global__ void matmulKernel(Matmul p, int64_t n) {
  COOP_GRID_STRIDE(i, n) {
    int64_t j = i % p.N, row = (i / p.N) % p.M, t = i / (p.N * p.M);
    const float *ar = reinterpret_cast<const float *>(p.a) + t * p.ab + row * p.as0;
    const float *bc = reinterpret_cast<const float *>(p.b) + t * p.bb + j * p.bs1;
    double sum = 0;
    for (int64_t k = 0; k < p.K; ++k)
      sum += double(ar[k * p.as1]) * bc[k * p.bs0];
    double value = p.alpha * sum;
    if (p.hasBias)
      value += p.beta * loadFloat(p.bias, offsetOf(i, p.outShape, p.bias.strides));
    reinterpret_cast<float *>(p.out)[i] = static_cast<float>(value);
  }
}

} // namespace

cudaError_t launchMatmul(const Matmul &p, cudaStream_t stream) {
  int64_t n = p.batch * p.M * p.N;
  return launchOver(n, stream, matmulKernel, p, n);
}

} // namespace coop::rt::cuda
