//===- CudaKernelsLayout.h - Kernels: activations, comparisons, fills and layout ops (cat, stack, split, pad, ...) -*- C++ -*-===//
#ifndef COOP_RUNTIME_CUDA_CUDAKERNELSLAYOUT_H
#define COOP_RUNTIME_CUDA_CUDAKERNELSLAYOUT_H

#include "CudaKernels.h"

namespace coop::rt::cuda {} // namespace coop::rt::cuda

#endif // COOP_RUNTIME_CUDA_CUDAKERNELSLAYOUT_H
