//===- CudaHostEmulation.h - CUDA kernel source as plain C++ ----*- C++ -*-===//
//
// Included by runtime/src/cuda/CudaDevice.cuh when the kernel files are
// compiled by the host compiler (the emulated backend of the tests): the
// execution-space keywords vanish and every launch runs one block of one
// thread, so a grid-stride loop visits every index in order.
//
//===----------------------------------------------------------------------===//
#ifndef COOP_TEST_CUDA_EMULATION_CUDAHOSTEMULATION_H
#define COOP_TEST_CUDA_EMULATION_CUDAHOSTEMULATION_H

#include <cuda_runtime_api.h>

#undef __global__
#undef __device__
#undef __host__
#define __global__
#define __device__
#define __host__

namespace coop::rt::cuda {

struct EmulatedDim3 {
  unsigned x;
};
inline constexpr EmulatedDim3 blockIdx{0}, threadIdx{0}, blockDim{1}, gridDim{1};

} // namespace coop::rt::cuda

#endif // COOP_TEST_CUDA_EMULATION_CUDAHOSTEMULATION_H
