//===- CpuKernelsMath.cpp - CPU kernels: elementwise math and reductions ===//

#include "Backend.h"

namespace coop::rt {

std::vector<KernelDef> mathCpuKernels() { return {}; }

} // namespace coop::rt
