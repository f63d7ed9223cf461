//===- CudaOpsConv.cpp - Handlers: convolution and pooling ===//
//
// Launches -> kernel parameters for the 2-D convolution and pooling
// kernels of CpuKernelsConv.cpp, with the same
// argument defaults. A 1-D convolution runs as 2-D, as on the CPU
// (convolutionAs2d, convolutionItem).
//
//===----------------------------------------------------------------------===//

#include "cuda/CudaBackendImpl.h"
#include "cuda/CudaKernelsConv.h"

namespace coop::rt::cuda {
namespace {

/// The taps of `weight`, rank 4 (convolutionAs2d).
ConvTaps tapsOf(const Call &c, const Tensor &weight) {
  ConvTaps t;
  t.R = weight.shape[2];
  t.S = weight.shape[3];
  t.sh = convolutionItem(c, "stride", 0, 1);
  t.sw = convolutionItem(c, "stride", 1, 1);
  t.ph = convolutionItem(c, "padding", 0, 0);
  t.pw = convolutionItem(c, "padding", 1, 0);
  t.dh = convolutionItem(c, "dilation", 0, 1);
  t.dw = convolutionItem(c, "dilation", 1, 1);
  return t;
}

/// Gathers `out` [N, C', H', W'] from `src` [N, C, H, W] through `weight`
/// (all rank 4: convolutionAs2d); see ConvGather.
ConvGather convGather(const Call &c, const Tensor &src, const Tensor &weight, const Tensor &out,
                      bool transposed) {
  int64_t groups = c.i("groups", 1);
  ConvGather p;
  p.taps = tapsOf(c, weight);
  p.transposed = transposed;
  p.src = stridedOf(src);
  p.weight = stridedOf(weight);
  p.N = src.shape[0];
  p.srcH = src.shape[2];
  p.srcW = src.shape[3];
  p.srcPerGroup = src.shape[1] / groups;
  p.outChannels = out.shape[1];
  p.outH = out.shape[2];
  p.outW = out.shape[3];
  p.outPerGroup = out.shape[1] / groups;
  p.out = out.data;
  return p;
}

// convolution(input, weight, bias?, stride, padding, dilation, transposed,
// output_padding, groups): output_padding only shapes the output.
void convolution(CudaBackend &b, const Call &c) {
  ConvGather p = convGather(c, convolutionAs2d(*c.tensor(0)), convolutionAs2d(*c.tensor(1)),
                            convolutionAs2d(c.out(0)), c.b("transposed"));
  if (const Tensor *bias = c.tensor(2)) {
    p.hasBias = true;
    p.bias = stridedOf(*bias);
    p.biasShape = shapeOf(*bias);
  }
  b.check(launchConvGather(p, b.stream), "convolution kernel");
}

// convolution_backward(grad_output, input, weight, bias_sizes, stride,
// padding, dilation, transposed, output_padding, groups, output_mask)
void convolutionBackward(CudaBackend &b, const Call &c) {
  const Tensor go = convolutionAs2d(*c.tensor(0)), x = convolutionAs2d(*c.tensor(1)),
               w = convolutionAs2d(*c.tensor(2));
  bool transposed = c.b("transposed");
  int outs[3];
  maskedOutputs(c, outs);
  // grad_input: grad_output through the transposed taps of the forward.
  if (outs[0] >= 0 &&
      !b.check(launchConvGather(convGather(c, go, w, convolutionAs2d(c.out(outs[0])),
                                           !transposed),
                                b.stream),
               "convolution_backward grad_input kernel"))
    return;
  if (outs[1] >= 0) {
    // The weight's first dimension indexes grad_output's channels for a
    // convolution, the input's for a transposed one.
    const Tensor &a = transposed ? x : go, &other = transposed ? go : x;
    int64_t groups = c.i("groups", 1);
    ConvWeightGrad p;
    p.taps = tapsOf(c, w);
    p.a = stridedOf(a);
    p.b = stridedOf(other);
    p.N = go.shape[0];
    p.aChannels = a.shape[1];
    p.aH = a.shape[2];
    p.aW = a.shape[3];
    p.aPerGroup = a.shape[1] / groups;
    p.bH = other.shape[2];
    p.bW = other.shape[3];
    p.bPerGroup = other.shape[1] / groups;
    p.out = c.out(outs[1]).data;
    if (!b.check(launchConvWeightGrad(p, b.stream), "convolution_backward grad_weight kernel"))
      return;
  }
  if (outs[2] >= 0)
    b.check(launchConvBiasGrad(stridedOf(go), shapeOf(go), c.out(outs[2]).data, b.stream),
            "convolution_backward grad_bias kernel");
}

/// The pooling of `in` [N, C, H, W] into `pooled` [N, C, OH, OW], reading
/// `read`; average pooling's divisor arguments included (max pooling has
/// none, so they keep their defaults).
Pool2d poolOf(const Call &c, const Tensor &in, const Tensor &pooled, const Tensor &read) {
  Pool2d p;
  p.N = in.shape[0];
  p.C = in.shape[1];
  p.H = in.shape[2];
  p.W = in.shape[3];
  p.OH = pooled.shape[2];
  p.OW = pooled.shape[3];
  p.kh = c.listItem("kernel_size", 0, 1);
  p.kw = c.listItem("kernel_size", 1, 1);
  p.sh = c.listItem("stride", 0, p.kh);
  p.sw = c.listItem("stride", 1, p.kw);
  p.ph = c.listItem("padding", 0, 0);
  p.pw = c.listItem("padding", 1, 0);
  p.dh = c.listItem("dilation", 0, 1);
  p.dw = c.listItem("dilation", 1, 1);
  p.divisor = c.has("divisor_override") ? c.i("divisor_override") : 0;
  p.includePad = c.b("count_include_pad", true);
  p.in = stridedOf(read);
  return p;
}

// max_pool2d_with_indices(self, kernel_size, stride, padding, dilation,
// ceil_mode): ceil_mode only shapes the output.
void maxPool(CudaBackend &b, const Call &c) {
  const Tensor &in = *c.tensor(0);
  Pool2d p = poolOf(c, in, c.out(0), in);
  p.out = c.out(0).data;
  p.outIndices = c.out(1).data;
  b.check(launchMaxPool(p, b.stream), "max_pool2d_with_indices kernel");
}

// max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride,
// padding, dilation, ceil_mode, indices)
void maxPoolBackward(CudaBackend &b, const Call &c) {
  const Tensor &go = *c.tensor(0);
  Pool2d p = poolOf(c, *c.tensor(1), go, go);
  p.indices = stridedOf(*c.tensor(2));
  p.out = c.out(0).data;
  b.check(launchMaxPoolBackward(p, b.stream), "max_pool2d_with_indices_backward kernel");
}

// avg_pool2d(self, kernel_size, stride, padding, ceil_mode,
// count_include_pad, divisor_override)
void avgPool(CudaBackend &b, const Call &c) {
  const Tensor &in = *c.tensor(0);
  Pool2d p = poolOf(c, in, c.out(0), in);
  p.out = c.out(0).data;
  b.check(launchAvgPool(p, b.stream), "avg_pool2d kernel");
}

// avg_pool2d_backward(grad_output, self, the forward's arguments)
void avgPoolBackward(CudaBackend &b, const Call &c) {
  const Tensor &go = *c.tensor(0);
  Pool2d p = poolOf(c, *c.tensor(1), go, go);
  p.out = c.out(0).data;
  b.check(launchAvgPoolBackward(p, b.stream), "avg_pool2d_backward kernel");
}

/// Adaptive pooling of `in` into `pooled`, both [N, C, H, W] or [C, H, W]
/// (seen as N = 1), reading `read`.
Pool2d adaptivePoolOf(const Tensor &in, const Tensor &pooled, const Tensor &read) {
  Pool2d p;
  p.N = in.rank == 4 ? in.shape[0] : 1;
  p.C = in.dim(-3);
  p.H = in.dim(-2);
  p.W = in.dim(-1);
  p.OH = pooled.dim(-2);
  p.OW = pooled.dim(-1);
  p.in.data = read.data;
  p.in.dtype = read.dtype;
  int lead = 4 - read.rank; // a missing batch dimension strides 0
  for (int d = 0; d < 4; ++d)
    p.in.strides[d] = d < lead ? 0 : read.strides[d - lead];
  return p;
}

// _adaptive_avg_pool2d(self, output_size)
void adaptiveAvgPool(CudaBackend &b, const Call &c) {
  const Tensor &in = *c.tensor(0);
  Pool2d p = adaptivePoolOf(in, c.out(0), in);
  p.out = c.out(0).data;
  b.check(launchAdaptiveAvgPool(p, b.stream), "_adaptive_avg_pool2d kernel");
}

// _adaptive_avg_pool2d_backward(grad_output, self)
void adaptiveAvgPoolBackward(CudaBackend &b, const Call &c) {
  const Tensor &go = *c.tensor(0);
  Pool2d p = adaptivePoolOf(c.out(0), go, go);
  p.out = c.out(0).data;
  b.check(launchAdaptiveAvgPoolBackward(p, b.stream), "_adaptive_avg_pool2d_backward kernel");
}

} // namespace

void addConvHandlers(HandlerTable &h) {
  h["aten.convolution"] = convolution;
  h["aten.convolution_backward"] = convolutionBackward;
  h["aten.max_pool2d_with_indices"] = maxPool;
  h["aten.max_pool2d_with_indices_backward"] = maxPoolBackward;
  h["aten.avg_pool2d"] = avgPool;
  h["aten.avg_pool2d_backward"] = avgPoolBackward;
  h["aten._adaptive_avg_pool2d"] = adaptiveAvgPool;
  h["aten._adaptive_avg_pool2d_backward"] = adaptiveAvgPoolBackward;
}

} // namespace coop::rt::cuda
