//===- CpuKernelsConv.cpp - CPU kernels: convolution, pooling and upsampling ===//
//
// Convolution (2-D, 1-D seen as 2-D, transposed) and its backward; max,
// average and adaptive pooling; nearest and bilinear upsampling, all on
// [N, C, H, W] tensors. CUDA: CudaKernelsConv.cu.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "HostDeviceMath.h"

#include <cmath>
#include <limits>
#include <utility>

namespace coop::rt {
namespace {

using namespace cpu;

//===----------------------------------------------------------------------===//
// Convolution (2-D, and 1-D seen as 2-D) and pooling (2-D)
//===----------------------------------------------------------------------===//

struct Conv2d {
  int64_t N, C, H, W, K, R, S, OH, OW, groups;
  int64_t sh, sw, ph, pw, dh, dw;
};

Conv2d convGeometry(const Call &c, const Tensor &input, const Tensor &weight, const Tensor &out) {
  Conv2d g;
  g.N = input.shape[0]; g.C = input.shape[1]; g.H = input.shape[2]; g.W = input.shape[3];
  g.K = weight.shape[0]; g.R = weight.shape[2]; g.S = weight.shape[3];
  g.OH = out.shape[2]; g.OW = out.shape[3];
  g.groups = c.i("groups", 1);
  g.sh = convolutionItem(c, "stride", 0, 1); g.sw = convolutionItem(c, "stride", 1, 1);
  g.ph = convolutionItem(c, "padding", 0, 0); g.pw = convolutionItem(c, "padding", 1, 0);
  g.dh = convolutionItem(c, "dilation", 0, 1); g.dw = convolutionItem(c, "dilation", 1, 1);
  return g;
}

std::string checkTransposedConv(const Call &c, const Tensor &input, const Tensor &weight,
                                const Tensor &out);

/// Checks a 2-D convolution's rank-4 tensors.
std::string checkConv2d(const Call &c, const Tensor &input, const Tensor &weight,
                        const Tensor &out) {
  if (c.b("transposed"))
    return checkTransposedConv(c, input, weight, out);
  Conv2d g = convGeometry(c, input, weight, out);
  if (g.groups < 1 || g.C % g.groups || g.K % g.groups || weight.shape[1] * g.groups != g.C)
    return "channels and groups do not match";
  if (g.sh < 1 || g.sw < 1 || g.dh < 1 || g.dw < 1)
    return "stride and dilation must be positive";
  int64_t oh = (g.H + 2 * g.ph - g.dh * (g.R - 1) - 1) / g.sh + 1;
  int64_t ow = (g.W + 2 * g.pw - g.dw * (g.S - 1) - 1) / g.sw + 1;
  if (out.shape[0] != g.N || out.shape[1] != g.K || oh != g.OH || ow != g.OW)
    return "the output is not the convolution's";
  return "";
}

/// Checks a 2-D convolution, or a 1-D one (rank-3 tensors), which runs as
/// 2-D (convolutionAs2d).
std::string checkConv(const Call &c, const Tensor &input, const Tensor &weight,
                      const Tensor &out) {
  int rank = input.rank;
  std::string problem =
      (rank != 3 && rank != 4) || weight.rank != rank || out.rank != rank
          ? "only 1-D and 2-D convolutions (tensors all of rank 3 or all of rank 4) are "
            "implemented"
          : checkConv2d(c, convolutionAs2d(input), convolutionAs2d(weight),
                        convolutionAs2d(out));
  if (problem.empty())
    return "";
  return problem + ": input " + shapeText(input) + ", weight " + shapeText(weight) +
         ", output " + shapeText(out);
}

//===----------------------------------------------------------------------===//
// Transposed 2-D convolution (the gradient of a convolution as a layer):
// input [N, C, H, W], weight [C, K / groups, R, S], output [N, K, OH, OW]
// with OH = (H - 1) * stride - 2 * padding + dilation * (R - 1) +
// output_padding + 1. Output (oh, ow) reads input (ih, iw) through tap
// (r, s) when oh = ih * stride - padding + r * dilation.
//===----------------------------------------------------------------------===//

Conv2d transposedGeometry(const Call &c, const Tensor &input, const Tensor &weight,
                          const Tensor &out) {
  Conv2d g = convGeometry(c, input, weight, out);
  g.K = weight.shape[1] * g.groups;
  return g;
}

std::string checkTransposedConv(const Call &c, const Tensor &input, const Tensor &weight,
                                const Tensor &out) {
  Conv2d g = transposedGeometry(c, input, weight, out);
  if (g.groups < 1 || g.C % g.groups || weight.shape[0] != g.C)
    return "transposed convolution: channels and groups do not match";
  if (g.sh < 1 || g.sw < 1 || g.dh < 1 || g.dw < 1)
    return "stride and dilation must be positive";
  int64_t oph = convolutionItem(c, "output_padding", 0, 0);
  int64_t opw = convolutionItem(c, "output_padding", 1, 0);
  int64_t oh = (g.H - 1) * g.sh - 2 * g.ph + g.dh * (g.R - 1) + oph + 1;
  int64_t ow = (g.W - 1) * g.sw - 2 * g.pw + g.dw * (g.S - 1) + opw + 1;
  if (out.shape[0] != g.N || out.shape[1] != g.K || oh != g.OH || ow != g.OW)
    return "the output is not the transposed convolution's";
  return "";
}

/// The bias gradient of a (transposed) convolution: the output gradient
/// summed over batch and space, per output channel, in a fixed order.
void writeBiasGradient(const Tensor &go, const Conv2d &g, float *db) {
  for (int64_t k = 0; k < g.K; ++k) {
    double sum = 0;
    for (int64_t n = 0; n < g.N; ++n)
      for (int64_t oh = 0; oh < g.OH; ++oh)
        for (int64_t ow = 0; ow < g.OW; ++ow)
          sum += ld4(go, n, k, oh, ow);
    db[k] = static_cast<float>(sum);
  }
}

/// The same geometry seen from its output: input and output swapped
/// (channels and spatial sizes). A convolution's input gradient is a
/// transposed convolution of its output gradient, a transposed
/// convolution's an ordinary one, and both weight gradients are one loop.
Conv2d swapSides(Conv2d g) {
  std::swap(g.C, g.K);
  std::swap(g.H, g.OH);
  std::swap(g.W, g.OW);
  return g;
}

/// The input row that output row `o` reads through tap `r`: a
/// convolution's, or a transposed convolution's; -1 where none.
template <bool Transposed>
int64_t tapSource(int64_t o, int64_t r, int64_t stride, int64_t pad, int64_t dil, int64_t size) {
  return Transposed ? transposedSource(o, r, stride, pad, dil, size)
                    : convolvedSource(o, r, stride, pad, dil, size);
}

/// Along one axis, the source of each (tap, output position) pair, tap
/// by tap: tapSource's, computed once per call instead of per product.
template <bool Transposed>
std::vector<int64_t> tapSources(int64_t outSize, int64_t taps, int64_t stride, int64_t pad,
                                int64_t dil, int64_t size) {
  std::vector<int64_t> sources(size_t(taps * outSize));
  for (int64_t t = 0; t < taps; ++t)
    for (int64_t o = 0; o < outSize; ++o)
      sources[size_t(t * outSize + o)] = tapSource<Transposed>(o, t, stride, pad, dil, size);
  return sources;
}

/// out[n, k, oh, ow] = bias[k] + the sum over (ci, r, s), in that order and
/// in double, of x[n, ch, ih, iw] * the weight of (ch, k) at tap (r, s),
/// ch = group * C/groups + ci, (ih, iw) the tap's source of (oh, ow). The
/// weight is [K, C/groups, R, S], a transposed convolution's [C,
/// K/groups, R, S]. A whole output plane is summed at once, tap after tap,
/// so that each element still adds its products in that order.
template <bool Transposed>
void convolve(const Tensor &x, const Tensor &w, const Tensor *bias, const Conv2d &g, float *o) {
  int64_t cpg = g.C / g.groups, kpg = g.K / g.groups;
  const std::vector<int64_t> rows = tapSources<Transposed>(g.OH, g.R, g.sh, g.ph, g.dh, g.H);
  const std::vector<int64_t> cols = tapSources<Transposed>(g.OW, g.S, g.sw, g.pw, g.dw, g.W);
  const float *X = x.ptr<float>();
  std::vector<double> plane(size_t(g.OH * g.OW));
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t k = 0; k < g.K; ++k) {
      int64_t group = k / kpg;
      std::fill(plane.begin(), plane.end(), bias ? double(at1(bias, k, 0)) : 0.0);
      for (int64_t ci = 0; ci < cpg; ++ci) {
        int64_t ch = group * cpg + ci;
        const float *in = X + n * x.strides[0] + ch * x.strides[1];
        for (int64_t r = 0; r < g.R; ++r)
          for (int64_t s = 0; s < g.S; ++s) {
            double weight = Transposed ? ld4(w, ch, k % kpg, r, s) : ld4(w, k, ci, r, s);
            const int64_t *iw = &cols[size_t(s * g.OW)];
            for (int64_t oh = 0; oh < g.OH; ++oh) {
              int64_t ih = rows[size_t(r * g.OH + oh)];
              if (ih < 0)
                continue;
              const float *row = in + ih * x.strides[2];
              double *sum = &plane[size_t(oh * g.OW)];
              for (int64_t ow = 0; ow < g.OW; ++ow)
                if (iw[ow] >= 0)
                  sum[ow] += double(row[iw[ow] * x.strides[3]]) * weight;
            }
          }
      }
      float *out = o + (n * g.K + k) * g.OH * g.OW;
      for (size_t i = 0; i < plane.size(); ++i)
        out[i] = static_cast<float>(plane[i]);
    }
}

/// The weight gradient of convolve<false>(x, ...) whose output has gradient
/// `go`: dw[k, ci, r, s] = the sum over (n, oh, ow), in that order and in
/// double, of go[n, k, oh, ow] * x[n, group * C/groups + ci, ih, iw], (ih,
/// iw) the tap's source of (oh, ow). The R * S taps of one (k, ci) are
/// summed side by side, each in that order.
void convolutionWeightGradient(const Tensor &go, const Tensor &x, const Conv2d &g, float *dw) {
  int64_t cpg = g.C / g.groups, kpg = g.K / g.groups;
  const std::vector<int64_t> rows = tapSources<false>(g.OH, g.R, g.sh, g.ph, g.dh, g.H);
  const std::vector<int64_t> cols = tapSources<false>(g.OW, g.S, g.sw, g.pw, g.dw, g.W);
  const float *GO = go.ptr<float>(), *X = x.ptr<float>();
  std::vector<double> taps(size_t(g.R * g.S));
  for (int64_t k = 0; k < g.K; ++k)
    for (int64_t ci = 0; ci < cpg; ++ci) {
      int64_t ch = k / kpg * cpg + ci;
      std::fill(taps.begin(), taps.end(), 0.0);
      for (int64_t n = 0; n < g.N; ++n) {
        const float *grad = GO + n * go.strides[0] + k * go.strides[1];
        const float *in = X + n * x.strides[0] + ch * x.strides[1];
        for (int64_t oh = 0; oh < g.OH; ++oh) {
          const float *gradRow = grad + oh * go.strides[2];
          for (int64_t r = 0; r < g.R; ++r) {
            int64_t ih = rows[size_t(r * g.OH + oh)];
            if (ih < 0)
              continue;
            const float *row = in + ih * x.strides[2];
            double *sum = &taps[size_t(r * g.S)];
            for (int64_t ow = 0; ow < g.OW; ++ow) {
              double gradient = gradRow[ow * go.strides[3]];
              for (int64_t s = 0; s < g.S; ++s) {
                int64_t iw = cols[size_t(s * g.OW + ow)];
                if (iw >= 0)
                  sum[s] += gradient * row[iw * x.strides[3]];
              }
            }
          }
        }
      }
      for (int64_t t = 0; t < g.R * g.S; ++t)
        dw[(k * cpg + ci) * g.R * g.S + t] = static_cast<float>(taps[size_t(t)]);
    }
}

// convolution(input, weight, bias?, stride, padding, dilation, transposed,
// output_padding, groups)
std::string prepareConvolution(const Signature &sig) {
  TRY(expect(sig, 1));
  TRY(needTensor(sig, 0, "input"));
  TRY(needTensor(sig, 1, "weight"));
  return checkConv(sig.call, *sig.call.tensor(0), *sig.call.tensor(1), sig.outputs[0]);
}

void runConvolution(const Call &c) {
  const Tensor x = convolutionAs2d(*c.tensor(0)), w = convolutionAs2d(*c.tensor(1));
  const Tensor out = convolutionAs2d(c.out(0));
  if (c.b("transposed"))
    convolve<true>(x, w, c.tensor(2), transposedGeometry(c, x, w, out), outf(out));
  else
    convolve<false>(x, w, c.tensor(2), convGeometry(c, x, w, out), outf(out));
}

// convolution_backward(grad_output, input, weight, bias_sizes, stride,
// padding, dilation, transposed, output_padding, groups, output_mask)
std::string prepareConvolutionBackward(const Signature &sig) {
  TRY(prepareMaskedBackward(sig));
  TRY(needTensor(sig, 0, "grad_output"));
  TRY(needTensor(sig, 1, "input"));
  TRY(needTensor(sig, 2, "weight"));
  return checkConv(sig.call, *sig.call.tensor(1), *sig.call.tensor(2), *sig.call.tensor(0));
}

/// A convolution's input gradient is the transposed convolution of
/// grad_output, a transposed convolution's the ordinary one; a transposed
/// convolution's weight gradient is convolutionWeightGradient's with input
/// and grad_output in each other's place.
void runConvolutionBackward(const Call &c) {
  const Tensor go = convolutionAs2d(*c.tensor(0)), x = convolutionAs2d(*c.tensor(1)),
               w = convolutionAs2d(*c.tensor(2));
  bool transposed = c.b("transposed");
  Conv2d g = transposed ? transposedGeometry(c, x, w, go) : convGeometry(c, x, w, go);
  int outs[3];
  maskedOutputs(c, outs);
  if (outs[0] >= 0) {
    float *dx = outf(c.out(outs[0]));
    if (transposed)
      convolve<false>(go, w, nullptr, swapSides(g), dx);
    else
      convolve<true>(go, w, nullptr, swapSides(g), dx);
  }
  if (outs[1] >= 0) {
    float *dw = outf(c.out(outs[1]));
    if (transposed)
      convolutionWeightGradient(x, go, swapSides(g), dw);
    else
      convolutionWeightGradient(go, x, g, dw);
  }
  if (outs[2] >= 0)
    writeBiasGradient(go, g, outf(c.out(outs[2])));
}

struct Pool2d {
  int64_t N, C, H, W, OH, OW, kh, kw, sh, sw, ph, pw, dh, dw;
};

Pool2d poolGeometry(const Call &c, const Tensor &in, const Tensor &out) {
  Pool2d p;
  p.N = in.shape[0]; p.C = in.shape[1]; p.H = in.shape[2]; p.W = in.shape[3];
  p.OH = out.shape[2]; p.OW = out.shape[3];
  p.kh = c.listItem("kernel_size", 0, 1); p.kw = c.listItem("kernel_size", 1, 1);
  p.sh = c.listItem("stride", 0, p.kh); p.sw = c.listItem("stride", 1, p.kw);
  p.ph = c.listItem("padding", 0, 0); p.pw = c.listItem("padding", 1, 0);
  p.dh = c.listItem("dilation", 0, 1); p.dw = c.listItem("dilation", 1, 1);
  return p;
}

std::string checkPool(const Call &c, const Tensor &in, const Tensor &out) {
  if (in.rank != 4 || out.rank != 4 || in.shape[0] != out.shape[0] || in.shape[1] != out.shape[1])
    return "only [N, C, H, W] pooling is implemented";
  Pool2d p = poolGeometry(c, in, out);
  if (p.kh < 1 || p.kw < 1 || p.sh < 1 || p.sw < 1 || p.dh < 1 || p.dw < 1)
    return "kernel, stride and dilation must be positive";
  if (p.ph < 0 || p.pw < 0 || p.ph > p.kh / 2 || p.pw > p.kw / 2)
    return "padding must be at most half the window";
  // The window's span with dilation, in 128 bits: the sizes come from the plan.
  __int128 spanH = static_cast<__int128>(p.dh) * (p.kh - 1) + 1;
  __int128 spanW = static_cast<__int128>(p.dw) * (p.kw - 1) + 1;
  bool ceil = c.b("ceil_mode");
  int64_t oh =
      spanH > INT64_MAX ? -1 : pooledSize(p.H, static_cast<int64_t>(spanH), p.sh, p.ph, ceil);
  int64_t ow =
      spanW > INT64_MAX ? -1 : pooledSize(p.W, static_cast<int64_t>(spanW), p.sw, p.pw, ceil);
  if (oh < 0 || ow < 0)
    return "the window " + std::to_string(p.kh) + "x" + std::to_string(p.kw) +
           " does not fit the padded input " + shapeText(in);
  if (oh != p.OH || ow != p.OW)
    return "output " + shapeText(out) + " is not the pooling of " + shapeText(in);
  return "";
}

std::string prepareMaxPool(const Signature &sig) {
  if (sig.call.numOutputs != 2 || sig.outputs[0].dtype != coop_pb::FLOAT32 ||
      sig.outputs[1].dtype != coop_pb::INT64)
    return "outputs are not (float32, int64)";
  TRY(needTensor(sig, 0, "self"));
  return checkPool(sig.call, *sig.call.tensor(0), sig.outputs[0]);
}

void runMaxPool(const Call &c) {
  const Tensor &in = *c.tensor(0);
  Pool2d p = poolGeometry(c, in, c.out(0));
  float *o = outf(c.out(0));
  int64_t *ix = c.out(1).ptr<int64_t>();
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t ch = 0; ch < p.C; ++ch)
      for (int64_t oh = 0; oh < p.OH; ++oh)
        for (int64_t ow = 0; ow < p.OW; ++ow) {
          float best = -std::numeric_limits<float>::infinity();
          int64_t where = -1;
          for (int64_t r = 0; r < p.kh; ++r) {
            int64_t ih = oh * p.sh - p.ph + r * p.dh;
            if (ih < 0 || ih >= p.H)
              continue;
            for (int64_t s = 0; s < p.kw; ++s) {
              int64_t iw = ow * p.sw - p.pw + s * p.dw;
              if (iw < 0 || iw >= p.W)
                continue;
              float v = ld4(in, n, ch, ih, iw);
              if (where < 0 || v > best || std::isnan(v)) {
                best = v;
                where = ih * p.W + iw;
              }
            }
          }
          int64_t at = ((n * p.C + ch) * p.OH + oh) * p.OW + ow;
          o[at] = best;
          ix[at] = where;
        }
}

// max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride,
// padding, dilation, ceil_mode, indices)
std::string prepareMaxPoolBackward(const Signature &sig) {
  TRY(expect(sig, 1));
  TRY(needTensor(sig, 0, "grad_output"));
  TRY(needTensor(sig, 1, "self"));
  TRY(needTensor(sig, 2, "indices", coop_pb::INT64));
  if (!sameShape(*sig.call.tensor(1), sig.outputs[0]))
    return "output shape differs from self's";
  return checkPool(sig.call, *sig.call.tensor(1), *sig.call.tensor(0));
}

void runMaxPoolBackward(const Call &c) {
  const Tensor &go = *c.tensor(0), &in = *c.tensor(1), &idx = *c.tensor(2), &out = c.out(0);
  Pool2d p = poolGeometry(c, in, go);
  float *dx = outf(out);
  std::fill_n(dx, out.numel(), 0.f);
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t ch = 0; ch < p.C; ++ch)
      for (int64_t oh = 0; oh < p.OH; ++oh)
        for (int64_t ow = 0; ow < p.OW; ++ow) {
          int64_t where = idx.ptr<int64_t>()[n * idx.strides[0] + ch * idx.strides[1] +
                                             oh * idx.strides[2] + ow * idx.strides[3]];
          if (where >= 0 && where < p.H * p.W)
            dx[(n * p.C + ch) * p.H * p.W + where] += ld4(go, n, ch, oh, ow);
        }
}

//===----------------------------------------------------------------------===//
// Average pooling: avg_pool2d(self, kernel_size, stride, padding, ceil_mode,
// count_include_pad, divisor_override) and its backward (grad_output, self,
// same arguments). A window starts at o * stride - padding; its divisor is
// divisor_override, else its size clipped to the padded input
// (count_include_pad) or to the input.
//===----------------------------------------------------------------------===//

/// poolGeometry's window (avg_pool2d has no dilation: 1), the divisor and
/// whether it counts the padding.
struct AvgPool : Pool2d {
  int64_t divisor;
  bool includePad;

  /// The window of output (oh, ow), clipped to the input, and its divisor.
  int64_t window(int64_t oh, int64_t ow, int64_t &h0, int64_t &h1, int64_t &w0,
                 int64_t &w1) const {
    h0 = oh * sh - ph;
    w0 = ow * sw - pw;
    h1 = std::min(h0 + kh, H + ph);
    w1 = std::min(w0 + kw, W + pw);
    int64_t padded = (h1 - h0) * (w1 - w0);
    h0 = std::max<int64_t>(h0, 0);
    w0 = std::max<int64_t>(w0, 0);
    h1 = std::min(h1, H);
    w1 = std::min(w1, W);
    return divisor ? divisor : includePad ? padded : (h1 - h0) * (w1 - w0);
  }
};

AvgPool avgPool(const Call &c, const Tensor &in, const Tensor &out) {
  AvgPool p;
  static_cast<Pool2d &>(p) = poolGeometry(c, in, out);
  p.divisor = c.has("divisor_override") ? c.i("divisor_override") : 0;
  p.includePad = c.b("count_include_pad", true);
  return p;
}

std::string checkAvgPool(const Call &c, const Tensor &in, const Tensor &out) {
  if (in.rank != 4 || out.rank != 4 || in.shape[0] != out.shape[0] ||
      in.shape[1] != out.shape[1])
    return "only [N, C, H, W] pooling is implemented: " + shapeText(in) + " -> " + shapeText(out);
  AvgPool p = avgPool(c, in, out);
  if (p.kh < 1 || p.kw < 1 || p.sh < 1 || p.sw < 1 || p.ph < 0 || p.pw < 0 ||
      2 * p.ph > p.kh || 2 * p.pw > p.kw)
    return "kernel and stride must be positive, padding at most half the kernel";
  if (c.has("divisor_override") && p.divisor == 0)
    return "divisor_override is zero";
  if (p.H + 2 * p.ph < p.kh || p.W + 2 * p.pw < p.kw)
    return "the kernel is larger than the padded input " + shapeText(in);
  bool ceil = c.b("ceil_mode");
  if (pooledSize(p.H, p.kh, p.sh, p.ph, ceil) != p.OH ||
      pooledSize(p.W, p.kw, p.sw, p.pw, ceil) != p.OW)
    return "output " + shapeText(out) + " is not the pooling of " + shapeText(in);
  return "";
}

/// One float32 operand, `name`, and a float32 output that `check` accepts
/// for it (average pooling, upsampling).
std::string prepareFloatMap(const Signature &sig, const char *name,
                            std::string (*check)(const Call &, const Tensor &, const Tensor &)) {
  TRY(operands(sig, 1));
  TRY(dtypeIs(*sig.call.tensor(0), name, coop_pb::FLOAT32));
  TRY(dtypeIs(sig.outputs[0], "the output", coop_pb::FLOAT32));
  return check(sig.call, *sig.call.tensor(0), sig.outputs[0]);
}

std::string prepareAvgPool(const Signature &sig) {
  return prepareFloatMap(sig, "self", checkAvgPool);
}

float pooledAt(const Tensor &t, int64_t n, int64_t ch, int64_t h, int64_t w) {
  return t.ptr<float>()[n * t.strides[0] + ch * t.strides[1] + h * t.strides[2] +
                        w * t.strides[3]];
}

void runAvgPool(const Call &c) {
  const Tensor &in = *c.tensor(0);
  AvgPool p = avgPool(c, in, c.out(0));
  float *o = c.out(0).ptr<float>();
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t ch = 0; ch < p.C; ++ch)
      for (int64_t oh = 0; oh < p.OH; ++oh)
        for (int64_t ow = 0; ow < p.OW; ++ow) {
          int64_t h0, h1, w0, w1;
          int64_t divisor = p.window(oh, ow, h0, h1, w0, w1);
          double sum = 0;
          for (int64_t h = h0; h < h1; ++h)
            for (int64_t w = w0; w < w1; ++w)
              sum += pooledAt(in, n, ch, h, w);
          *o++ = static_cast<float>(sum / divisor);
        }
}

std::string prepareAvgPoolBackward(const Signature &sig) {
  TRY(operands(sig, 2));
  TRY(dtypeIs(*sig.call.tensor(0), "grad_output", coop_pb::FLOAT32));
  TRY(dtypeIs(sig.outputs[0], "the output", coop_pb::FLOAT32));
  if (!sameShape(*sig.call.tensor(1), sig.outputs[0]))
    return "output " + shapeText(sig.outputs[0]) + " differs from self " +
           shapeText(*sig.call.tensor(1));
  return checkAvgPool(sig.call, *sig.call.tensor(1), *sig.call.tensor(0));
}

int64_t floorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/// Each input element gathers grad_output / divisor over the windows that
/// hold it, in output order.
void runAvgPoolBackward(const Call &c) {
  const Tensor &go = *c.tensor(0);
  AvgPool p = avgPool(c, *c.tensor(1), go);
  float *dx = c.out(0).ptr<float>();
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t ch = 0; ch < p.C; ++ch)
      for (int64_t ih = 0; ih < p.H; ++ih) {
        int64_t ohLo = std::max<int64_t>(0, floorDiv(ih + p.ph - p.kh, p.sh) + 1);
        int64_t ohHi = std::min(p.OH - 1, (ih + p.ph) / p.sh);
        for (int64_t iw = 0; iw < p.W; ++iw) {
          int64_t owLo = std::max<int64_t>(0, floorDiv(iw + p.pw - p.kw, p.sw) + 1);
          int64_t owHi = std::min(p.OW - 1, (iw + p.pw) / p.sw);
          double sum = 0;
          for (int64_t oh = ohLo; oh <= ohHi; ++oh)
            for (int64_t ow = owLo; ow <= owHi; ++ow) {
              int64_t h0, h1, w0, w1;
              int64_t divisor = p.window(oh, ow, h0, h1, w0, w1);
              sum += double(pooledAt(go, n, ch, oh, ow)) / divisor;
            }
          *dx++ = static_cast<float>(sum);
        }
      }
}

//===----------------------------------------------------------------------===//
// _adaptive_avg_pool2d(self, output_size) and its backward (grad_output,
// self): output (oh, ow) averages rows floor(oh * H / OH) to
// ceil((oh + 1) * H / OH) and likewise columns, as ATen; [N, C, H, W] or
// [C, H, W]. The backward gathers each input's windows in output order.
//===----------------------------------------------------------------------===//

int64_t windowStart(int64_t o, int64_t in, int64_t out) { return o * in / out; }
int64_t windowEnd(int64_t o, int64_t in, int64_t out) { return ((o + 1) * in + out - 1) / out; }

std::string checkAdaptive(const Tensor &in, const Tensor &out) {
  if ((in.rank != 3 && in.rank != 4) || out.rank != in.rank ||
      !std::equal(in.shape, in.shape + in.rank - 2, out.shape))
    return "only [N, C, H, W] or [C, H, W] pooling is implemented: " + shapeText(in) + " -> " +
           shapeText(out);
  if (out.dim(-2) < 1 || out.dim(-1) < 1 || in.dim(-2) < 1 || in.dim(-1) < 1)
    return "empty pooling " + shapeText(in) + " -> " + shapeText(out);
  return "";
}

/// checkAdaptive, and output_size against the output.
std::string checkAdaptiveForward(const Call &c, const Tensor &in, const Tensor &out) {
  TRY(checkAdaptive(in, out));
  int64_t size[2];
  if (c.ints("output_size", size, 2) != 2 || size[0] != out.dim(-2) || size[1] != out.dim(-1))
    return "output_size is not the output's last two dimensions " + shapeText(out);
  return "";
}

std::string prepareAdaptiveAvgPool(const Signature &sig) {
  TRY(operands(sig, 1));
  const Tensor &in = *sig.call.tensor(0), &out = sig.outputs[0];
  TRY(dtypeIs(in, "self", coop_pb::FLOAT32));
  TRY(dtypeIs(out, "the output", coop_pb::FLOAT32));
  return checkAdaptiveForward(sig.call, in, out);
}

/// (plane, h, w) of a [.., H, W] tensor, planes flattened.
float planeAt(const Tensor &t, int64_t plane, int64_t h, int64_t w) {
  int64_t off = h * t.strides[t.rank - 2] + w * t.strides[t.rank - 1];
  if (t.rank == 4)
    off += (plane / t.shape[1]) * t.strides[0] + (plane % t.shape[1]) * t.strides[1];
  else
    off += plane * t.strides[0];
  return t.ptr<float>()[off];
}

void runAdaptiveAvgPool(const Call &c) {
  const Tensor &in = *c.tensor(0), &out = c.out(0);
  int64_t H = in.dim(-2), W = in.dim(-1), OH = out.dim(-2), OW = out.dim(-1);
  int64_t planes = out.numel() / (OH * OW);
  float *o = out.ptr<float>();
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        int64_t h0 = windowStart(oh, H, OH), h1 = windowEnd(oh, H, OH);
        int64_t w0 = windowStart(ow, W, OW), w1 = windowEnd(ow, W, OW);
        double sum = 0;
        for (int64_t h = h0; h < h1; ++h)
          for (int64_t w = w0; w < w1; ++w)
            sum += planeAt(in, p, h, w);
        *o++ = static_cast<float>(sum / ((h1 - h0) * (w1 - w0)));
      }
}

std::string prepareAdaptiveAvgPoolBackward(const Signature &sig) {
  TRY(operands(sig, 2));
  const Tensor &go = *sig.call.tensor(0), &self = *sig.call.tensor(1);
  TRY(dtypeIs(go, "grad_output", coop_pb::FLOAT32));
  TRY(dtypeIs(sig.outputs[0], "the output", coop_pb::FLOAT32));
  if (!sameShape(self, sig.outputs[0]))
    return "output " + shapeText(sig.outputs[0]) + " differs from self " + shapeText(self);
  return checkAdaptive(self, go);
}

void runAdaptiveAvgPoolBackward(const Call &c) {
  const Tensor &go = *c.tensor(0), &out = c.out(0);
  int64_t H = out.dim(-2), W = out.dim(-1), OH = go.dim(-2), OW = go.dim(-1);
  int64_t planes = out.numel() / (H * W);
  float *dx = out.ptr<float>();
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t ih = 0; ih < H; ++ih) {
      // The windows holding row ih: floor(ih * OH / H) .. ceil((ih + 1) * OH / H).
      int64_t ohLo = windowStart(ih, OH, H), ohHi = std::min(windowEnd(ih, OH, H), OH);
      for (int64_t iw = 0; iw < W; ++iw) {
        int64_t owLo = windowStart(iw, OW, W), owHi = std::min(windowEnd(iw, OW, W), OW);
        double sum = 0;
        for (int64_t oh = ohLo; oh < ohHi; ++oh)
          for (int64_t ow = owLo; ow < owHi; ++ow) {
            int64_t area = (windowEnd(oh, H, OH) - windowStart(oh, H, OH)) *
                           (windowEnd(ow, W, OW) - windowStart(ow, W, OW));
            sum += double(planeAt(go, p, oh, ow)) / area;
          }
        *dx++ = static_cast<float>(sum);
      }
    }
}

//===----------------------------------------------------------------------===//
// upsample_nearest2d.vec(input, output_size, scale_factors) and its
// backward (grad_output, output_size, input_size, scale_factors): output
// row o reads input row min(floor(o * scale), in - 1), scale 1 / the
// factor when scale_factors is given, else in / out, in float as ATen
// (o when the sizes match, o / 2 when the output is twice the input).
//===----------------------------------------------------------------------===//

/// Scale factor #d of `scale_factors`, or 0 when absent.
double scaleFactor(const Call &c, int d) {
  const coop_pb::Value *list = c.arg("scale_factors");
  if (!list || list->kind_case() != coop_pb::Value::kList || list->list().items_size() <= d)
    return 0;
  const coop_pb::Value &item = list->list().items(d);
  return item.kind_case() == coop_pb::Value::kFloatValue ? item.float_value()
         : item.kind_case() == coop_pb::Value::kIntValue ? double(item.int_value())
                                                        : 0;
}

/// Input positions per output position, in float as ATen: 1 / the scale
/// factor when given, else in / out.
float sourceScale(int64_t in, int64_t out, double factor) {
  return factor > 0 ? static_cast<float>(1.0 / factor)
                    : static_cast<float>(in) / static_cast<float>(out);
}

int64_t nearestSource(int64_t o, int64_t in, int64_t out, double factor) {
  if (out == in)
    return o;
  if (out == 2 * in)
    return o >> 1;
  return std::min(static_cast<int64_t>(std::floor(o * sourceScale(in, out, factor))), in - 1);
}

/// Checks input [N, C, H, W] -> output against output_size or the scale
/// factors (floor(in * factor)).
std::string checkUpsample(const Call &c, const Tensor &in, const Tensor &out) {
  if (in.rank != 4 || out.rank != 4 || in.shape[0] != out.shape[0] ||
      in.shape[1] != out.shape[1])
    return "only [N, C, H, W] upsampling is implemented: " + shapeText(in) + " -> " + shapeText(out);
  int64_t size[2];
  int n = c.ints("output_size", size, 2);
  if (n > 0) {
    if (n != 2 || size[0] != out.shape[2] || size[1] != out.shape[3])
      return "output_size is not the output's last two dimensions " + shapeText(out);
  } else {
    for (int d = 0; d < 2; ++d) {
      double factor = scaleFactor(c, d);
      if (factor <= 0)
        return "has neither output_size nor two positive scale_factors";
      if (static_cast<int64_t>(std::floor(in.shape[2 + d] * factor)) != out.shape[2 + d])
        return "output " + shapeText(out) + " is not " + shapeText(in) + " scaled by the scale_factors";
    }
  }
  if (in.shape[2] < 1 || in.shape[3] < 1)
    return "empty input " + shapeText(in);
  return "";
}

std::string prepareUpsample(const Signature &sig) {
  return prepareFloatMap(sig, "input", checkUpsample);
}

void runUpsampleNearest(const Call &c) {
  const Tensor &in = *c.tensor(0), &out = c.out(0);
  int64_t H = in.shape[2], W = in.shape[3], OH = out.shape[2], OW = out.shape[3];
  double fh = scaleFactor(c, 0), fw = scaleFactor(c, 1);
  float *o = out.ptr<float>();
  for (int64_t p = 0, planes = in.shape[0] * in.shape[1]; p < planes; ++p)
    for (int64_t oh = 0; oh < OH; ++oh) {
      int64_t ih = nearestSource(oh, H, OH, fh);
      for (int64_t ow = 0; ow < OW; ++ow)
        *o++ = planeAt(in, p, ih, nearestSource(ow, W, OW, fw));
    }
}

/// The backward of an upsampling: its output is the forward's input.
std::string prepareUpsampleBackward(const Signature &sig) {
  TRY(operands(sig, 1));
  const Tensor &go = *sig.call.tensor(0), &out = sig.outputs[0];
  TRY(dtypeIs(go, "grad_output", coop_pb::FLOAT32));
  TRY(dtypeIs(out, "the output", coop_pb::FLOAT32));
  int64_t size[kMaxRank];
  int n = sig.call.ints("input_size", size, kMaxRank);
  if (n != out.rank || !std::equal(size, size + n, out.shape))
    return "input_size is not the output's shape " + shapeText(out);
  return checkUpsample(sig.call, out, go);
}

/// Each input element gathers the gradient of the outputs that read it (a
/// contiguous run, since the source row grows with the output row), in
/// output order.
void runUpsampleNearestBackward(const Call &c) {
  const Tensor &go = *c.tensor(0), &out = c.out(0);
  int64_t H = out.shape[2], W = out.shape[3], OH = go.shape[2], OW = go.shape[3];
  double fh = scaleFactor(c, 0), fw = scaleFactor(c, 1);
  float *dx = out.ptr<float>();
  for (int64_t p = 0, planes = out.shape[0] * out.shape[1]; p < planes; ++p)
    for (int64_t ih = 0, oh1 = 0; ih < H; ++ih) {
      int64_t oh0 = oh1;
      while (oh1 < OH && nearestSource(oh1, H, OH, fh) == ih)
        ++oh1;
      for (int64_t iw = 0, ow1 = 0; iw < W; ++iw) {
        int64_t ow0 = ow1;
        while (ow1 < OW && nearestSource(ow1, W, OW, fw) == iw)
          ++ow1;
        double sum = 0;
        for (int64_t oh = oh0; oh < oh1; ++oh)
          for (int64_t ow = ow0; ow < ow1; ++ow)
            sum += planeAt(go, p, oh, ow);
        *dx++ = static_cast<float>(sum);
      }
    }
}

//===----------------------------------------------------------------------===//
// upsample_bilinear2d.vec(input, output_size, align_corners, scale_factors)
// and its backward (grad_output, output_size, input_size, align_corners,
// scale_factors), checked like nearest upsampling. Output row o blends
// input rows i0 and i1 = min(i0 + 1, in - 1) by 1 - lambda and lambda, from
// ATen's source position in float: o * (in - 1) / (out - 1) with
// align_corners, else max(0, (o + 0.5) * sourceScale - 0.5); equal sizes
// copy. The backward gathers, per input element, the outputs that read
// it, in output order.
//===----------------------------------------------------------------------===//

struct LinearTap {
  int64_t i0, i1;
  float lambda0, lambda1; // ATen's weights, in float
  /// The weight with which this output reads input position i.
  double weight(int64_t i) const {
    return (i0 == i ? lambda0 : 0.0) + (i1 == i ? lambda1 : 0.0);
  }
};

/// One axis of a bilinear resampling from `in` positions to `out`.
struct LinearAxis {
  int64_t in, out;
  bool alignCorners;
  double factor; // the scale factor, or 0 when output_size gives the size

  LinearTap tap(int64_t o) const {
    if (in == out)
      return {o, o, 1.f, 0.f};
    float source;
    if (alignCorners)
      source = out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) * o : 0.f;
    else // in double, then float, as ATen
      source = std::max(static_cast<float>(sourceScale(in, out, factor) * (o + 0.5) - 0.5), 0.f);
    int64_t i0 = static_cast<int64_t>(source);
    float lambda1 = std::min(std::max(source - i0, 0.f), 1.f);
    return {i0, i0 < in - 1 ? i0 + 1 : i0, 1.f - lambda1, lambda1};
  }

  /// Moves [lo, hi) to the outputs that read input position i: a run, as
  /// both taps grow with the output position; lo carries over from i - 1.
  void readers(int64_t i, int64_t &lo, int64_t &hi) const {
    while (lo < out && tap(lo).i1 < i)
      ++lo;
    hi = lo;
    while (hi < out && tap(hi).i0 <= i)
      ++hi;
  }
};

/// The rows and columns of a bilinear resampling of `in` into `out`.
void linearAxes(const Call &c, const Tensor &in, const Tensor &out, LinearAxis &rows,
                LinearAxis &cols) {
  bool align = c.b("align_corners");
  rows = {in.shape[2], out.shape[2], align, scaleFactor(c, 0)};
  cols = {in.shape[3], out.shape[3], align, scaleFactor(c, 1)};
}

/// align_corners, then `Check`.
template <PrepareFn Check> std::string withAlignCorners(const Signature &sig) {
  if (!sig.call.has("align_corners"))
    return "has no 'align_corners'";
  return Check(sig);
}

void runUpsampleBilinear(const Call &c) {
  const Tensor &in = *c.tensor(0), &out = c.out(0);
  LinearAxis rows, cols;
  linearAxes(c, in, out, rows, cols);
  float *o = out.ptr<float>();
  for (int64_t p = 0, planes = in.shape[0] * in.shape[1]; p < planes; ++p)
    for (int64_t oh = 0; oh < rows.out; ++oh) {
      LinearTap row = rows.tap(oh);
      for (int64_t ow = 0; ow < cols.out; ++ow) {
        LinearTap col = cols.tap(ow);
        auto blendRow = [&](int64_t h) {
          return col.lambda0 * double(planeAt(in, p, h, col.i0)) +
                 col.lambda1 * double(planeAt(in, p, h, col.i1));
        };
        *o++ = static_cast<float>(row.lambda0 * blendRow(row.i0) + row.lambda1 * blendRow(row.i1));
      }
    }
}

void runUpsampleBilinearBackward(const Call &c) {
  const Tensor &go = *c.tensor(0), &out = c.out(0);
  LinearAxis rows, cols;
  linearAxes(c, out, go, rows, cols);
  float *dx = out.ptr<float>();
  for (int64_t p = 0, planes = out.shape[0] * out.shape[1]; p < planes; ++p)
    for (int64_t ih = 0, ohLo = 0, ohHi; ih < rows.in; ++ih) {
      rows.readers(ih, ohLo, ohHi);
      for (int64_t iw = 0, owLo = 0, owHi; iw < cols.in; ++iw) {
        cols.readers(iw, owLo, owHi);
        double sum = 0;
        for (int64_t oh = ohLo; oh < ohHi; ++oh) {
          double rowWeight = rows.tap(oh).weight(ih);
          for (int64_t ow = owLo; ow < owHi; ++ow)
            sum += rowWeight * cols.tap(ow).weight(iw) * planeAt(go, p, oh, ow);
        }
        *dx++ = static_cast<float>(sum);
      }
    }
}

//===----------------------------------------------------------------------===//
// adaptive_max_pool2d(self, output_size) -> values, indices (int64, h * W +
// w in the plane, as max_pool2d_with_indices) over the windows of
// _adaptive_avg_pool2d; [N, C, H, W] or [C, H, W]. As ATen, the maximum
// starts at -inf at the window's first index; a larger element or a NaN
// takes over. The backward
// (grad_output, self, indices) adds each gradient, in float and output
// order, to the element its index names.
//===----------------------------------------------------------------------===//

std::string prepareAdaptiveMaxPool(const Signature &sig) {
  if (sig.call.numOutputs != 2)
    return "has " + std::to_string(sig.call.numOutputs) + " outputs, expected 2 (values, indices)";
  const Tensor *in = sig.call.tensor(0);
  if (!in)
    return "has no tensor argument 'self'";
  const Tensor &values = sig.outputs[0], &indices = sig.outputs[1];
  TRY(dtypeIs(*in, "self", coop_pb::FLOAT32));
  TRY(dtypeIs(values, "the output", coop_pb::FLOAT32));
  TRY(dtypeIs(indices, "the indices output", coop_pb::INT64));
  if (!sameShape(values, indices))
    return "indices " + shapeText(indices) + " and output " + shapeText(values) + " differ";
  return checkAdaptiveForward(sig.call, *in, values);
}

void runAdaptiveMaxPool(const Call &c) {
  const Tensor &in = *c.tensor(0), &out = c.out(0);
  int64_t H = in.dim(-2), W = in.dim(-1), OH = out.dim(-2), OW = out.dim(-1);
  int64_t planes = out.numel() / (OH * OW);
  float *o = out.ptr<float>();
  int64_t *where = c.out(1).ptr<int64_t>();
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        int64_t h0 = windowStart(oh, H, OH), h1 = windowEnd(oh, H, OH);
        int64_t w0 = windowStart(ow, W, OW), w1 = windowEnd(ow, W, OW);
        float best = -std::numeric_limits<float>::infinity();
        int64_t at = h0 * W + w0;
        for (int64_t h = h0; h < h1; ++h)
          for (int64_t w = w0; w < w1; ++w) {
            float v = planeAt(in, p, h, w);
            if (v > best || std::isnan(v)) {
              best = v;
              at = h * W + w;
            }
          }
        *o++ = best;
        *where++ = at;
      }
}

std::string prepareAdaptiveMaxPoolBackward(const Signature &sig) {
  TRY(operands(sig, 3));
  const Tensor &go = *sig.call.tensor(0), &self = *sig.call.tensor(1);
  const Tensor &indices = *sig.call.tensor(2);
  TRY(dtypeIs(go, "grad_output", coop_pb::FLOAT32));
  TRY(dtypeIs(indices, "indices", coop_pb::INT64));
  TRY(dtypeIs(sig.outputs[0], "the output", coop_pb::FLOAT32));
  if (!sameShape(self, sig.outputs[0]))
    return "output " + shapeText(sig.outputs[0]) + " differs from self " + shapeText(self);
  if (!sameShape(indices, go))
    return "indices " + shapeText(indices) + " and grad_output " + shapeText(go) + " differ";
  return checkAdaptive(self, go);
}

void runAdaptiveMaxPoolBackward(const Call &c) {
  const Tensor &go = *c.tensor(0), &indices = *c.tensor(2), &out = c.out(0);
  int64_t plane = out.dim(-2) * out.dim(-1), pooled = go.dim(-2) * go.dim(-1);
  float *dx = out.ptr<float>();
  std::fill_n(dx, out.numel(), 0.f);
  for (int64_t k = 0, n = go.numel(); k < n; ++k) {
    int64_t at = *reinterpret_cast<const int64_t *>(indices.at(k));
    if (at >= 0 && at < plane) // a forward's index always is
      dx[k / pooled * plane + at] += floatAt(go, k);
  }
}

} // namespace

// A pooling backward takes its forward's window arguments.
constexpr const char kMaxPoolArgs[] =
    "kernel_size:ints[1,) stride:ints[1,)? padding:ints[0,)? "
    "dilation:ints[1,)? ceil_mode:bool?";
constexpr const char kAvgPoolArgs[] =
    "kernel_size:ints[1,) stride:ints[1,)? padding:ints[0,)? ceil_mode:bool? "
    "count_include_pad:bool? divisor_override:int[1,)?";

std::vector<KernelDef> convCpuKernels() {
  std::vector<KernelDef> k;
  KernelAdder add{k};
  // Convolution (also transposed), pooling, embedding.
  add("aten.convolution", {"input", "weight", "bias?"},
      "stride:ints[1,) padding:ints[0,) dilation:ints[1,) transposed:bool "
      "output_padding:ints[0,) groups:int[1,)",
      prepareConvolution, runConvolution);
  add("aten.convolution_backward", {"grad_output", "input", "weight"},
      "stride:ints[1,) padding:ints[0,) dilation:ints[1,) transposed:bool "
      "output_padding:ints[0,) groups:int[1,) bias_sizes:any? output_mask:any?",
      prepareConvolutionBackward, runConvolutionBackward);
  add("aten.max_pool2d_with_indices", {"self"}, kMaxPoolArgs, prepareMaxPool,
      runMaxPool);
  add("aten.max_pool2d_with_indices_backward", {"grad_output", "self", "indices"},
      kMaxPoolArgs, prepareMaxPoolBackward, runMaxPoolBackward);
  add("aten.avg_pool2d", {"self"}, kAvgPoolArgs, prepareAvgPool, runAvgPool);
  add("aten.avg_pool2d_backward", {"grad_output", "self"}, kAvgPoolArgs,
      prepareAvgPoolBackward, runAvgPoolBackward);
  add("aten._adaptive_avg_pool2d", {"self"},
      "output_size:ints[0,)", prepareAdaptiveAvgPool, runAdaptiveAvgPool);
  add("aten._adaptive_avg_pool2d_backward", {"grad_output", "self"}, "",
      prepareAdaptiveAvgPoolBackward, runAdaptiveAvgPoolBackward);
  add("aten.upsample_nearest2d.vec", {"input"},
      "output_size:ints[0,)? scale_factors:any?", prepareUpsample, runUpsampleNearest);
  add("aten.upsample_nearest2d_backward.vec", {"grad_output"},
      "output_size:ints[0,)? input_size:ints[0,) scale_factors:any?", prepareUpsampleBackward,
      runUpsampleNearestBackward);
  add("aten.upsample_bilinear2d.vec", {"input"},
      "align_corners:bool output_size:ints[0,)? scale_factors:any?",
      withAlignCorners<prepareUpsample>,
      runUpsampleBilinear);
  add("aten.upsample_bilinear2d_backward.vec", {"grad_output"},
      "align_corners:bool input_size:ints[0,) output_size:ints[0,)? scale_factors:any?",
      withAlignCorners<prepareUpsampleBackward>, runUpsampleBilinearBackward);
  add("aten.adaptive_max_pool2d", {"self"},
      "output_size:ints[0,)", prepareAdaptiveMaxPool, runAdaptiveMaxPool);
  add("aten.adaptive_max_pool2d_backward", {"grad_output", "self", "indices"}, "",
      prepareAdaptiveMaxPoolBackward, runAdaptiveMaxPoolBackward);
  return k;
}

} // namespace coop::rt
