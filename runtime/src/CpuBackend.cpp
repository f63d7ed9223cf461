//===- CpuBackend.cpp - The CPU reference backend and the kernel registry ===//
//
// The registry concatenates the tables of the CPU kernel families
// (CpuKernels<Family>.cpp); the CPU backend runs their kernels in one
// host arena.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"

#include <cstdlib>

namespace coop::rt {
namespace {

using namespace cpu;

const std::vector<KernelDef> &registry() {
  static const std::vector<KernelDef> kernels = [] {
    std::vector<KernelDef> k;
    for (auto family : {elementwiseCpuKernels, mathCpuKernels, fillCpuKernels,
                        reductionCpuKernels, matmulCpuKernels, lossCpuKernels, normCpuKernels,
                        convCpuKernels, layoutCpuKernels, indexingCpuKernels})
      for (KernelDef &kernel : family())
        k.push_back(std::move(kernel));
    return k;
  }();
  return kernels;
}

class CpuBackend : public Backend {
public:
  ~CpuBackend() override { std::free(arena); }
  char *allocateArena(int64_t bytes, std::string &error) override {
    if (arena) {
      error = "the CPU backend holds an arena already";
      return nullptr;
    }
    size_t rounded = (static_cast<size_t>(bytes) + 63) / 64 * 64;
    arena = static_cast<char *>(std::aligned_alloc(64, rounded));
    if (!arena) {
      error = "cannot allocate an arena of " + std::to_string(bytes) + " bytes";
      return nullptr;
    }
    ++count;
    std::memset(arena, 0, rounded);
    return arena;
  }
  int64_t allocations() const override { return count; }
  void upload(char *device, const void *host, size_t bytes) override {
    std::memcpy(device, host, bytes);
  }
  void download(void *host, const char *device, size_t bytes) const override {
    std::memcpy(host, device, bytes);
  }
  void launch(const KernelDef &kernel, const Call &call, const int *inplace) override {
    for (int o = 0; o < call.numOutputs; ++o) {
      int k = inplace[o];
      if (k >= 0 && call.inputs[k].data != call.outputs[o].data)
        copyTensor(call.outputs[o], call.inputs[k]); // copy on write
    }
    kernel.run(call);
  }

private:
  char *arena = nullptr;
  int64_t count = 0;
};

} // namespace

void copyTensor(const Tensor &dst, const Tensor &src) {
  int64_t width = elementSize(src.dtype), n = src.numel();
  if (src.contiguous()) {
    std::memmove(dst.data, src.data, static_cast<size_t>(n * width));
    return;
  }
  Walk w(src);
  int is = w.add(src);
  for (int64_t i = 0; i < n; ++i, w.next())
    std::memcpy(dst.data + i * width, src.data + w.off[is] * width, width);
}

const KernelDef *findKernel(const std::string &name) {
  std::string base = name;
  size_t first = name.find('.');
  size_t second = first == std::string::npos ? first : name.find('.', first + 1);
  if (second != std::string::npos)
    base = name.substr(0, second);
  for (const std::string &candidate : {name, base})
    for (const KernelDef &kernel : registry())
      if (candidate == kernel.name)
        return &kernel;
  return nullptr;
}

std::vector<std::string> kernelNames() {
  std::vector<std::string> names;
  for (const KernelDef &kernel : registry())
    names.push_back(kernel.name);
  return names;
}

std::unique_ptr<Backend> createCpuBackend() { return std::make_unique<CpuBackend>(); }

} // namespace coop::rt
