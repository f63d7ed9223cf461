//===- CudaKernelsConv.cu - Kernels: convolution and pooling ===//
//
// See CudaKernelsConv.h. One thread per output element, which gathers its
// terms in the CPU kernel's loop order; taps that fall outside a tensor are
// skipped by computing the valid range up front, which leaves that order
// (and so every sum) unchanged.
//
//===----------------------------------------------------------------------===//

#include "CudaDevice.cuh"
#include "CudaKernelsConv.h"

namespace coop::rt::cuda {
namespace {

/// The offset of element (n, c, h, w) of a [N, C, H, W] operand.
__device__ inline int64_t offset4(const Operand &t, int64_t n, int64_t c, int64_t h, int64_t w) {
  return n * t.strides[0] + c * t.strides[1] + h * t.strides[2] + w * t.strides[3];
}

/// Element (n, c, h, w) of a float [N, C, H, W] operand.
__device__ inline float at4(const Operand &t, int64_t n, int64_t c, int64_t h, int64_t w) {
  return reinterpret_cast<const float *>(t.data)[offset4(t, n, c, h, w)];
}

__device__ inline int64_t floorDiv(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

__device__ inline int64_t minOf(int64_t a, int64_t b) { return a < b ? a : b; }
__device__ inline int64_t maxOf(int64_t a, int64_t b) { return a > b ? a : b; }
__device__ inline int64_t clampTo(int64_t v, int64_t lo, int64_t hi) {
  return minOf(maxOf(v, lo), hi);
}

/// [lo, hi): the t in [0, count) for which base + t * step lies in [0, size).
__device__ inline void tapRange(int64_t base, int64_t step, int64_t size, int64_t count,
                                int64_t &lo, int64_t &hi) {
  lo = clampTo(floorDiv(-base + step - 1, step), 0, count);
  hi = clampTo(floorDiv(size - 1 - base, step) + 1, lo, count);
}

/// [lo, hi): the windows among `count` (starting at o * stride - pad,
/// `span` wide) that hold row i.
__device__ inline void windowsHolding(int64_t i, int64_t pad, int64_t span, int64_t stride,
                                      int64_t count, int64_t &lo, int64_t &hi) {
  lo = clampTo(floorDiv(i + pad - span, stride) + 1, 0, count);
  hi = clampTo(floorDiv(i + pad, stride) + 1, lo, count);
}

/// Splits row-major element i of [d0, d1, d2, d3] into its index.
__device__ inline void split4(int64_t i, int64_t d1, int64_t d2, int64_t d3, int64_t &i0,
                              int64_t &i1, int64_t &i2, int64_t &i3) {
  i3 = i % d3;
  i2 = (i / d3) % d2;
  i1 = (i / (d3 * d2)) % d1;
  i0 = i / (d3 * d2 * d1);
}

__global__ void convGatherKernel(ConvGather p, int64_t count) {
  const ConvTaps &t = p.taps;
  COOP_GRID_STRIDE(i, count) {
    int64_t n, o, y, x;
    split4(i, p.outChannels, p.outH, p.outW, n, o, y, x);
    int64_t group = o / p.outPerGroup;
    double sum = p.hasBias ? loadFloat(p.bias, offsetOf(o, p.biasShape, p.bias.strides)) : 0.f;
    if (p.transposed) {
      for (int64_t j = 0; j < p.srcPerGroup; ++j) {
        int64_t ch = group * p.srcPerGroup + j;
        for (int64_t r = 0; r < t.R; ++r) {
          int64_t row = transposedSource(y, r, t.sh, t.ph, t.dh, p.srcH);
          if (row < 0)
            continue;
          for (int64_t s = 0; s < t.S; ++s) {
            int64_t col = transposedSource(x, s, t.sw, t.pw, t.dw, p.srcW);
            if (col >= 0)
              sum += double(at4(p.src, n, ch, row, col)) *
                     at4(p.weight, ch, o % p.outPerGroup, r, s);
          }
        }
      }
    } else {
      int64_t row0 = y * t.sh - t.ph, col0 = x * t.sw - t.pw, r0, r1, s0, s1;
      tapRange(row0, t.dh, p.srcH, t.R, r0, r1);
      tapRange(col0, t.dw, p.srcW, t.S, s0, s1);
      for (int64_t j = 0; j < p.srcPerGroup; ++j) {
        int64_t ch = group * p.srcPerGroup + j;
        for (int64_t r = r0; r < r1; ++r)
          for (int64_t s = s0; s < s1; ++s)
            sum += double(at4(p.src, n, ch, row0 + r * t.dh, col0 + s * t.dw)) *
                   at4(p.weight, o, j, r, s);
      }
    }
    reinterpret_cast<float *>(p.out)[i] = static_cast<float>(sum);
  }
}

__global__ void convWeightGradKernel(ConvWeightGrad p, int64_t count) {
  const ConvTaps &t = p.taps;
  COOP_GRID_STRIDE(i, count) {
    int64_t a, b, r, s;
    split4(i, p.bPerGroup, t.R, t.S, a, b, r, s);
    int64_t bChannel = a / p.aPerGroup * p.bPerGroup + b;
    int64_t rowShift = r * t.dh - t.ph, colShift = s * t.dw - t.pw, h0, h1, w0, w1;
    tapRange(rowShift, t.sh, p.bH, p.aH, h0, h1);
    tapRange(colShift, t.sw, p.bW, p.aW, w0, w1);
    double sum = 0;
    for (int64_t n = 0; n < p.N; ++n)
      for (int64_t h = h0; h < h1; ++h)
        for (int64_t w = w0; w < w1; ++w)
          sum += double(at4(p.a, n, a, h, w)) *
                 at4(p.b, n, bChannel, h * t.sh + rowShift, w * t.sw + colShift);
    reinterpret_cast<float *>(p.out)[i] = static_cast<float>(sum);
  }
}

__global__ void convBiasGradKernel(Operand go, Shape shape, char *out) {
  COOP_GRID_STRIDE(k, shape.dims[1]) {
    double sum = 0;
    for (int64_t n = 0; n < shape.dims[0]; ++n)
      for (int64_t h = 0; h < shape.dims[2]; ++h)
        for (int64_t w = 0; w < shape.dims[3]; ++w)
          sum += at4(go, n, k, h, w);
    reinterpret_cast<float *>(out)[k] = static_cast<float>(sum);
  }
}

__global__ void maxPoolKernel(Pool2d p, int64_t count) {
  COOP_GRID_STRIDE(i, count) {
    int64_t n, ch, oh, ow;
    split4(i, p.C, p.OH, p.OW, n, ch, oh, ow);
    int64_t h = oh * p.sh - p.ph, w = ow * p.sw - p.pw, r0, r1, s0, s1;
    tapRange(h, p.dh, p.H, p.kh, r0, r1);
    tapRange(w, p.dw, p.W, p.kw, s0, s1);
    float best = -INFINITY;
    int64_t where = -1;
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t s = s0; s < s1; ++s) {
        int64_t ih = h + r * p.dh, iw = w + s * p.dw;
        float v = at4(p.in, n, ch, ih, iw);
        if (where < 0 || v > best || std::isnan(v)) {
          best = v;
          where = ih * p.W + iw;
        }
      }
    reinterpret_cast<float *>(p.out)[i] = best;
    reinterpret_cast<int64_t *>(p.outIndices)[i] = where;
  }
}

__global__ void maxPoolBackwardKernel(Pool2d p, int64_t count) {
  COOP_GRID_STRIDE(i, count) {
    int64_t n, ch, ih, iw;
    split4(i, p.C, p.H, p.W, n, ch, ih, iw);
    int64_t oh0, oh1, ow0, ow1;
    windowsHolding(ih, p.ph, (p.kh - 1) * p.dh + 1, p.sh, p.OH, oh0, oh1);
    windowsHolding(iw, p.pw, (p.kw - 1) * p.dw + 1, p.sw, p.OW, ow0, ow1);
    const int64_t *indices = reinterpret_cast<const int64_t *>(p.indices.data);
    float sum = 0.f; // the CPU kernel accumulates in float, in output order
    for (int64_t oh = oh0; oh < oh1; ++oh)
      for (int64_t ow = ow0; ow < ow1; ++ow)
        if (indices[offset4(p.indices, n, ch, oh, ow)] == ih * p.W + iw)
          sum += at4(p.in, n, ch, oh, ow);
    reinterpret_cast<float *>(p.out)[i] = sum;
  }
}

/// The average pooling window of output (oh, ow), clipped to the input,
/// and its divisor (CpuKernelsConv.cpp's AvgPool::window).
__device__ inline int64_t avgWindow(const Pool2d &p, int64_t oh, int64_t ow, int64_t &h0,
                                    int64_t &h1, int64_t &w0, int64_t &w1) {
  h0 = oh * p.sh - p.ph;
  w0 = ow * p.sw - p.pw;
  h1 = minOf(h0 + p.kh, p.H + p.ph);
  w1 = minOf(w0 + p.kw, p.W + p.pw);
  int64_t padded = (h1 - h0) * (w1 - w0);
  h0 = maxOf(h0, 0);
  w0 = maxOf(w0, 0);
  h1 = minOf(h1, p.H);
  w1 = minOf(w1, p.W);
  return p.divisor ? p.divisor : p.includePad ? padded : (h1 - h0) * (w1 - w0);
}

__global__ void avgPoolKernel(Pool2d p, int64_t count) {
  COOP_GRID_STRIDE(i, count) {
    int64_t n, ch, oh, ow, h0, h1, w0, w1;
    split4(i, p.C, p.OH, p.OW, n, ch, oh, ow);
    int64_t divisor = avgWindow(p, oh, ow, h0, h1, w0, w1);
    double sum = 0;
    for (int64_t h = h0; h < h1; ++h)
      for (int64_t w = w0; w < w1; ++w)
        sum += at4(p.in, n, ch, h, w);
    reinterpret_cast<float *>(p.out)[i] = static_cast<float>(sum / divisor);
  }
}

__global__ void avgPoolBackwardKernel(Pool2d p, int64_t count) {
  COOP_GRID_STRIDE(i, count) {
    int64_t n, ch, ih, iw, oh0, oh1, ow0, ow1;
    split4(i, p.C, p.H, p.W, n, ch, ih, iw);
    windowsHolding(ih, p.ph, p.kh, p.sh, p.OH, oh0, oh1);
    windowsHolding(iw, p.pw, p.kw, p.sw, p.OW, ow0, ow1);
    double sum = 0;
    for (int64_t oh = oh0; oh < oh1; ++oh)
      for (int64_t ow = ow0; ow < ow1; ++ow) {
        int64_t h0, h1, w0, w1;
        sum += double(at4(p.in, n, ch, oh, ow)) / avgWindow(p, oh, ow, h0, h1, w0, w1);
      }
    reinterpret_cast<float *>(p.out)[i] = static_cast<float>(sum);
  }
}

/// Adaptive pooling: window o of `out` over `in` rows is
/// [floor(o * in / out), ceil((o + 1) * in / out)).
__device__ inline int64_t windowStart(int64_t o, int64_t in, int64_t out) { return o * in / out; }
__device__ inline int64_t windowEnd(int64_t o, int64_t in, int64_t out) {
  return ((o + 1) * in + out - 1) / out;
}

__global__ void adaptiveAvgPoolKernel(Pool2d p, int64_t count) {
  COOP_GRID_STRIDE(i, count) {
    int64_t n, ch, oh, ow;
    split4(i, p.C, p.OH, p.OW, n, ch, oh, ow);
    int64_t h0 = windowStart(oh, p.H, p.OH), h1 = windowEnd(oh, p.H, p.OH);
    int64_t w0 = windowStart(ow, p.W, p.OW), w1 = windowEnd(ow, p.W, p.OW);
    double sum = 0;
    for (int64_t h = h0; h < h1; ++h)
      for (int64_t w = w0; w < w1; ++w)
        sum += at4(p.in, n, ch, h, w);
    reinterpret_cast<float *>(p.out)[i] = static_cast<float>(sum / ((h1 - h0) * (w1 - w0)));
  }
}

__global__ void adaptiveAvgPoolBackwardKernel(Pool2d p, int64_t count) {
  COOP_GRID_STRIDE(i, count) {
    int64_t n, ch, ih, iw;
    split4(i, p.C, p.H, p.W, n, ch, ih, iw);
    // The windows holding (ih, iw), by the same formula with in and out swapped.
    int64_t oh0 = windowStart(ih, p.OH, p.H), oh1 = minOf(windowEnd(ih, p.OH, p.H), p.OH);
    int64_t ow0 = windowStart(iw, p.OW, p.W), ow1 = minOf(windowEnd(iw, p.OW, p.W), p.OW);
    double sum = 0;
    for (int64_t oh = oh0; oh < oh1; ++oh)
      for (int64_t ow = ow0; ow < ow1; ++ow) {
        int64_t area = (windowEnd(oh, p.H, p.OH) - windowStart(oh, p.H, p.OH)) *
                       (windowEnd(ow, p.W, p.OW) - windowStart(ow, p.W, p.OW));
        sum += double(at4(p.in, n, ch, oh, ow)) / area;
      }
    reinterpret_cast<float *>(p.out)[i] = static_cast<float>(sum);
  }
}

int64_t pooledCount(const Pool2d &p) { return p.N * p.C * p.OH * p.OW; }
int64_t inputCount(const Pool2d &p) { return p.N * p.C * p.H * p.W; }

} // namespace

cudaError_t launchConvGather(const ConvGather &p, cudaStream_t stream) {
  int64_t n = p.N * p.outChannels * p.outH * p.outW;
  return launchOver(n, stream, convGatherKernel, p, n);
}

cudaError_t launchConvWeightGrad(const ConvWeightGrad &p, cudaStream_t stream) {
  int64_t n = p.aChannels * p.bPerGroup * p.taps.R * p.taps.S;
  return launchOver(n, stream, convWeightGradKernel, p, n);
}

cudaError_t launchConvBiasGrad(const Operand &gradOutput, const Shape &shape, char *out,
                               cudaStream_t stream) {
  if (shape.dims[1] > 0)
    COOP_LAUNCH(convBiasGradKernel, blocksFor(shape.dims[1]), kThreads, stream)(gradOutput,
                                                                                shape, out);
  return cudaGetLastError();
}

cudaError_t launchMaxPool(const Pool2d &p, cudaStream_t stream) {
  return launchOver(pooledCount(p), stream, maxPoolKernel, p, pooledCount(p));
}
cudaError_t launchMaxPoolBackward(const Pool2d &p, cudaStream_t stream) {
  return launchOver(inputCount(p), stream, maxPoolBackwardKernel, p, inputCount(p));
}
cudaError_t launchAvgPool(const Pool2d &p, cudaStream_t stream) {
  return launchOver(pooledCount(p), stream, avgPoolKernel, p, pooledCount(p));
}
cudaError_t launchAvgPoolBackward(const Pool2d &p, cudaStream_t stream) {
  return launchOver(inputCount(p), stream, avgPoolBackwardKernel, p, inputCount(p));
}
cudaError_t launchAdaptiveAvgPool(const Pool2d &p, cudaStream_t stream) {
  return launchOver(pooledCount(p), stream, adaptiveAvgPoolKernel, p, pooledCount(p));
}
cudaError_t launchAdaptiveAvgPoolBackward(const Pool2d &p, cudaStream_t stream) {
  return launchOver(inputCount(p), stream, adaptiveAvgPoolBackwardKernel, p, inputCount(p));
}

} // namespace coop::rt::cuda
