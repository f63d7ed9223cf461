//===- CudaKernels.cu - The CUDA backend's own kernels ---------------------===//
//
// See CudaKernels.h. Simple grid-stride kernels: correctness and
// determinism first (no atomics; every sum has one fixed order).
//
//===----------------------------------------------------------------------===//

#include "CudaDevice.cuh"

namespace coop::rt::cuda {
namespace {

constexpr double kSqrt2 = 1.4142135623730951, kSqrt2OverPi = 0.7978845608028654,
                 kInvSqrt2Pi = 0.3989422804014327;

__global__ void elementwiseKernel(Elementwise p, int64_t n) {
  COOP_GRID_STRIDE(i, n) {
    int64_t off[3];
    for (int k = 0; k < p.numInputs; ++k)
      off[k] = offsetOf(i, p.shape, p.in[k].strides);
    if (p.op == Op::AddInt64 || p.op == Op::MulInt64) {
      int64_t a = loadInt(p.in[0], off[0]);
      int64_t b = p.scalarB ? p.scalarInt : loadInt(p.in[1], off[1]);
      reinterpret_cast<int64_t *>(p.out)[i] = p.op == Op::MulInt64 ? a * b : a + p.alphaInt * b;
      continue;
    }
    float a = loadFloat(p.in[0], off[0]);
    float b = p.numInputs > 1 ? loadFloat(p.in[1], off[1])
                              : (p.scalarB ? static_cast<float>(p.scalar) : 0.f);
    float c = p.numInputs > 2 ? loadFloat(p.in[2], off[2]) : 0.f;
    float alpha = static_cast<float>(p.alpha), scalar = static_cast<float>(p.scalar);
    float r = 0;
    switch (p.op) {
    case Op::Add: r = a + alpha * b; break;
    case Op::Sub: r = a - alpha * b; break;
    case Op::Mul: r = a * b; break;
    case Op::Div: r = a / b; break;
    case Op::Relu: r = a > 0.f ? a : 0.f; break;
    case Op::Sqrt: r = sqrtf(a); break;
    case Op::ThresholdBwd: r = b <= scalar ? 0.f : a; break;
    case Op::DropoutBwd: r = a * b * scalar; break;
    case Op::Addcmul: r = a + scalar * (b * c); break;
    case Op::Addcdiv: r = a + scalar * (b / c); break;
    case Op::Gelu:
      if (p.flag) {
        double u = kSqrt2OverPi * (a + 0.044715 * a * a * a);
        r = static_cast<float>(0.5 * a * (1 + tanh(u)));
      } else {
        r = static_cast<float>(0.5 * a * (1 + erf(a / kSqrt2)));
      }
      break;
    case Op::GeluBwd:
      if (p.flag) {
        double x = b, x3 = 0.044715 * x * x * x, u = kSqrt2OverPi * (x + x3), t = tanh(u);
        double du = kSqrt2OverPi * (1 + 3 * 0.044715 * x * x);
        r = static_cast<float>(a * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * du));
      } else {
        double cdf = 0.5 * (1 + erf(b / kSqrt2));
        double pdf = kInvSqrt2Pi * exp(-0.5 * double(b) * b);
        r = static_cast<float>(a * (cdf + b * pdf));
      }
      break;
    case Op::Scale: r = alpha * a; break;
    case Op::Sigmoid: r = 1.f / (1.f + expf(-a)); break;
    case Op::Tanh: r = tanhf(a); break;
    case Op::SigmoidBwd: r = a * (1.f - b) * b; break;
    case Op::TanhBwd: r = a * (1.f - b * b); break;
    case Op::Neg: r = -a; break;
    case Op::PowScalarBase: r = powf(scalar, a); break;
    default: break;
    }
    reinterpret_cast<float *>(p.out)[i] = r;
  }
}

__global__ void fillKernel(char *out, int dtype, int64_t n, double value) {
  COOP_GRID_STRIDE(i, n) {
    switch (dtype) {
    case F32: reinterpret_cast<float *>(out)[i] = static_cast<float>(value); break;
    case F64: reinterpret_cast<double *>(out)[i] = value; break;
    case I64: reinterpret_cast<int64_t *>(out)[i] = static_cast<int64_t>(value); break;
    case I32: reinterpret_cast<int32_t *>(out)[i] = static_cast<int32_t>(value); break;
    default: reinterpret_cast<uint8_t *>(out)[i] = value != 0; break;
    }
  }
}

template <typename T>
__global__ void copyKernel(char *dst, Operand src, Shape shape, int64_t n) {
  COOP_GRID_STRIDE(i, n)
    reinterpret_cast<T *>(dst)[i] =
        reinterpret_cast<const T *>(src.data)[offsetOf(i, shape, src.strides)];
}

__global__ void memmoveKernel(char *dst, const char *src, int64_t bytes, bool backwards) {
  COOP_SINGLE_THREAD();
  if (backwards)
    for (int64_t i = bytes - 1; i >= 0; --i)
      dst[i] = src[i];
  else
    for (int64_t i = 0; i < bytes; ++i)
      dst[i] = src[i];
}

__global__ void randomKernel(Random p, int64_t n) {
  COOP_GRID_STRIDE(i, n) {
    float u = uniform(p.key, p.offset + i);
    if (!p.mask) { // bernoulli_: 1 with probability p
      reinterpret_cast<float *>(p.out)[i] = u < p.p ? 1.f : 0.f;
      continue;
    }
    bool keep = u < 1 - p.p;
    p.mask[i] = keep;
    reinterpret_cast<float *>(p.out)[i] =
        keep ? loadFloat(p.in, offsetOf(i, p.shape, p.in.strides)) * p.scale : 0.f;
  }
}

__global__ void reduceKernel(Reduce p) {
  COOP_GRID_STRIDE(i, p.outCount) {
    int64_t base = offsetOf(i, p.kept, p.in.strides);
    if (p.integer) {
      int64_t sum = 0;
      for (int64_t k = 0; k < p.count; ++k)
        sum += loadInt(p.in, base + offsetOf(k, p.reduced, p.in.strides));
      reinterpret_cast<int64_t *>(p.out)[i] = sum;
      continue;
    }
    double sum = 0;
    for (int64_t k = 0; k < p.count; ++k)
      sum += loadFloat(p.in, base + offsetOf(k, p.reduced, p.in.strides));
    reinterpret_cast<float *>(p.out)[i] = static_cast<float>(p.mean ? sum / p.count : sum);
  }
}

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

__global__ void matmulKernel(Matmul p, int64_t n) {
  COOP_GRID_STRIDE(i, n) {
    int64_t j = i % p.N, row = (i / p.N) % p.M, t = i / (p.N * p.M);
    const float *ar = reinterpret_cast<const float *>(p.a) + t * p.ab + row * p.as0;
    const float *bc = reinterpret_cast<const float *>(p.b) + t * p.bb + j * p.bs1;
    double sum = 0;
    for (int64_t k = 0; k < p.K; ++k)
      sum += double(ar[k * p.as1]) * bc[k * p.bs0];
    double value = p.alpha * sum;
    if (p.hasBias)
      value += p.beta * loadFloat(p.bias, offsetOf(i, p.outShape, p.bias.strides));
    reinterpret_cast<float *>(p.out)[i] = static_cast<float>(value);
  }
}

} // namespace

cudaError_t launchElementwise(const Elementwise &p, cudaStream_t stream) {
  int64_t n = numel(p.shape);
  if (n > 0)
    COOP_LAUNCH(elementwiseKernel, blocksFor(n), kThreads, stream)(p, n);
  return cudaGetLastError();
}

cudaError_t launchFill(char *out, int dtype, int64_t count, double value, cudaStream_t stream) {
  if (count > 0)
    COOP_LAUNCH(fillKernel, blocksFor(count), kThreads, stream)(out, dtype, count, value);
  return cudaGetLastError();
}

cudaError_t launchCopy(char *dst, const Operand &src, const Shape &shape, int width,
                       bool overlap, bool backwards, cudaStream_t stream) {
  int64_t n = numel(shape);
  if (n == 0)
    return cudaGetLastError();
  if (overlap) {
    COOP_LAUNCH(memmoveKernel, 1, 1, stream)(dst, src.data, n * width, backwards);
    return cudaGetLastError();
  }
  switch (width) {
  case 1: COOP_LAUNCH(copyKernel<uint8_t>, blocksFor(n), kThreads, stream)(dst, src, shape, n); break;
  case 2: COOP_LAUNCH(copyKernel<uint16_t>, blocksFor(n), kThreads, stream)(dst, src, shape, n); break;
  case 4: COOP_LAUNCH(copyKernel<uint32_t>, blocksFor(n), kThreads, stream)(dst, src, shape, n); break;
  case 8: COOP_LAUNCH(copyKernel<uint64_t>, blocksFor(n), kThreads, stream)(dst, src, shape, n); break;
  default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t launchRandom(const Random &p, cudaStream_t stream) {
  int64_t n = numel(p.shape);
  if (n > 0)
    COOP_LAUNCH(randomKernel, blocksFor(n), kThreads, stream)(p, n);
  return cudaGetLastError();
}

cudaError_t launchReduce(const Reduce &p, cudaStream_t stream) {
  if (p.outCount > 0)
    COOP_LAUNCH(reduceKernel, blocksFor(p.outCount), kThreads, stream)(p);
  return cudaGetLastError();
}

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
  if (n > 0)
    COOP_LAUNCH(nllBackwardKernel, blocksFor(n), kThreads, stream)(p);
  return cudaGetLastError();
}

cudaError_t launchMatmul(const Matmul &p, cudaStream_t stream) {
  int64_t n = p.batch * p.M * p.N;
  if (n > 0)
    COOP_LAUNCH(matmulKernel, blocksFor(n), kThreads, stream)(p, n);
  return cudaGetLastError();
}

} // namespace coop::rt::cuda
