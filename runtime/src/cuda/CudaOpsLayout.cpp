//===- CudaOpsLayout.cpp - Handlers: activations, comparisons, fills and layout ops (cat, stack, split, pad, ...) ===//

#include "cuda/CudaBackendImpl.h"
#include "cuda/CudaKernelsLayout.h"

namespace coop::rt::cuda {

void addLayoutHandlers(HandlerTable &h) {}

} // namespace coop::rt::cuda
