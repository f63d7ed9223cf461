//===- Backend.h - Where the arena lives and kernels run --------*- C++ -*-===//
#ifndef COOP_RUNTIME_BACKEND_H
#define COOP_RUNTIME_BACKEND_H

#include "Kernel.h"

#include <chrono>
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

  /// Whether this backend runs `kernel` (the registry's CPU kernels are the
  /// reference; a device backend may implement a subset).
  virtual bool implements(const KernelDef &kernel) const { return true; }
  /// Starts timing the work launched from now on.
  virtual void startTimer() { timerStart = std::chrono::steady_clock::now(); }
  /// Waits for the work launched since startTimer and sets its
  /// milliseconds; returns "" or what failed.
  virtual std::string stopTimer(double &milliseconds) {
    milliseconds = std::chrono::duration<double, std::milli>(
                       std::chrono::steady_clock::now() - timerStart).count();
    return "";
  }
  /// The first failure of a call without a status (upload, download,
  /// launch: a device fails asynchronously) since the last call, then
  /// cleared; "" when none. The CPU never fails there.
  virtual std::string takeError() { return ""; }

private:
  std::chrono::steady_clock::time_point timerStart;
};

/// The CPU reference backend (CpuBackend.cpp).
std::unique_ptr<Backend> createCpuBackend();

/// "cpu", or a backend registered with registerBackend ("cuda" when the
/// CUDA backend is linked in); nullptr and `error` set otherwise.
std::unique_ptr<Backend> createBackend(const std::string &name, std::string &error);

/// A backend outside the CPU runtime library (the optional CUDA backend)
/// registers its factory here, from a static initializer.
using BackendFactory = std::unique_ptr<Backend> (*)(std::string &error);
bool registerBackend(const char *name, BackendFactory factory);

/// A strided copy of src's elements into dst, in logical order (same shape
/// and dtype).
void copyTensor(const Tensor &dst, const Tensor &src);

} // namespace coop::rt

#endif // COOP_RUNTIME_BACKEND_H
