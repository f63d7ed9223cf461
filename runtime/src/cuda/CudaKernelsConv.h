//===- CudaKernelsConv.h - Kernels: convolution and pooling -*- C++ -*-===//
#ifndef COOP_RUNTIME_CUDA_CUDAKERNELSCONV_H
#define COOP_RUNTIME_CUDA_CUDAKERNELSCONV_H

#include "CudaKernels.h"

namespace coop::rt::cuda {} // namespace coop::rt::cuda

#endif // COOP_RUNTIME_CUDA_CUDAKERNELSCONV_H
