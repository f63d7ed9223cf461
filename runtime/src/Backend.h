//===- Backend.h - Where the arena lives and kernels run --------*- C++ -*-===//
#ifndef COOP_RUNTIME_BACKEND_H
#define COOP_RUNTIME_BACKEND_H

#include "Kernel.h"

#include <memory>
#include <string>

namespace coop::rt {

class Backend {
public:
  virtual ~Backend() = default;
  /// The one arena allocation; nullptr and `error` set on failure.
  virtual char *allocateArena(int64_t bytes, std::string &error) = 0;
  /// Device allocations made so far (the arena is the only one).
  virtual int64_t allocations() const = 0;
  virtual void upload(char *device, const void *host, size_t bytes) = 0;
  virtual void download(void *host, const char *device, size_t bytes) const = 0;
  /// Runs one launch: copies an in-place input into its output first when
  /// they are different buffers, then runs the kernel.
  virtual void launch(const KernelDef &kernel, const Call &call, const int *inplace) = 0;
};

/// "cpu"; nullptr and `error` set for an unknown backend.
std::unique_ptr<Backend> createBackend(const std::string &name, std::string &error);

/// A strided copy of src's elements into dst, in logical order (same shape
/// and dtype).
void copyTensor(const Tensor &dst, const Tensor &src);

} // namespace coop::rt

#endif // COOP_RUNTIME_BACKEND_H
