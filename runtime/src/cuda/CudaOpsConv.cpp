//===- CudaOpsConv.cpp - Handlers: convolution and pooling ===//

#include "cuda/CudaBackendImpl.h"
#include "cuda/CudaKernelsConv.h"

namespace coop::rt::cuda {

void addConvHandlers(HandlerTable &h) {}

} // namespace coop::rt::cuda
