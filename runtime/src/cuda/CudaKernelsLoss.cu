//===- CudaKernelsLoss.cu - Kernels: softmax and losses -------------------===//
//
// See CudaKernels.h. softmax and log_softmax with their backwards (one
// thread per line), nll_loss and nll_loss2d (forward on one thread,
// backward one thread per element).
//
//===----------------------------------------------------------------------===//

#include "CudaDevice.cuh"

namespace coop::rt::cuda {
namespace {

__global__ void softmaxKernel(Softmax p, int64_t lines) {
  COOP_GRID_STRIDE(line, lines) {
    const float *x = reinterpret_cast<const float *>(p.in[0].data) +
                     offsetOf(line, p.outer, p.in[0].strides);
    float *y = reinterpret_cast<float *>(p.out) + offsetOf(line, p.outer, p.outStrides);
    int64_t s0 = p.lineStride[0], s1 = p.lineStride[1], so = p.lineStride[2];
    if (!p.backward) {
      float max = -INFINITY;
      for (int64_t k = 0; k < p.length; ++k)
        max = fmaxf(max, x[k * s0]);
      double sum = 0;
      for (int64_t k = 0; k < p.length; ++k)
        sum += exp(double(x[k * s0]) - max);
      double logSum = log(sum);
      for (int64_t k = 0; k < p.length; ++k) {
        double shifted = double(x[k * s0]) - max;
        y[k * so] = static_cast<float>(p.log ? shifted - logSum : exp(shifted) / sum);
      }
    } else { // x: grad_output, o: output
      const float *o = reinterpret_cast<const float *>(p.in[1].data) +
                       offsetOf(line, p.outer, p.in[1].strides);
      double sum = 0;
      for (int64_t k = 0; k < p.length; ++k)
        sum += p.log ? double(x[k * s0]) : double(x[k * s0]) * o[k * s1];
      for (int64_t k = 0; k < p.length; ++k) {
        double g = x[k * s0], yy = o[k * s1];
        y[k * so] = static_cast<float>(p.log ? g - exp(yy) * sum : yy * (g - sum));
      }
    }
  }
}

__device__ int64_t targetAt(const Nll &p, int64_t n) {
  return reinterpret_cast<const int64_t *>(p.target)[n * p.targetStride];
}

__global__ void nllForwardKernel(Nll p) {
  COOP_SINGLE_THREAD();
  const float *self = reinterpret_cast<const float *>(p.self);
  double sum = 0, count = 0;
  for (int64_t n = 0; n < p.N; ++n) {
    int64_t t = targetAt(p, n);
    if (t == p.ignore || t < 0 || t >= p.C)
      continue;
    sum -= self[n * p.rowStride + t * p.classStride];
    count += 1;
  }
  reinterpret_cast<float *>(p.out)[0] = static_cast<float>(p.mean ? sum / count : sum);
  reinterpret_cast<float *>(p.totalWeight)[0] = static_cast<float>(count);
}

__global__ void nllBackwardKernel(Nll p) {
  int64_t total = p.N * p.C;
  COOP_GRID_STRIDE(i, total) {
    int64_t n = i / p.C, c = i % p.C;
    float scale = reinterpret_cast<const float *>(p.grad)[0];
    if (p.mean)
      scale /= reinterpret_cast<const float *>(p.total)[0];
    int64_t t = targetAt(p, n);
    bool hit = t != p.ignore && t >= 0 && t < p.C && t == c;
    reinterpret_cast<float *>(p.out)[i] = hit ? -scale : 0.f;
  }
}

//===----------------------------------------------------------------------===//
// nll_loss2d
//===----------------------------------------------------------------------===//

/// The class of pixel (n, h, w), or -1 when it is ignored or out of range.
__device__ inline int64_t countedClass(const Nll2d &p, int64_t n, int64_t h, int64_t w) {
  int64_t t = loadInt(p.target,
                      n * p.target.strides[0] + h * p.target.strides[1] + w * p.target.strides[2]);
  return t == p.ignore || t < 0 || t >= p.C ? -1 : t;
}

__global__ void nll2dForwardKernel(Nll2d p) {
  COOP_SINGLE_THREAD();
  double sum = 0, count = 0;
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t h = 0; h < p.H; ++h)
      for (int64_t w = 0; w < p.W; ++w) {
        int64_t t = countedClass(p, n, h, w);
        if (t < 0)
          continue;
        sum -= loadFloat(p.self, n * p.self.strides[0] + t * p.self.strides[1] +
                                     h * p.self.strides[2] + w * p.self.strides[3]);
        count += 1;
      }
  reinterpret_cast<float *>(p.out)[0] = static_cast<float>(p.mean ? sum / count : sum);
  reinterpret_cast<float *>(p.totalWeight)[0] = static_cast<float>(count);
}

__global__ void nll2dBackwardKernel(Nll2d p, int64_t n) {
  COOP_GRID_STRIDE(e, n) {
    int64_t w = e % p.W, h = e / p.W % p.H, ch = e / (p.W * p.H) % p.C,
            batch = e / (p.W * p.H * p.C);
    float scale = reinterpret_cast<const float *>(p.grad)[0];
    if (p.mean)
      scale /= reinterpret_cast<const float *>(p.total)[0];
    reinterpret_cast<float *>(p.out)[e] = countedClass(p, batch, h, w) == ch ? -scale : 0.f;
  }
}

} // namespace

cudaError_t launchSoftmax(const Softmax &p, cudaStream_t stream) {
  int64_t lines = numel(p.outer);
  if (lines > 0 && p.length > 0)
    COOP_LAUNCH(softmaxKernel, blocksFor(lines), kThreads, stream)(p, lines);
  return cudaGetLastError();
}

cudaError_t launchNllForward(const Nll &p, cudaStream_t stream) {
  COOP_LAUNCH(nllForwardKernel, 1, 1, stream)(p);
  return cudaGetLastError();
}

cudaError_t launchNllBackward(const Nll &p, cudaStream_t stream) {
  int64_t n = p.N * p.C;
  return launchOver(n, stream, nllBackwardKernel, p);
}

cudaError_t launchNll2dForward(const Nll2d &p, cudaStream_t stream) {
  COOP_LAUNCH(nll2dForwardKernel, 1, 1, stream)(p);
  return cudaGetLastError();
}

cudaError_t launchNll2dBackward(const Nll2d &p, cudaStream_t stream) {
  int64_t n = p.N * p.C * p.H * p.W;
  return launchOver(n, stream, nll2dBackwardKernel, p, n);
}

} // namespace coop::rt::cuda
