//===- HostCudaRuntime.cpp - The CUDA runtime calls, on the host ----------===//
//
// The emulated backend links this instead of cudart: "device" memory is
// host memory and a stream runs its work when it is enqueued (kernels are
// plain calls, see CudaHostEmulation.h), so every call the backend makes
// succeeds or fails here the way the CUDA runtime documents. The device
// has COOP_EMULATED_DEVICE_BYTES of memory (default 4 GiB), so that a
// budget larger than the device is refused as on a GPU.
//
//===----------------------------------------------------------------------===//

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>

struct CUstream_st {};
struct CUevent_st {
  std::chrono::steady_clock::time_point at;
  bool recorded = false;
};

namespace {

cudaError_t lastError = cudaSuccess;
size_t deviceBytesInUse = 0;

size_t deviceBytes() {
  const char *text = std::getenv("COOP_EMULATED_DEVICE_BYTES");
  return text ? std::strtoull(text, nullptr, 10) : size_t(4) << 30;
}

cudaError_t record(cudaError_t e) {
  if (e != cudaSuccess)
    lastError = e;
  return e;
}

} // namespace

extern "C" {

cudaError_t cudaGetLastError(void) {
  cudaError_t e = lastError;
  lastError = cudaSuccess;
  return e;
}

const char *cudaGetErrorName(cudaError_t error) {
  switch (error) {
  case cudaSuccess: return "cudaSuccess";
  case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
  case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
  case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
  case cudaErrorNotReady: return "cudaErrorNotReady";
  default: return "cudaErrorUnknown";
  }
}

const char *cudaGetErrorString(cudaError_t error) {
  switch (error) {
  case cudaSuccess: return "no error";
  case cudaErrorInvalidValue: return "invalid argument";
  case cudaErrorMemoryAllocation: return "out of memory";
  case cudaErrorInvalidResourceHandle: return "invalid resource handle";
  case cudaErrorNotReady: return "device not ready";
  default: return "unknown error";
  }
}

cudaError_t cudaGetDeviceCount(int *count) {
  *count = 1;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  return record(device == 0 ? cudaSuccess : cudaErrorInvalidDevice);
}

cudaError_t cudaMalloc(void **devPtr, size_t size) {
  *devPtr = nullptr;
  if (size > deviceBytes() - deviceBytesInUse)
    return record(cudaErrorMemoryAllocation);
  // The size before the block, for cudaFree's accounting.
  auto *block = static_cast<size_t *>(std::malloc(size + sizeof(size_t) * 2));
  if (!block)
    return record(cudaErrorMemoryAllocation);
  block[0] = size;
  deviceBytesInUse += size;
  *devPtr = block + 2;
  return cudaSuccess;
}

cudaError_t cudaFree(void *devPtr) {
  if (!devPtr)
    return cudaSuccess; // also the CUDA idiom that initializes the context
  size_t *block = static_cast<size_t *>(devPtr) - 2;
  deviceBytesInUse -= block[0];
  std::free(block);
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind,
                            cudaStream_t) {
  std::memmove(dst, src, count);
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t) {
  std::memset(devPtr, value, count);
  return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int) {
  *pStream = new (std::nothrow) CUstream_st;
  return record(*pStream ? cudaSuccess : cudaErrorMemoryAllocation);
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  delete stream;
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }

cudaError_t cudaEventCreate(cudaEvent_t *event) {
  *event = new (std::nothrow) CUevent_st;
  return record(*event ? cudaSuccess : cudaErrorMemoryAllocation);
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  delete event;
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t) {
  event->at = std::chrono::steady_clock::now();
  event->recorded = true;
  return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  return record(event->recorded ? cudaSuccess : cudaErrorInvalidResourceHandle);
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end) {
  if (!start->recorded || !end->recorded)
    return record(cudaErrorInvalidResourceHandle);
  *ms = std::chrono::duration<float, std::milli>(end->at - start->at).count();
  return cudaSuccess;
}

} // extern "C"
