//===- CudaBackendImpl.h - The CUDA backend, for its handler files -*- C++ -*-===//
//
// The backend class and the helpers its handlers share. Each family of
// kernels has a handler file (CudaOps*.cpp: launches -> kernel parameters)
// and a kernel file (CudaKernels*.cu), and registers its handlers through
// an add*Handlers function that handlerTable() calls.
//
//===----------------------------------------------------------------------===//
#ifndef COOP_RUNTIME_CUDA_CUDABACKENDIMPL_H
#define COOP_RUNTIME_CUDA_CUDABACKENDIMPL_H

#include "Backend.h"
#include "cuda/CudaKernels.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <unordered_map>

namespace coop::rt::cuda {

inline std::string cudaText(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")";
}

/// cuBLAS, loaded at run time.
struct Cublas {
  void *library = nullptr;
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) setStream = nullptr;
  decltype(&cublasSetMathMode) setMathMode = nullptr;
  decltype(&cublasSetWorkspace_v2) setWorkspace = nullptr;
  decltype(&cublasSgemm_v2) sgemm = nullptr;
  decltype(&cublasSgemmStridedBatched) sgemmStridedBatched = nullptr;

  /// "" or why cuBLAS is not available.
  std::string load() {
    std::string tried;
    const std::string major = std::to_string(CUBLAS_VER_MAJOR);
    for (std::string name : {"libcublas.so." + major,
#ifdef COOP_CUDA_LIBRARY_DIR
                             std::string(COOP_CUDA_LIBRARY_DIR) + "/libcublas.so." + major,
#endif
                             std::string("libcublas.so")}) {
      if ((library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)))
        break;
      const char *why = dlerror();
      tried += (tried.empty() ? "" : "; ") + std::string(why ? why : name);
    }
    if (!library)
      return "cannot load cuBLAS: " + tried;
    bool ok = sym(create, "cublasCreate_v2") && sym(destroy, "cublasDestroy_v2") &&
              sym(setStream, "cublasSetStream_v2") && sym(setMathMode, "cublasSetMathMode") &&
              sym(setWorkspace, "cublasSetWorkspace_v2") && sym(sgemm, "cublasSgemm_v2") &&
              sym(sgemmStridedBatched, "cublasSgemmStridedBatched");
    if (!ok) {
      dlclose(library);
      library = nullptr;
      return "cuBLAS lacks a function this backend calls";
    }
    return "";
  }
  template <typename F> bool sym(F &f, const char *name) {
    f = reinterpret_cast<F>(dlsym(library, name));
    return f != nullptr;
  }
};

inline std::string blasText(cublasStatus_t s) { return "cuBLAS status " + std::to_string(int(s)); }

inline Shape shapeOf(const Tensor &t) {
  Shape s;
  s.rank = t.rank;
  std::copy(t.shape, t.shape + t.rank, s.dims);
  return s;
}

/// `t` broadcast to `like` (right-aligned; size-1 dims stride 0).
inline Operand operandOf(const Tensor &t, const Tensor &like) {
  Operand o;
  o.data = t.data;
  o.dtype = t.dtype;
  int shift = like.rank - t.rank;
  for (int d = 0; d < like.rank; ++d) {
    int s = d - shift;
    o.strides[d] = s >= 0 && t.shape[s] != 1 ? t.strides[s] : 0;
  }
  return o;
}

/// `t` with its own strides.
inline Operand stridedOf(const Tensor &t) {
  Operand o;
  o.data = t.data;
  o.dtype = t.dtype;
  std::copy(t.strides, t.strides + t.rank, o.strides);
  return o;
}

class CudaBackend;
/// Runs one launch; the CPU kernel's `prepare` has checked it already.
using Handler = void (*)(CudaBackend &, const Call &);
/// Handlers by the CPU registry's kernel names.
using HandlerTable = std::unordered_map<std::string, Handler>;
/// All the handlers (CudaBackend.cpp), which each family file adds to.
const HandlerTable &handlerTable();
void addConvHandlers(HandlerTable &h);   // CudaOpsConv.cpp
void addNormHandlers(HandlerTable &h);   // CudaOpsNorm.cpp
void addLayoutHandlers(HandlerTable &h); // CudaOpsLayout.cpp

class CudaBackend : public Backend {
public:
  ~CudaBackend() override {
    // Best effort: nothing can be reported from here.
    if (blasHandle)
      blas.destroy(blasHandle);
    if (blas.library)
      dlclose(blas.library);
    if (start)
      cudaEventDestroy(start);
    if (stop)
      cudaEventDestroy(stop);
    if (arena)
      cudaFree(arena);
    if (stream)
      cudaStreamDestroy(stream);
  }

  /// "" or why the backend cannot run here.
  std::string init() {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess)
      return "no CUDA device: " + cudaText(e);
    if (count == 0)
      return "no CUDA device: cudaGetDeviceCount found none";
    if ((e = cudaSetDevice(0)) != cudaSuccess || (e = cudaFree(nullptr)) != cudaSuccess)
      return "no CUDA device: cannot initialize device 0: " + cudaText(e);
    if ((e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)) != cudaSuccess ||
        (e = cudaEventCreate(&start)) != cudaSuccess ||
        (e = cudaEventCreate(&stop)) != cudaSuccess)
      return "CUDA stream or event creation failed: " + cudaText(e);
#ifdef COOP_CUDA_EMULATION
    blasMissing = "host emulation: the products run on the own kernel";
#else
    blasMissing = blas.load();
#endif
    if (blasMissing.empty()) {
      cublasStatus_t s = blas.create(&blasHandle);
      if (s != CUBLAS_STATUS_SUCCESS) {
        blasHandle = nullptr;
        return "cublasCreate failed: " + blasText(s);
      }
      // Our stream; no TF32 or other reduced precision; no workspace (the
      // arena is the only device buffer this backend allocates, and a
      // product does not depend on a workspace's size).
      if ((s = blas.setStream(blasHandle, stream)) != CUBLAS_STATUS_SUCCESS ||
          (s = blas.setMathMode(blasHandle, CUBLAS_PEDANTIC_MATH)) != CUBLAS_STATUS_SUCCESS ||
          (s = blas.setWorkspace(blasHandle, nullptr, 0)) != CUBLAS_STATUS_SUCCESS)
        return "cuBLAS setup failed: " + blasText(s);
    }
    return "";
  }

  char *allocateArena(int64_t bytes, std::string &error) override {
    if (arena) {
      error = "the CUDA backend holds an arena already";
      return nullptr;
    }
    void *memory = nullptr;
    cudaError_t e = cudaMalloc(&memory, static_cast<size_t>(bytes));
    if (e != cudaSuccess) {
      error = "cudaMalloc of the " + std::to_string(bytes) + "-byte arena failed: " + cudaText(e);
      return nullptr;
    }
    arena = static_cast<char *>(memory);
    ++count;
    if ((e = cudaMemsetAsync(arena, 0, static_cast<size_t>(bytes), stream)) != cudaSuccess ||
        (e = cudaStreamSynchronize(stream)) != cudaSuccess) {
      error = "zeroing the arena failed: " + cudaText(e);
      return nullptr;
    }
    return arena;
  }
  int64_t allocations() const override { return count; }

  void upload(char *device, const void *host, size_t bytes) override {
    if (check(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream),
              "cudaMemcpyAsync (upload)"))
      check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (upload)");
  }
  void download(void *host, const char *device, size_t bytes) const override {
    if (check(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream),
              "cudaMemcpyAsync (download)"))
      check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (download)");
  }

  bool implements(const KernelDef &kernel) const override;

  void launch(const KernelDef &kernel, const Call &call, const int *inplace) override {
    for (int o = 0; o < call.numOutputs; ++o) {
      int k = inplace[o];
      if (k >= 0 && call.inputs[k].data != call.outputs[o].data)
        copy(call.outputs[o], call.inputs[k]); // copy on write
    }
    if (!implements(kernel)) { // the session checked every launch already
      fail(std::string("no CUDA kernel for '") + kernel.name + "'");
      return;
    }
    auto handler = handlers.find(&kernel);
#ifdef COOP_CUDA_EMULATION
    if (handler == handlers.end()) { // the CPU fallback, on the host arena
      kernel.run(call);
      return;
    }
#endif
    handler->second(*this, call);
  }

#ifdef COOP_CUDA_EMULATION
  /// For testing one family of kernels in models that need others: with
  /// COOP_EMULATION_CPU_FALLBACK set, a launch without a CUDA kernel runs
  /// the CPU reference kernel (the emulated device memory is host memory).
  static bool cpuFallback() {
    static const bool enabled = std::getenv("COOP_EMULATION_CPU_FALLBACK") != nullptr;
    return enabled;
  }
#endif

  void startTimer() override { check(cudaEventRecord(start, stream), "cudaEventRecord"); }
  std::string stopTimer(double &milliseconds) override {
    float ms = 0;
    if (check(cudaEventRecord(stop, stream), "cudaEventRecord") &&
        check(cudaEventSynchronize(stop), "cudaEventSynchronize (kernels of the step)") &&
        check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime"))
      milliseconds = ms;
    return takeError();
  }
  std::string takeError() override {
    std::string e;
    e.swap(error);
    return e;
  }

  // For the handlers.
  bool check(cudaError_t e, const char *what) const {
    if (e == cudaSuccess)
      return true;
    fail(std::string(what) + ": " + cudaText(e));
    return false;
  }
  void fail(const std::string &what) const {
    if (error.empty())
      error = what;
  }
  void copy(const Tensor &dst, const Tensor &src) {
    int64_t width = elementSize(src.dtype), n = src.numel();
    size_t bytes = static_cast<size_t>(n * width);
    if (src.contiguous()) {
      bool overlap = dst.data < src.data + bytes && src.data < dst.data + bytes;
      if (!overlap) {
        check(cudaMemcpyAsync(dst.data, src.data, bytes, cudaMemcpyDeviceToDevice, stream),
              "cudaMemcpyAsync (copy)");
        return;
      }
      check(launchCopy(dst.data, stridedOf(src), shapeOf(src), static_cast<int>(width), true,
                       dst.data > src.data, stream),
            "copy kernel");
      return;
    }
    check(launchCopy(dst.data, stridedOf(src), shapeOf(src), static_cast<int>(width), false,
                     false, stream),
          "copy kernel");
  }

  cudaStream_t stream = nullptr;
  Cublas blas;
  cublasHandle_t blasHandle = nullptr;
  std::string blasMissing;

private:
  cudaEvent_t start = nullptr, stop = nullptr;
  char *arena = nullptr;
  int64_t count = 0;
  mutable std::string error;
  mutable std::unordered_map<const KernelDef *, Handler> handlers;
};


} // namespace coop::rt::cuda

#endif // COOP_RUNTIME_CUDA_CUDABACKENDIMPL_H
