//===- CpuKernelsIndexing.cpp - CPU kernels: gathering, scattering, selection, conversions and losses ===//

#include "Backend.h"

namespace coop::rt {

std::vector<KernelDef> indexingCpuKernels() { return {}; }

} // namespace coop::rt
