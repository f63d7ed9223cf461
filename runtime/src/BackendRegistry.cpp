//===- BackendRegistry.cpp - Backends by name -----------------------------===//
//
// "cpu" is built in; an optional backend library (the CUDA backend, built
// only when CMake finds the CUDA toolkit) registers itself from a static
// initializer, so the CPU runtime never depends on it.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"

#include <utility>
#include <vector>

namespace coop::rt {

namespace {
std::vector<std::pair<std::string, BackendFactory>> &registered() {
  static std::vector<std::pair<std::string, BackendFactory>> factories;
  return factories;
}
} // namespace

bool registerBackend(const char *name, BackendFactory factory) {
  registered().emplace_back(name, factory);
  return true;
}

std::unique_ptr<Backend> createBackend(const std::string &name, std::string &error) {
  if (name == "cpu")
    return createCpuBackend();
  std::string names = "cpu";
  for (const auto &[known, factory] : registered()) {
    if (known == name)
      return factory(error); // sets `error` when the device is missing
    names += ", " + known;
  }
  error = "backend '" + name + "' is not available (this build has: " + names + ")";
  if (name == "cuda")
    error += "; the CUDA backend is built only when CMake finds the CUDA toolkit";
  return nullptr;
}

} // namespace coop::rt
