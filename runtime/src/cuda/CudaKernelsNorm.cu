//===- CudaKernelsNorm.cu - Kernels: normalization, embedding, indexing and the 2-d loss ===//

#include "CudaDevice.cuh"
#include "CudaKernelsNorm.h"

namespace coop::rt::cuda {} // namespace coop::rt::cuda
