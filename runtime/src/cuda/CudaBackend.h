//===- CudaBackend.h - What the CUDA backend runs ---------------*- C++ -*-===//
#ifndef COOP_RUNTIME_CUDA_CUDABACKEND_H
#define COOP_RUNTIME_CUDA_CUDABACKEND_H

#include <string>

namespace coop::rt {

/// Whether the CUDA backend has a kernel for the plan kernel `name`
/// ("aten.add_.Tensor"), resolved through the registry as a plan's launch
/// is. Needs no device: tests check coverage with it on any machine.
bool cudaHasKernel(const std::string &name);

} // namespace coop::rt

#endif // COOP_RUNTIME_CUDA_CUDABACKEND_H
