//===- CpuKernelsLoss.cpp - CPU kernels: softmax and losses ---------------===//
//
// softmax and log_softmax with their backwards, nll_loss (per row and per
// pixel, nll_loss2d) and mse_loss. CUDA: CudaKernelsLoss.cu.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"

#include <cmath>
#include <limits>

namespace coop::rt {
namespace {

using namespace cpu;

//===----------------------------------------------------------------------===//
// Softmax and losses
//===----------------------------------------------------------------------===//

std::string prepareSoftmax(const Signature &sig) {
  TRY(expect(sig, 1));
  for (int p = 0; p < sig.call.numParams; ++p) {
    TRY(needTensor(sig, p, "input"));
    if (!sameShape(*sig.call.tensor(p), sig.outputs[0]))
      return "operand and output shapes differ";
  }
  int64_t dim = sig.call.i("dim", 0);
  int rank = std::max(sig.outputs[0].rank, 1);
  if (dim < -rank || dim >= rank)
    return "dimension " + std::to_string(dim) + " is out of range";
  return "";
}

/// Calls f(offsets..., lineLength, strides...) for each line along `dim`.
template <typename F> void forEachLine(const Tensor &like, int64_t dimArg, const Tensor *ts,
                                       int count, F f) {
  int dim = normDim(dimArg, like.rank);
  Tensor outer = like;
  int64_t len = like.rank ? like.shape[dim] : 1;
  if (like.rank)
    outer.shape[dim] = 1;
  Walk w(outer);
  for (int t = 0; t < count; ++t)
    w.add(ts[t]);
  int64_t strides[4];
  for (int t = 0; t < count; ++t)
    strides[t] = like.rank ? ts[t].strides[dim] : 0;
  for (int64_t i = 0, n = outer.numel(); i < n; ++i, w.next())
    f(w.off, len, strides);
}

void softmax(const Call &c, bool log) {
  Tensor ts[2] = {*c.tensor(0), c.out(0)};
  forEachLine(ts[1], c.i("dim"), ts, 2, [&](const int64_t *off, int64_t len, const int64_t *st) {
    const float *x = ts[0].ptr<float>() + off[0];
    float *y = ts[1].ptr<float>() + off[1];
    float max = -std::numeric_limits<float>::infinity();
    for (int64_t k = 0; k < len; ++k)
      max = std::max(max, x[k * st[0]]);
    double sum = 0;
    for (int64_t k = 0; k < len; ++k)
      sum += std::exp(double(x[k * st[0]]) - max);
    double logSum = std::log(sum);
    for (int64_t k = 0; k < len; ++k) {
      double shifted = double(x[k * st[0]]) - max;
      y[k * st[1]] = static_cast<float>(log ? shifted - logSum : std::exp(shifted) / sum);
    }
  });
}
void runSoftmax(const Call &c) { softmax(c, false); }
void runLogSoftmax(const Call &c) { softmax(c, true); }

// grad_output (g), output (y): log: g - exp(y) * sum(g); plain: y * (g - sum(g * y)).
void softmaxBackward(const Call &c, bool log) {
  Tensor ts[3] = {*c.tensor(0), *c.tensor(1), c.out(0)};
  forEachLine(ts[2], c.i("dim"), ts, 3, [&](const int64_t *off, int64_t len, const int64_t *st) {
    const float *g = ts[0].ptr<float>() + off[0], *y = ts[1].ptr<float>() + off[1];
    float *dx = ts[2].ptr<float>() + off[2];
    double sum = 0;
    for (int64_t k = 0; k < len; ++k)
      sum += log ? double(g[k * st[0]]) : double(g[k * st[0]]) * y[k * st[1]];
    for (int64_t k = 0; k < len; ++k) {
      double gy = g[k * st[0]], yy = y[k * st[1]];
      dx[k * st[2]] = static_cast<float>(log ? gy - std::exp(yy) * sum : yy * (gy - sum));
    }
  });
}
void runSoftmaxBackward(const Call &c) { softmaxBackward(c, false); }
void runLogSoftmaxBackward(const Call &c) { softmaxBackward(c, true); }

//===----------------------------------------------------------------------===//
// nll_loss_forward(self [N, C] or [C], target, weight?, reduction,
// ignore_index), nll_loss2d_forward, per pixel (self [N, C, H, W], target
// [N, H, W]), and their backwards (grad_output, the same, total_weight).
// One loop serves both: a row is a 1x1 image.
//===----------------------------------------------------------------------===//

template <bool PerPixel>
std::string prepareNll(const Signature &sig, int selfParam, int targetParam, int outputs) {
  TRY(expect(sig, outputs));
  TRY(needTensor(sig, selfParam, "self"));
  TRY(needTensor(sig, targetParam, "target", coop_pb::INT64));
  const Tensor &self = *sig.call.tensor(selfParam), &target = *sig.call.tensor(targetParam);
  if (PerPixel && (self.rank != 4 || target.rank != 3 || target.shape[0] != self.shape[0] ||
                   target.shape[1] != self.shape[2] || target.shape[2] != self.shape[3]))
    return "self " + shapeText(self) + " and target " + shapeText(target) +
           " are not [N, C, H, W] and [N, H, W]";
  if (!PerPixel && (self.rank < 1 || self.rank > 2 ||
                    target.numel() != (self.rank == 2 ? self.shape[0] : 1)))
    return "self " + shapeText(self) + " and target " + shapeText(target) + " do not match";
  int64_t reduction = sig.call.i("reduction", 1);
  if (reduction != 1 && reduction != 2)
    return "reduction " + std::to_string(reduction) + " is not implemented (mean or sum)";
  return "";
}

template <bool PerPixel> std::string prepareNllForward(const Signature &sig) {
  TRY(prepareNll<PerPixel>(sig, 0, 1, 2));
  if (sig.call.tensor(2))
    return "class weights are not implemented";
  return "";
}
template <bool PerPixel> std::string prepareNllBackward(const Signature &sig) {
  TRY(prepareNll<PerPixel>(sig, 1, 2, 1));
  if (sig.call.tensor(3))
    return "class weights are not implemented";
  TRY(needTensor(sig, 0, "grad_output"));
  TRY(needTensor(sig, 4, "total_weight"));
  return "";
}

/// Calls visit(selfAt, gradientAt) for each sample (row, or pixel of
/// nll_loss2d), in order, whose target class is neither ignore_index nor
/// out of range: the offset of self's element at the target class, and
/// that element's index in a contiguous tensor of self's shape.
template <typename Visit>
void forEachTargetClass(const Call &c, const Tensor &self, const Tensor &target, Visit visit) {
  int64_t ignore = c.i("ignore_index", -100);
  bool perPixel = self.rank == 4;
  int classDim = self.rank == 1 ? 0 : 1;
  int64_t N = classDim ? self.shape[0] : 1, C = self.shape[classDim];
  int64_t H = perPixel ? self.shape[2] : 1, W = perPixel ? self.shape[3] : 1;
  int64_t rowStride = classDim ? self.strides[0] : 0, classStride = self.strides[classDim];
  int64_t hStride = perPixel ? self.strides[2] : 0, wStride = perPixel ? self.strides[3] : 0;
  int64_t targetRow = target.rank ? target.strides[0] : 0;
  int64_t targetH = perPixel ? target.strides[1] : 0, targetW = perPixel ? target.strides[2] : 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t w = 0; w < W; ++w) {
        int64_t t = ldi(target, n * targetRow + h * targetH + w * targetW);
        if (t == ignore || t < 0 || t >= C)
          continue;
        visit(n * rowStride + t * classStride + h * hStride + w * wStride,
              ((n * C + t) * H + h) * W + w);
      }
}

void runNllForward(const Call &c) {
  const Tensor &self = *c.tensor(0);
  double sum = 0, count = 0;
  forEachTargetClass(c, self, *c.tensor(1), [&](int64_t selfAt, int64_t) {
    sum -= ldf(self, selfAt);
    count += 1;
  });
  bool mean = c.i("reduction", 1) == 1;
  outf(c.out(0))[0] = static_cast<float>(mean ? sum / count : sum);
  outf(c.out(1))[0] = static_cast<float>(count);
}

void runNllBackward(const Call &c) {
  const Tensor &g = *c.tensor(0), &total = *c.tensor(4), &out = c.out(0);
  float *o = outf(out);
  std::fill_n(o, out.numel(), 0.f);
  float scale = ldf(g, 0);
  if (c.i("reduction", 1) == 1)
    scale /= ldf(total, 0);
  forEachTargetClass(c, *c.tensor(1), *c.tensor(2),
                     [&](int64_t, int64_t gradientAt) { o[gradientAt] = -scale; });
}

//===----------------------------------------------------------------------===//
// mse_loss(self, target, reduction) and mse_loss_backward(grad_output,
// self, target, reduction); reduction 0 none, 1 mean, 2 sum.
//===----------------------------------------------------------------------===//

std::string checkMse(const Signature &sig, int self, const Tensor &expected) {
  const Tensor &x = *sig.call.tensor(self), &t = *sig.call.tensor(self + 1);
  TRY(dtypeIs(x, "self", coop_pb::FLOAT32));
  TRY(dtypeIs(t, "target", coop_pb::FLOAT32));
  TRY(dtypeIs(sig.outputs[0], "the output", coop_pb::FLOAT32));
  if (!sameShape(x, t))
    return "self " + shapeText(x) + " and target " + shapeText(t) + " differ";
  int64_t reduction = sig.call.i("reduction", 1);
  if (reduction < 0 || reduction > 2)
    return "reduction " + std::to_string(reduction) + " is not 0 (none), 1 (mean) or 2 (sum)";
  if (reduction == 0 ? !sameShape(expected, x) : expected.numel() != 1)
    return std::string(self ? "grad_output " : "output ") + shapeText(expected) +
           (reduction ? " is not a scalar" : " is not self's shape " + shapeText(x));
  return "";
}

std::string prepareMse(const Signature &sig) {
  TRY(operands(sig, 2));
  return checkMse(sig, 0, sig.outputs[0]);
}

void runMse(const Call &c) {
  const Tensor &x = *c.tensor(0), &t = *c.tensor(1);
  int64_t reduction = c.i("reduction", 1), n = x.numel();
  float *o = c.out(0).ptr<float>();
  double sum = 0;
  for (int64_t k = 0; k < n; ++k) {
    double d = double(floatAt(x, k)) - floatAt(t, k);
    if (reduction == 0)
      o[k] = static_cast<float>(d * d);
    else
      sum += d * d;
  }
  if (reduction)
    o[0] = static_cast<float>(reduction == 1 ? sum / n : sum);
}

std::string prepareMseBackward(const Signature &sig) {
  TRY(operands(sig, 3));
  TRY(dtypeIs(*sig.call.tensor(0), "grad_output", coop_pb::FLOAT32));
  if (!sameShape(*sig.call.tensor(1), sig.outputs[0]))
    return "output " + shapeText(sig.outputs[0]) + " is not self's shape " + shapeText(*sig.call.tensor(1));
  return checkMse(sig, 1, *sig.call.tensor(0));
}

// grad * 2 * (self - target), over the element count for mean.
void runMseBackward(const Call &c) {
  const Tensor &g = *c.tensor(0), &x = *c.tensor(1), &t = *c.tensor(2);
  int64_t reduction = c.i("reduction", 1), n = x.numel();
  double norm = reduction == 1 ? 2.0 / n : 2.0;
  float *o = c.out(0).ptr<float>();
  for (int64_t k = 0; k < n; ++k) {
    double grad = floatAt(g, reduction ? 0 : k);
    o[k] = static_cast<float>(norm * (double(floatAt(x, k)) - floatAt(t, k)) * grad);
  }
}

} // namespace

std::vector<KernelDef> lossCpuKernels() {
  std::vector<KernelDef> k;
  KernelAdder add{k};
  // Softmax and loss.
  add("aten._softmax", {"self"}, "dim:int half_to_float:bool?", prepareSoftmax, runSoftmax);
  add("aten._log_softmax", {"self"},
      "dim:int half_to_float:bool?", prepareSoftmax, runLogSoftmax);
  add("aten._softmax_backward_data", {"grad_output", "output"}, "dim:int input_dtype:any?", prepareSoftmax,
      runSoftmaxBackward);
  add("aten._log_softmax_backward_data", {"grad_output", "output"}, "dim:int input_dtype:any?", prepareSoftmax,
      runLogSoftmaxBackward);
  add("aten.nll_loss_forward", {"self", "target", "weight?"},
      "reduction:int[0,2] ignore_index:int", prepareNllForward<false>,
      runNllForward);
  add("aten.nll_loss_backward",
      {"grad_output", "self", "target", "weight?", "total_weight"},
       "reduction:int[0,2] ignore_index:int", prepareNllBackward<false>,
      runNllBackward);
  add("aten.nll_loss2d_forward", {"self", "target", "weight?"},
      "reduction:int[0,2] ignore_index:int", prepareNllForward<true>,
      runNllForward);
  add("aten.nll_loss2d_backward",
      {"grad_output", "self", "target", "weight?", "total_weight"},
       "reduction:int[0,2] ignore_index:int", prepareNllBackward<true>,
      runNllBackward);
  add("aten.mse_loss", {"self", "target"}, "reduction:int[0,2]?", prepareMse, runMse);
  add("aten.mse_loss_backward", {"grad_output", "self", "target"},
      "reduction:int[0,2]", prepareMseBackward,
      runMseBackward);
  return k;
}

} // namespace coop::rt
