//===- CudaKernelsLayout.cu - Kernels: activations, comparisons, fills and layout ops (cat, stack, split, pad, ...) ===//

#include "CudaDevice.cuh"
#include "CudaKernelsLayout.h"

namespace coop::rt::cuda {} // namespace coop::rt::cuda
