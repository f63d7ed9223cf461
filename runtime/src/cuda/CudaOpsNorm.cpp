//===- CudaOpsNorm.cpp - Handlers: normalization, embedding, indexing and the 2-d loss ===//

#include "cuda/CudaBackendImpl.h"
#include "cuda/CudaKernelsNorm.h"

namespace coop::rt::cuda {

void addNormHandlers(HandlerTable &h) {}

} // namespace coop::rt::cuda
