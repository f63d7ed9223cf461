//===- CudaKernelsNorm.h - Kernels: normalization, embedding, indexing and the 2-d loss -*- C++ -*-===//
#ifndef COOP_RUNTIME_CUDA_CUDAKERNELSNORM_H
#define COOP_RUNTIME_CUDA_CUDAKERNELSNORM_H

#include "CudaKernels.h"

namespace coop::rt::cuda {} // namespace coop::rt::cuda

#endif // COOP_RUNTIME_CUDA_CUDAKERNELSNORM_H
