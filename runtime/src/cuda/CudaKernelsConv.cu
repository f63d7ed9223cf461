//===- CudaKernelsConv.cu - Kernels: convolution and pooling ===//

#include "CudaDevice.cuh"
#include "CudaKernelsConv.h"

namespace coop::rt::cuda {} // namespace coop::rt::cuda
