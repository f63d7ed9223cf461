//===- CpuKernelsNorm.cpp - CPU kernels: normalization --------------------===//
//
// Layer, batch and group normalization and their backwards; every
// statistic a fixed-order sum in double. CUDA: CudaKernelsNorm.cu.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"

#include <cmath>

namespace coop::rt {
namespace {

using namespace cpu;

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

int64_t normalizedSize(const Call &c, const Tensor &in, int64_t &rows) {
  int64_t dims[kMaxRank];
  int n = std::max(0, c.ints("normalized_shape", dims, kMaxRank));
  int64_t cols = 1;
  for (int k = 0; k < n; ++k)
    cols *= dims[k];
  rows = cols ? in.numel() / cols : 0;
  return cols;
}

std::string prepareLayerNorm(const Signature &sig) {
  TRY(expect(sig, 3));
  TRY(needTensor(sig, 0, "input"));
  int64_t dims[kMaxRank];
  int n = sig.call.ints("normalized_shape", dims, kMaxRank);
  const Tensor &in = *sig.call.tensor(0);
  if (n < 1 || n > in.rank)
    return "has no usable 'normalized_shape'";
  for (int k = 0; k < n; ++k)
    if (in.shape[in.rank - n + k] != dims[k])
      return "normalized_shape does not end the input shape " + shapeText(in);
  if (!sameShape(sig.outputs[0], in))
    return "output shape differs from the input's";
  return "";
}

void runLayerNorm(const Call &c) {
  const Tensor &in = *c.tensor(0);
  const Tensor *w = c.tensor(1), *b = c.tensor(2);
  int64_t rows;
  int64_t cols = normalizedSize(c, in, rows);
  float eps = static_cast<float>(c.f("eps", 1e-5));
  float *o = outf(c.out(0)), *mean = outf(c.out(1)), *rstd = outf(c.out(2));
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0, sq = 0;
    for (int64_t k = 0; k < cols; ++k)
      sum += *reinterpret_cast<float *>(in.at(r * cols + k));
    double mu = sum / cols;
    for (int64_t k = 0; k < cols; ++k) {
      double d = *reinterpret_cast<float *>(in.at(r * cols + k)) - mu;
      sq += d * d;
    }
    double inv = 1 / std::sqrt(sq / cols + eps);
    mean[r] = static_cast<float>(mu);
    rstd[r] = static_cast<float>(inv);
    for (int64_t k = 0; k < cols; ++k) {
      double x = (*reinterpret_cast<float *>(in.at(r * cols + k)) - mu) * inv;
      if (w)
        x *= *reinterpret_cast<float *>(w->at(k));
      if (b)
        x += *reinterpret_cast<float *>(b->at(k));
      o[r * cols + k] = static_cast<float>(x);
    }
  }
}

// native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd,
// weight?, bias?, output_mask)
std::string prepareLayerNormBackward(const Signature &sig) {
  TRY(prepareMaskedBackward(sig));
  TRY(needTensor(sig, 0, "grad_out"));
  TRY(needTensor(sig, 1, "input"));
  TRY(needTensor(sig, 2, "mean"));
  TRY(needTensor(sig, 3, "rstd"));
  return "";
}

void runLayerNormBackward(const Call &c) {
  const Tensor &g = *c.tensor(0), &in = *c.tensor(1), &meanT = *c.tensor(2), &rstdT = *c.tensor(3);
  const Tensor *w = c.tensor(4);
  int outs[3];
  maskedOutputs(c, outs);
  int64_t rows;
  int64_t cols = normalizedSize(c, in, rows);
  auto ld = [](const Tensor &t, int64_t i) { return double(*reinterpret_cast<float *>(t.at(i))); };
  if (outs[0] >= 0) {
    float *dx = outf(c.out(outs[0]));
    for (int64_t r = 0; r < rows; ++r) {
      double mu = ld(meanT, r), inv = ld(rstdT, r), sg = 0, sgx = 0;
      for (int64_t k = 0; k < cols; ++k) {
        double gw = ld(g, r * cols + k) * (w ? ld(*w, k) : 1.0);
        double xh = (ld(in, r * cols + k) - mu) * inv;
        sg += gw;
        sgx += gw * xh;
      }
      for (int64_t k = 0; k < cols; ++k) {
        double gw = ld(g, r * cols + k) * (w ? ld(*w, k) : 1.0);
        double xh = (ld(in, r * cols + k) - mu) * inv;
        dx[r * cols + k] = static_cast<float>(inv * (gw - sg / cols - xh * sgx / cols));
      }
    }
  }
  for (int which = 1; which < 3; ++which) {
    if (outs[which] < 0)
      continue;
    float *dst = outf(c.out(outs[which]));
    for (int64_t k = 0; k < cols; ++k) {
      double sum = 0;
      for (int64_t r = 0; r < rows; ++r) {
        double gv = ld(g, r * cols + k);
        sum += which == 2 ? gv : gv * (ld(in, r * cols + k) - ld(meanT, r)) * ld(rstdT, r);
      }
      dst[k] = static_cast<float>(sum);
    }
  }
}

/// Element (n, c, i) of an [N, C, ...] tensor, i the flat spatial index.
struct NCS {
  const Tensor *t;
  int64_t N, C, S;
  float operator()(int64_t n, int64_t ch, int64_t i) const {
    return *reinterpret_cast<float *>(t->at((n * C + ch) * S + i));
  }
};
NCS ncs(const Tensor &t) {
  int64_t S = 1;
  for (int d = 2; d < t.rank; ++d)
    S *= t.shape[d];
  return {&t, t.shape[0], t.rank > 1 ? t.shape[1] : 1, S};
}
// native_batch_norm(input, weight?, bias?, running_mean?, running_var?,
// training, momentum, eps) -> out, save_mean, save_invstd[, running_mean,
// running_var updated in place]
std::string prepareBatchNorm(const Signature &sig) {
  if (sig.call.numOutputs < 3)
    return "has fewer than 3 outputs";
  TRY(needTensor(sig, 0, "input"));
  const Tensor &in = *sig.call.tensor(0);
  if (in.rank < 2 || !sameShape(in, sig.outputs[0]))
    return "input " + shapeText(in) + " is not [N, C, ...] like its output";
  if (!sig.call.b("training") && (!sig.call.tensor(3) || !sig.call.tensor(4)))
    return "evaluation needs running statistics";
  return "";
}

void runBatchNorm(const Call &c) {
  const Tensor &in = *c.tensor(0);
  const Tensor *w = c.tensor(1), *b = c.tensor(2), *rm = c.tensor(3), *rv = c.tensor(4);
  NCS x = ncs(in);
  bool training = c.b("training");
  double momentum = c.f("momentum", 0.1), eps = c.f("eps", 1e-5);
  int64_t count = x.N * x.S;
  float *o = outf(c.out(0)), *saveMean = outf(c.out(1)), *saveInv = outf(c.out(2));
  for (int64_t ch = 0; ch < x.C; ++ch) {
    double mu, var;
    if (training) {
      double sum = 0, sq = 0;
      for (int64_t n = 0; n < x.N; ++n)
        for (int64_t i = 0; i < x.S; ++i)
          sum += x(n, ch, i);
      mu = sum / count;
      for (int64_t n = 0; n < x.N; ++n)
        for (int64_t i = 0; i < x.S; ++i) {
          double d = x(n, ch, i) - mu;
          sq += d * d;
        }
      var = sq / count;
    } else {
      mu = at1(rm, ch, 0);
      var = at1(rv, ch, 1);
    }
    double inv = 1 / std::sqrt(var + eps);
    if (c.out(1).numel() > ch)
      saveMean[ch] = static_cast<float>(mu);
    if (c.out(2).numel() > ch)
      saveInv[ch] = static_cast<float>(inv);
    double scale = at1(w, ch, 1), shift = at1(b, ch, 0);
    for (int64_t n = 0; n < x.N; ++n)
      for (int64_t i = 0; i < x.S; ++i)
        o[(n * x.C + ch) * x.S + i] =
            static_cast<float>((x(n, ch, i) - mu) * inv * scale + shift);
    if (training && c.numOutputs == 5) {
      // Outputs 3 and 4 are the running statistics, already holding their
      // old values (in place, or copied on write).
      float *newMean = outf(c.out(3)), *newVar = outf(c.out(4));
      double unbiased = count > 1 ? var * count / (count - 1) : var;
      newMean[ch] = static_cast<float>((1 - momentum) * newMean[ch] + momentum * mu);
      newVar[ch] = static_cast<float>((1 - momentum) * newVar[ch] + momentum * unbiased);
    }
  }
}

// native_batch_norm_backward(grad_out, input, weight?, running_mean?,
// running_var?, save_mean?, save_invstd?, train, eps, output_mask)
std::string prepareBatchNormBackward(const Signature &sig) {
  TRY(prepareMaskedBackward(sig));
  TRY(needTensor(sig, 0, "grad_out"));
  TRY(needTensor(sig, 1, "input"));
  if (sig.call.b("train") ? !sig.call.tensor(5) || !sig.call.tensor(6)
                          : !sig.call.tensor(3) || !sig.call.tensor(4))
    return "has no saved or running statistics";
  return "";
}

void runBatchNormBackward(const Call &c) {
  NCS g = ncs(*c.tensor(0)), x = ncs(*c.tensor(1));
  const Tensor *w = c.tensor(2);
  bool train = c.b("train");
  double eps = c.f("eps", 1e-5);
  int outs[3];
  maskedOutputs(c, outs);
  int64_t count = x.N * x.S;
  for (int64_t ch = 0; ch < x.C; ++ch) {
    double mu, inv;
    if (train) {
      mu = at1(c.tensor(5), ch, 0);
      inv = at1(c.tensor(6), ch, 1);
    } else {
      mu = at1(c.tensor(3), ch, 0);
      inv = 1 / std::sqrt(at1(c.tensor(4), ch, 1) + eps);
    }
    double sg = 0, sgx = 0;
    for (int64_t n = 0; n < x.N; ++n)
      for (int64_t i = 0; i < x.S; ++i) {
        double gv = g(n, ch, i);
        sg += gv;
        sgx += gv * (x(n, ch, i) - mu) * inv;
      }
    double scale = at1(w, ch, 1);
    if (outs[0] >= 0) {
      float *dx = outf(c.out(outs[0]));
      for (int64_t n = 0; n < x.N; ++n)
        for (int64_t i = 0; i < x.S; ++i) {
          double gv = g(n, ch, i), xh = (x(n, ch, i) - mu) * inv;
          double value = train ? scale * inv * (gv - sg / count - xh * sgx / count)
                               : scale * inv * gv;
          dx[(n * x.C + ch) * x.S + i] = static_cast<float>(value);
        }
    }
    if (outs[1] >= 0)
      outf(c.out(outs[1]))[ch] = static_cast<float>(sgx);
    if (outs[2] >= 0)
      outf(c.out(outs[2]))[ch] = static_cast<float>(sg);
  }
}

//===----------------------------------------------------------------------===//
// native_group_norm(input [N, C, *], weight?, bias?, N, C, HxW, group, eps)
// -> out, mean [N, group], rstd [N, group], and its backward (grad_out,
// input, mean, rstd, weight?, N, C, HxW, group, output_mask) -> the
// gradients of input, weight and bias that output_mask asks for. Group g
// of sample n, row n * group + g, holds channels g * C / group onward: a
// run of C / group * HxW elements in logical order. The backward is
// ATen's: from ds = sum(dy * x) and db = sum(dy) per sample and channel.
//===----------------------------------------------------------------------===//

struct GroupNorm {
  int64_t N, C, HxW, groups;
  int64_t channels() const { return C / groups; } // per group
  int64_t span() const { return C / groups * HxW; }
};

GroupNorm groupNormOf(const Call &c) {
  return {c.i("N"), c.i("C"), c.i("HxW"), c.i("group", 1)};
}

/// A float32 tensor of `count` elements (weight, bias, statistics).
std::string floatCount(const Tensor &t, const char *what, int64_t count) {
  TRY(dtypeIs(t, what, coop_pb::FLOAT32));
  if (t.numel() != count)
    return std::string(what) + " " + shapeText(t) + " does not hold " + std::to_string(count) +
           " elements";
  return "";
}

/// Checks input (float32 [N, C, *]) against N, C, HxW and group, and the
/// optional weight [C].
std::string checkGroupNorm(const Call &c, const Tensor &input, const Tensor *weight) {
  TRY(dtypeIs(input, "input", coop_pb::FLOAT32));
  GroupNorm g = groupNormOf(c);
  if (input.rank < 2 || input.shape[0] != g.N || input.shape[1] != g.C ||
      input.numel() != g.N * g.C * g.HxW)
    return "input " + shapeText(input) + " is not [N, C, *] of N " + std::to_string(g.N) + ", C " +
           std::to_string(g.C) + ", HxW " + std::to_string(g.HxW);
  if (g.groups < 1 || g.C % g.groups)
    return "group " + std::to_string(g.groups) + " does not divide C " + std::to_string(g.C);
  if (g.HxW < 1)
    return "input " + shapeText(input) + " has no elements to normalize";
  return weight ? floatCount(*weight, "weight", g.C) : "";
}

std::string prepareGroupNorm(const Signature &sig) {
  if (sig.call.numOutputs != 3)
    return "has " + std::to_string(sig.call.numOutputs) + " outputs, expected 3";
  const Tensor *input = sig.call.tensor(0), *bias = sig.call.tensor(2);
  if (!input)
    return "has no tensor argument 'input'";
  TRY(checkGroupNorm(sig.call, *input, sig.call.tensor(1)));
  GroupNorm g = groupNormOf(sig.call);
  if (bias)
    TRY(floatCount(*bias, "bias", g.C));
  TRY(dtypeIs(sig.outputs[0], "the output", coop_pb::FLOAT32));
  if (!sameShape(sig.outputs[0], *input))
    return "output " + shapeText(sig.outputs[0]) + " differs from input " + shapeText(*input);
  TRY(floatCount(sig.outputs[1], "the mean", g.N * g.groups));
  return floatCount(sig.outputs[2], "the rstd", g.N * g.groups);
}

/// The weight of channel ch, 1 without one.
double gammaAt(const Tensor *weight, int64_t ch) { return weight ? floatAt(*weight, ch) : 1.0; }

void runGroupNorm(const Call &c) {
  const Tensor &x = *c.tensor(0);
  const Tensor *weight = c.tensor(1), *bias = c.tensor(2);
  GroupNorm g = groupNormOf(c);
  double eps = static_cast<float>(c.f("eps", 1e-5)); // a float, as ATen adds it
  int64_t span = g.span();
  float *out = c.out(0).ptr<float>(), *mean = c.out(1).ptr<float>();
  float *rstd = c.out(2).ptr<float>();
  for (int64_t row = 0; row < g.N * g.groups; ++row) {
    int64_t first = row * span;
    double sum = 0, squares = 0;
    for (int64_t k = 0; k < span; ++k)
      sum += floatAt(x, first + k);
    double mu = sum / span;
    for (int64_t k = 0; k < span; ++k) {
      double d = floatAt(x, first + k) - mu;
      squares += d * d;
    }
    double inv = 1 / std::sqrt(squares / span + eps);
    mean[row] = static_cast<float>(mu);
    rstd[row] = static_cast<float>(inv);
    for (int64_t k = 0; k < span; ++k) {
      int64_t ch = row % g.groups * g.channels() + k / g.HxW;
      double y = (floatAt(x, first + k) - mu) * inv * gammaAt(weight, ch);
      out[first + k] = static_cast<float>(bias ? y + floatAt(*bias, ch) : y);
    }
  }
}


std::string prepareGroupNormBackward(const Signature &sig) {
  for (int p = 0; p < 4; ++p)
    if (!sig.call.tensor(p))
      return "has no tensor argument #" + std::to_string(p);
  const Tensor &go = *sig.call.tensor(0), &input = *sig.call.tensor(1);
  TRY(checkGroupNorm(sig.call, input, sig.call.tensor(4)));
  TRY(dtypeIs(go, "grad_out", coop_pb::FLOAT32));
  if (!sameShape(go, input))
    return "grad_out " + shapeText(go) + " differs from input " + shapeText(input);
  GroupNorm g = groupNormOf(sig.call);
  TRY(floatCount(*sig.call.tensor(2), "mean", g.N * g.groups));
  TRY(floatCount(*sig.call.tensor(3), "rstd", g.N * g.groups));
  int64_t mask[3] = {1, 1, 1};
  sig.call.ints("output_mask", mask, 3);
  int expected = int(mask[0] != 0) + int(mask[1] != 0) + int(mask[2] != 0);
  if (sig.call.numOutputs != expected)
    return "has " + std::to_string(sig.call.numOutputs) + " outputs; output_mask asks for " +
           std::to_string(expected);
  int outs[3];
  maskedOutputs(sig.call, outs);
  if (int o = outs[0]; o >= 0) {
    TRY(dtypeIs(sig.outputs[o], "grad_input", coop_pb::FLOAT32));
    if (!sameShape(sig.outputs[o], input))
      return "grad_input " + shapeText(sig.outputs[o]) + " differs from input " + shapeText(input);
  }
  if (int o = outs[1]; o >= 0)
    TRY(floatCount(sig.outputs[o], "grad_weight", g.C));
  if (int o = outs[2]; o >= 0)
    TRY(floatCount(sig.outputs[o], "grad_bias", g.C));
  return "";
}

/// ATen's ds and db of sample n, channel ch: the sums of dy * x and of dy.
void channelSums(const Tensor &dy, const Tensor &x, const GroupNorm &g, int64_t n, int64_t ch,
                 double &ds, double &db) {
  ds = db = 0;
  int64_t first = (n * g.C + ch) * g.HxW;
  for (int64_t i = 0; i < g.HxW; ++i) {
    double d = floatAt(dy, first + i);
    ds += d * floatAt(x, first + i);
    db += d;
  }
}

void runGroupNormBackward(const Call &c) {
  const Tensor &dy = *c.tensor(0), &x = *c.tensor(1), &meanT = *c.tensor(2);
  const Tensor &rstdT = *c.tensor(3), *weight = c.tensor(4);
  GroupNorm g = groupNormOf(c);
  int64_t cpg = g.channels(), span = g.span();
  double ds, db;
  int outs[3];
  maskedOutputs(c, outs);
  if (int o = outs[0]; o >= 0) {
    float *dx = c.out(o).ptr<float>();
    for (int64_t row = 0; row < g.N * g.groups; ++row) {
      int64_t n = row / g.groups, first = (row % g.groups) * cpg;
      double dsGroup = 0, dbGroup = 0;
      for (int64_t ch = first; ch < first + cpg; ++ch) {
        channelSums(dy, x, g, n, ch, ds, db);
        dsGroup += ds * gammaAt(weight, ch);
        dbGroup += db * gammaAt(weight, ch);
      }
      double mu = floatAt(meanT, row), inv = floatAt(rstdT, row);
      double c2 = (dbGroup * mu - dsGroup) * inv * inv * inv / span;
      double c3 = -c2 * mu - dbGroup * inv / span;
      for (int64_t k = row * span; k < (row + 1) * span; ++k) {
        int64_t ch = first + k % span / g.HxW;
        dx[k] = static_cast<float>(inv * gammaAt(weight, ch) * floatAt(dy, k) +
                                   c2 * floatAt(x, k) + c3);
      }
    }
  }
  int dWeight = outs[1], dBias = outs[2];
  if (dWeight < 0 && dBias < 0)
    return;
  for (int64_t ch = 0; ch < g.C; ++ch) {
    double weightSum = 0, biasSum = 0;
    for (int64_t n = 0; n < g.N; ++n) {
      channelSums(dy, x, g, n, ch, ds, db);
      int64_t row = n * g.groups + ch / cpg;
      weightSum += (ds - db * floatAt(meanT, row)) * floatAt(rstdT, row);
      biasSum += db;
    }
    if (dWeight >= 0)
      c.out(dWeight).ptr<float>()[ch] = static_cast<float>(weightSum);
    if (dBias >= 0)
      c.out(dBias).ptr<float>()[ch] = static_cast<float>(biasSum);
  }
}

} // namespace

std::vector<KernelDef> normCpuKernels() {
  std::vector<KernelDef> k;
  KernelAdder add{k};
  // Normalization.
  add("aten.native_layer_norm", {"input", "weight?", "bias?"},
      "normalized_shape:ints[0,) eps:float[0,)", prepareLayerNorm,
      runLayerNorm);
  add("aten.native_layer_norm_backward",
      {"grad_out", "input", "mean", "rstd", "weight?", "bias?"},
       "normalized_shape:ints[0,)? output_mask:any?", prepareLayerNormBackward,
      runLayerNormBackward);
  add("aten.native_batch_norm",
      {"input", "weight?", "bias?", "running_mean?", "running_var?"},
       "training:bool momentum:float? eps:float[0,)", prepareBatchNorm,
      runBatchNorm);
  add("aten.native_batch_norm_backward",
      {"grad_out", "input", "weight?", "running_mean?", "running_var?", "save_mean?",
       "save_invstd?"},
      "train:bool eps:float[0,) output_mask:any?", prepareBatchNormBackward,
      runBatchNormBackward);
  add("aten.native_group_norm", {"input", "weight?", "bias?"},
      "N:int[0,) C:int[0,) HxW:int[0,) group:int[1,) eps:float[0,)",
      prepareGroupNorm, runGroupNorm);
  add("aten.native_group_norm_backward", {"grad_out", "input", "mean", "rstd", "weight?"},
      "N:int[0,) C:int[0,) HxW:int[0,) group:int[1,) output_mask:any?",
      prepareGroupNormBackward, runGroupNormBackward);
  return k;
}

} // namespace coop::rt
