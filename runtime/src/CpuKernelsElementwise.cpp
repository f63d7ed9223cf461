//===- CpuKernelsElementwise.cpp - CPU kernels: elementwise arithmetic and activations ===//
//
// Broadcast arithmetic (add, sub, mul, div; add, sub and mul also on int64),
// relu, sqrt, gelu, the threshold and dropout backwards, addcmul and addcdiv;
// sigmoid and tanh (recurrent nets); the activations of common CNNs (hard
// tanh, swish and sigmoid, SiLU, leaky ReLU, ELU and CELU, softplus, mish) and
// neg, with their backwards. The CUDA backend runs them through
// CudaKernelsElementwise.cu's elementwise kernel.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"

#include <cmath>

namespace coop::rt {
namespace {

using namespace cpu;

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

/// Tensor parameters 0..n-1 are float inputs broadcast to output 0;
/// parameter 1 may be a scalar 'other' instead.
/// add, sub and mul, which also compute on int64 operands.
bool integerArithmetic(const std::string &kernel) {
  for (const char *name : {"aten.add.Tensor", "aten.add_.Tensor", "aten.sub.Tensor",
                           "aten.sub_.Tensor", "aten.mul.Tensor", "aten.mul_.Tensor"})
    if (kernel == name)
      return true;
  return false;
}

template <int N> std::string prepareElementwise(const Signature &sig) {
  if (N == 2 && sig.call.numOutputs == 1 && sig.outputs[0].dtype == coop_pb::INT64 &&
      integerArithmetic(*sig.kernel)) {
    // Integer counters (batch norm's num_batches_tracked) and index
    // arithmetic.
    const Tensor *a = sig.call.tensor(0), *b = sig.call.tensor(1);
    if (!a || a->dtype != coop_pb::INT64 || !broadcastsTo(*a, sig.outputs[0]) ||
        (b && (b->dtype != coop_pb::INT64 || !broadcastsTo(*b, sig.outputs[0]))))
      return "integer arithmetic needs int64 operands that broadcast to the output";
    return "";
  }
  TRY(expect(sig, 1));
  for (int p = 0; p < N; ++p) {
    const Tensor *t = sig.call.tensor(p);
    if (!t) {
      if (p == 1 && sig.call.has("other"))
        continue;
      return "has no tensor argument #" + std::to_string(p);
    }
    // bool and int64 operands of a float32 result are promoted, as in ATen.
    if (t->dtype != coop_pb::FLOAT32 && t->dtype != coop_pb::BOOL &&
        t->dtype != coop_pb::INT64)
      return "input is " + std::string(dtypeName(t->dtype)) +
             ", expected float32 (or bool or int64, promoted)";
    if (!broadcastsTo(*t, sig.outputs[0]))
      return "input " + shapeText(*t) + " does not broadcast to output " +
             shapeText(sig.outputs[0]);
  }
  return "";
}

template <typename F> void map1(const Call &c, F f) {
  const Tensor &out = c.out(0), &a = *c.tensor(0);
  Walk w(out);
  int ia = w.add(a);
  float *o = outf(out);
  for (int64_t i = 0, n = out.numel(); i < n; ++i, w.next())
    o[i] = f(asFloat(a, w.off[ia]));
}

template <typename F> void map2(const Call &c, F f) {
  const Tensor &out = c.out(0), &a = *c.tensor(0);
  const Tensor *b = c.tensor(1);
  Walk w(out);
  int ia = w.add(a), ib = b ? w.add(*b) : -1;
  float scalar = b ? 0.f : static_cast<float>(c.f("other"));
  float *o = outf(out);
  for (int64_t i = 0, n = out.numel(); i < n; ++i, w.next())
    o[i] = f(asFloat(a, w.off[ia]), b ? asFloat(*b, w.off[ib]) : scalar);
}

template <typename F> void map3(const Call &c, F f) {
  const Tensor &out = c.out(0), &a = *c.tensor(0), &b = *c.tensor(1), &d = *c.tensor(2);
  Walk w(out);
  int ia = w.add(a), ib = w.add(b), id = w.add(d);
  float *o = outf(out);
  for (int64_t i = 0, n = out.numel(); i < n; ++i, w.next())
    o[i] = f(asFloat(a, w.off[ia]), asFloat(b, w.off[ib]), asFloat(d, w.off[id]));
}

template <typename F> void mapInt64(const Call &c, F f) {
  const Tensor &out = c.out(0), &a = *c.tensor(0);
  const Tensor *b = c.tensor(1);
  Walk w(out);
  int ia = w.add(a), ib = b ? w.add(*b) : -1;
  int64_t scalar = b ? 0 : c.i("other");
  int64_t *o = out.ptr<int64_t>();
  for (int64_t i = 0, n = out.numel(); i < n; ++i, w.next())
    o[i] = f(a.ptr<int64_t>()[w.off[ia]], b ? b->ptr<int64_t>()[w.off[ib]] : scalar);
}

void runAdd(const Call &c) {
  if (c.out(0).dtype == coop_pb::INT64) {
    int64_t alpha = c.i("alpha", 1);
    return mapInt64(c, [alpha](int64_t a, int64_t b) { return a + alpha * b; });
  }
  float alpha = static_cast<float>(c.f("alpha", 1));
  map2(c, [alpha](float a, float b) { return a + alpha * b; });
}
void runSub(const Call &c) {
  if (c.out(0).dtype == coop_pb::INT64) {
    int64_t alpha = c.i("alpha", 1);
    return mapInt64(c, [alpha](int64_t a, int64_t b) { return a - alpha * b; });
  }
  float alpha = static_cast<float>(c.f("alpha", 1));
  map2(c, [alpha](float a, float b) { return a - alpha * b; });
}
void runMul(const Call &c) {
  if (c.out(0).dtype == coop_pb::INT64)
    return mapInt64(c, [](int64_t a, int64_t b) { return a * b; });
  map2(c, [](float a, float b) { return a * b; });
}
void runDiv(const Call &c) { map2(c, [](float a, float b) { return a / b; }); }
void runRelu(const Call &c) { map1(c, [](float a) { return a > 0.f ? a : 0.f; }); }
void runSqrt(const Call &c) { map1(c, [](float a) { return std::sqrt(a); }); }
void runThresholdBackward(const Call &c) {
  float threshold = static_cast<float>(c.f("threshold"));
  map2(c, [threshold](float g, float x) { return x <= threshold ? 0.f : g; });
}
void runDropoutBackward(const Call &c) {
  float scale = static_cast<float>(c.f("scale", 1));
  map2(c, [scale](float g, float mask) { return g * mask * scale; });
}
void runAddcmul(const Call &c) {
  float value = static_cast<float>(c.f("value", 1));
  map3(c, [value](float s, float a, float b) { return s + value * (a * b); });
}
void runAddcdiv(const Call &c) {
  float value = static_cast<float>(c.f("value", 1));
  map3(c, [value](float s, float a, float b) { return s + value * (a / b); });
}

bool tanhGelu(const Call &c) { return c.s("approximate") == "tanh"; }
constexpr double kSqrt2 = 1.4142135623730951, kSqrt2OverPi = 0.7978845608028654,
                 kInvSqrt2Pi = 0.3989422804014327;

void runGelu(const Call &c) {
  if (tanhGelu(c))
    map1(c, [](float x) {
      double u = kSqrt2OverPi * (x + 0.044715 * x * x * x);
      return static_cast<float>(0.5 * x * (1 + std::tanh(u)));
    });
  else
    map1(c, [](float x) { return static_cast<float>(0.5 * x * (1 + std::erf(x / kSqrt2))); });
}
void runGeluBackward(const Call &c) {
  if (tanhGelu(c))
    map2(c, [](float g, float x) {
      double x3 = 0.044715 * x * x * x, u = kSqrt2OverPi * (x + x3), t = std::tanh(u);
      double du = kSqrt2OverPi * (1 + 3 * 0.044715 * x * x);
      return static_cast<float>(g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * du));
    });
  else
    map2(c, [](float g, float x) {
      double cdf = 0.5 * (1 + std::erf(x / kSqrt2));
      double pdf = kInvSqrt2Pi * std::exp(-0.5 * double(x) * x);
      return static_cast<float>(g * (cdf + x * pdf));
    });
}

//===----------------------------------------------------------------------===//
// Recurrent nets: sigmoid, tanh and their backward kernels
//===----------------------------------------------------------------------===//

float sigmoidf(float a) { return 1.f / (1.f + std::exp(-a)); }
void runSigmoid(const Call &c) { map1(c, sigmoidf); }
void runTanh(const Call &c) { map1(c, [](float a) { return std::tanh(a); }); }
// sigmoid_backward(grad_output, output): grad * (1 - y) * y, as ATen.
void runSigmoidBackward(const Call &c) {
  map2(c, [](float g, float y) { return g * (1.f - y) * y; });
}
// tanh_backward(grad_output, output): grad * (1 - y * y).
void runTanhBackward(const Call &c) {
  map2(c, [](float g, float y) { return g * (1.f - y * y); });
}

//===----------------------------------------------------------------------===//
// Activations of common CNNs (MobileNet's ReLU6 and hard swish,
// EfficientNet's SiLU; leaky ReLU, ELU and CELU, softplus, mish) and their
// backwards, negation. float32; inputs may be strided; an in-place variant
// runs in its output, which holds self.
//===----------------------------------------------------------------------===//

/// Float32 tensor parameters 0..inputs-1, all of the output's shape.
std::string prepareFloatSameShape(const Signature &sig, int inputs) {
  TRY(operands(sig, inputs));
  const Tensor &out = sig.outputs[0];
  TRY(dtypeIs(out, "the output", coop_pb::FLOAT32));
  for (int p = 0; p < inputs; ++p) {
    const Tensor &t = *sig.call.tensor(p);
    TRY(dtypeIs(t, p ? "the second operand" : "the first operand", coop_pb::FLOAT32));
    if (!sameShape(t, out))
      return "operand #" + std::to_string(p) + " " + shapeText(t) + " and output " + shapeText(out) +
             " differ";
  }
  return "";
}

std::string prepareUnary(const Signature &sig) { return prepareFloatSameShape(sig, 1); }
std::string prepareGradient(const Signature &sig) { return prepareFloatSameShape(sig, 2); }

template <typename F> void unary(const Call &c, F f) {
  const Tensor &in = *c.tensor(0);
  float *o = c.out(0).ptr<float>();
  for (int64_t k = 0, n = c.out(0).numel(); k < n; ++k)
    o[k] = f(floatAt(in, k));
}

/// out = f(grad_output, self), elementwise.
template <typename F> void gradient(const Call &c, F f) {
  const Tensor &g = *c.tensor(0), &x = *c.tensor(1);
  float *o = c.out(0).ptr<float>();
  for (int64_t k = 0, n = c.out(0).numel(); k < n; ++k)
    o[k] = f(floatAt(g, k), floatAt(x, k));
}

// hardtanh(self, min_val=-1, max_val=1): self clamped to [min_val, max_val].
std::string prepareHardtanh(const Signature &sig) {
  TRY(prepareFloatSameShape(sig, sig.call.numParams));
  if (sig.call.f("min_val", -1) > sig.call.f("max_val", 1))
    return "min_val " + std::to_string(sig.call.f("min_val", -1)) + " exceeds max_val " +
           std::to_string(sig.call.f("max_val", 1));
  return "";
}

void runHardtanh(const Call &c) {
  float lo = static_cast<float>(c.f("min_val", -1)), hi = static_cast<float>(c.f("max_val", 1));
  unary(c, [lo, hi](float x) { return x < lo ? lo : x > hi ? hi : x; });
}

// hardtanh_backward(grad_output, self, min_val, max_val): the gradient
// where min_val < self < max_val, else zero (as ATen).
void runHardtanhBackward(const Call &c) {
  float lo = static_cast<float>(c.f("min_val", -1)), hi = static_cast<float>(c.f("max_val", 1));
  gradient(c, [lo, hi](float g, float x) { return x <= lo || x >= hi ? 0.f : g; });
}

// hardswish(self): x * clamp(x + 3, 0, 6) / 6; the backward as ATen:
// 0 below -3, g * (x / 3 + 0.5) up to 3, g above.
void runHardswish(const Call &c) {
  unary(c, [](float x) {
    return static_cast<float>(x * std::min(std::max(double(x) + 3, 0.0), 6.0) / 6);
  });
}
void runHardswishBackward(const Call &c) {
  gradient(c, [](float g, float x) {
    return x < -3.f ? 0.f : x <= 3.f ? static_cast<float>(g * (double(x) / 3 + 0.5)) : g;
  });
}

// hardsigmoid(self): clamp(x + 3, 0, 6) / 6; the backward: g / 6 strictly
// inside (-3, 3), else zero.
void runHardsigmoid(const Call &c) {
  unary(c, [](float x) {
    return static_cast<float>(std::min(std::max(double(x) + 3, 0.0), 6.0) / 6);
  });
}
void runHardsigmoidBackward(const Call &c) {
  gradient(c, [](float g, float x) {
    return x > -3.f && x < 3.f ? static_cast<float>(double(g) / 6) : 0.f;
  });
}

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

// silu(self): x * sigmoid(x); silu_backward(grad_output, self):
// g * s * (1 + x * (1 - s)), s = sigmoid(x) (torch 2 emits it; torch 1.13
// differentiates silu through sigmoid).
void runSilu(const Call &c) {
  unary(c, [](float x) { return static_cast<float>(x * sigmoid(x)); });
}
void runSiluBackward(const Call &c) {
  gradient(c, [](float g, float x) {
    double s = sigmoid(x);
    return static_cast<float>(g * s * (1 + x * (1 - s)));
  });
}

void runNeg(const Call &c) { unary(c, [](float x) { return -x; }); }

// leaky_relu(self, negative_slope): x where positive, else x * slope, in
// float as ATen; the backward (grad_output, self, negative_slope,
// self_is_result) likewise scales the gradient. self may be the result
// (of leaky_relu_) only for a slope that keeps the sign, as ATen demands.
float slopeOf(const Call &c) { return static_cast<float>(c.f("negative_slope", 0.01)); }

void runLeakyRelu(const Call &c) {
  float slope = slopeOf(c);
  unary(c, [slope](float x) { return x > 0 ? x : x * slope; });
}

std::string prepareLeakyReluBackward(const Signature &sig) {
  TRY(prepareGradient(sig));
  if (sig.call.b("self_is_result") && slopeOf(sig.call) < 0)
    return "the backward of an in-place leaky_relu with a negative slope is not defined";
  return "";
}

void runLeakyReluBackward(const Call &c) {
  float slope = slopeOf(c);
  gradient(c, [slope](float g, float x) { return x > 0 ? g : g * slope; });
}

// elu(self, alpha, scale, input_scale): x * scale where positive, else
// (exp(x * input_scale) - 1) * alpha * scale; celu(self, alpha) is elu with
// scale 1 and input_scale 1 / alpha (ATen's own definition), and its
// backward is elu_backward.
struct Elu {
  double negative, positive, input; // alpha * scale, scale, input_scale
  double operator()(double x) const {
    return x > 0 ? x * positive : std::expm1(x * input) * negative;
  }
};

Elu eluOf(const Call &c) {
  double alpha = c.f("alpha", 1), scale = c.f("scale", 1);
  return {alpha * scale, scale, c.f("input_scale", 1)};
}

void runElu(const Call &c) {
  Elu elu = eluOf(c);
  unary(c, [elu](float x) { return static_cast<float>(elu(x)); });
}

std::string prepareCelu(const Signature &sig) {
  TRY(prepareUnary(sig));
  return sig.call.f("alpha", 1) == 0 ? "alpha is zero" : "";
}

void runCelu(const Call &c) {
  double alpha = c.f("alpha", 1);
  Elu elu{alpha, 1, 1 / alpha};
  unary(c, [elu](float x) { return static_cast<float>(elu(x)); });
}

// elu_backward(grad_output, alpha, scale, input_scale, is_result,
// self_or_result): g * scale where positive; else, from the input x,
// g * input_scale * alpha * scale * exp(x * input_scale), or from the
// result y (of elu_), g * input_scale * (y + alpha * scale), which needs
// alpha >= 0 (ATen's rule).
std::string prepareEluBackward(const Signature &sig) {
  TRY(prepareGradient(sig));
  if (sig.call.b("is_result") && sig.call.f("alpha", 1) < 0)
    return "the backward of an in-place elu with a negative alpha is not defined";
  return "";
}

void runEluBackward(const Call &c) {
  Elu elu = eluOf(c);
  bool fromResult = c.b("is_result");
  gradient(c, [elu, fromResult](float g, float v) {
    if (v > 0)
      return static_cast<float>(g * elu.positive);
    double slope = fromResult ? v + elu.negative : elu.negative * std::exp(v * elu.input);
    return static_cast<float>(g * elu.input * slope);
  });
}

// softplus(self, beta, threshold): log(1 + exp(x * beta)) / beta, or x
// where x * beta exceeds threshold; the backward (grad_output, self, beta,
// threshold) is g * sigmoid(x * beta) there, else g.
void runSoftplus(const Call &c) {
  double beta = c.f("beta", 1), threshold = c.f("threshold", 20);
  unary(c, [beta, threshold](float x) {
    double scaled = x * beta;
    return scaled > threshold ? x : static_cast<float>(std::log1p(std::exp(scaled)) / beta);
  });
}

void runSoftplusBackward(const Call &c) {
  double beta = c.f("beta", 1), threshold = c.f("threshold", 20);
  gradient(c, [beta, threshold](float g, float x) {
    double scaled = x * beta;
    return scaled > threshold ? g : static_cast<float>(g * sigmoid(scaled));
  });
}

// mish(self): x * tanh(softplus(x)); mish_backward(grad_output, self):
// g * (t + x * sigmoid(x) * (1 - t * t)), t = tanh(softplus(x)).
double tanhSoftplus(double x) { return std::tanh(std::log1p(std::exp(x))); }

void runMish(const Call &c) {
  unary(c, [](float x) { return static_cast<float>(x * tanhSoftplus(x)); });
}

void runMishBackward(const Call &c) {
  gradient(c, [](float g, float x) {
    double t = tanhSoftplus(x);
    return static_cast<float>(g * (t + x * sigmoid(x) * (1 - t * t)));
  });
}

} // namespace

std::vector<KernelDef> elementwiseCpuKernels() {
  std::vector<KernelDef> k;
  KernelAdder add{k};
  // Elementwise (an in-place variant runs in its output, which holds self).
  for (const char *name : {"aten.add", "aten.add_"})
    add(name, {"self", "other"}, "other:scalar? alpha:scalar?", prepareElementwise<2>, runAdd);
  for (const char *name : {"aten.sub", "aten.sub_"})
    add(name, {"self", "other"}, "other:scalar? alpha:scalar?", prepareElementwise<2>, runSub);
  for (const char *name : {"aten.mul", "aten.mul_"})
    add(name, {"self", "other"}, "other:scalar?", prepareElementwise<2>, runMul);
  for (const char *name : {"aten.div", "aten.div_"})
    add(name, {"self", "other"}, "other:scalar?", prepareElementwise<2>, runDiv);
  for (const char *name : {"aten.relu", "aten.relu_"})
    add(name, {"self"}, "", prepareElementwise<1>, runRelu);
  for (const char *name : {"aten.sqrt", "aten.sqrt_"})
    add(name, {"self"}, "", prepareElementwise<1>, runSqrt);
  add("aten.gelu", {"self"}, "approximate:str?", prepareElementwise<1>, runGelu);
  add("aten.gelu_backward", {"grad_output", "self"},
      "approximate:str?", prepareElementwise<2>, runGeluBackward);
  add("aten.threshold_backward", {"grad_output", "self"},
      "threshold:scalar", prepareElementwise<2>,
      runThresholdBackward);
  add("aten.native_dropout_backward", {"grad_output", "mask"},
      "scale:float", prepareElementwise<2>,
      runDropoutBackward);
  add("aten.addcmul_", {"self", "tensor1", "tensor2"},
      "value:scalar?", prepareElementwise<3>, runAddcmul);
  add("aten.addcmul", {"self", "tensor1", "tensor2"},
      "value:scalar?", prepareElementwise<3>, runAddcmul);
  add("aten.addcdiv_", {"self", "tensor1", "tensor2"},
      "value:scalar?", prepareElementwise<3>, runAddcdiv);
  add("aten.addcdiv", {"self", "tensor1", "tensor2"},
      "value:scalar?", prepareElementwise<3>, runAddcdiv);
  // Recurrent nets.
  for (const char *name : {"aten.sigmoid", "aten.sigmoid_"})
    add(name, {"self"}, "", prepareElementwise<1>, runSigmoid);
  for (const char *name : {"aten.tanh", "aten.tanh_"})
    add(name, {"self"}, "", prepareElementwise<1>, runTanh);
  add("aten.sigmoid_backward", {"grad_output", "output"}, "", prepareElementwise<2>,
      runSigmoidBackward);
  add("aten.tanh_backward", {"grad_output", "output"}, "", prepareElementwise<2>,
      runTanhBackward);
  add("aten.hardtanh", {"self"}, "min_val:scalar? max_val:scalar?", prepareHardtanh, runHardtanh);
  add("aten.hardtanh_", {"self"}, "min_val:scalar? max_val:scalar?", prepareHardtanh, runHardtanh);
  add("aten.hardtanh_backward", {"grad_output", "self"},
      "min_val:scalar max_val:scalar", prepareHardtanh, runHardtanhBackward);
  add("aten.hardswish", {"self"}, "", prepareUnary, runHardswish);
  add("aten.hardswish_", {"self"}, "", prepareUnary, runHardswish);
  add("aten.hardswish_backward", {"grad_output", "self"}, "", prepareGradient,
      runHardswishBackward);
  add("aten.hardsigmoid", {"self"}, "", prepareUnary, runHardsigmoid);
  add("aten.hardsigmoid_", {"self"}, "", prepareUnary, runHardsigmoid);
  add("aten.hardsigmoid_backward", {"grad_output", "self"}, "", prepareGradient,
      runHardsigmoidBackward);
  add("aten.silu", {"self"}, "", prepareUnary, runSilu);
  add("aten.silu_", {"self"}, "", prepareUnary, runSilu);
  add("aten.neg", {"self"}, "", prepareUnary, runNeg);
  add("aten.neg_", {"self"}, "", prepareUnary, runNeg);
  add("aten.silu_backward", {"grad_output", "self"}, "", prepareGradient, runSiluBackward);
  add("aten.leaky_relu", {"self"}, "negative_slope:scalar?", prepareUnary, runLeakyRelu);
  add("aten.leaky_relu_", {"self"}, "negative_slope:scalar?", prepareUnary, runLeakyRelu);
  add("aten.leaky_relu_backward", {"grad_output", "self"},
      "negative_slope:scalar self_is_result:bool?", prepareLeakyReluBackward,
      runLeakyReluBackward);
  add("aten.elu", {"self"},
      "alpha:scalar? scale:scalar? input_scale:scalar?", prepareUnary, runElu);
  add("aten.elu_", {"self"},
      "alpha:scalar? scale:scalar? input_scale:scalar?", prepareUnary, runElu);
  add("aten.celu", {"self"}, "alpha:scalar?", prepareCelu, runCelu);
  add("aten.celu_", {"self"}, "alpha:scalar?", prepareCelu, runCelu);
  add("aten.elu_backward", {"grad_output", "self_or_result"},
      "alpha:scalar scale:scalar? input_scale:scalar? is_result:bool", prepareEluBackward,
      runEluBackward);
  add("aten.softplus", {"self"}, "beta:scalar? threshold:scalar?", prepareUnary, runSoftplus);
  add("aten.softplus_backward", {"grad_output", "self"},
      "beta:scalar threshold:scalar", prepareGradient, runSoftplusBackward);
  add("aten.mish", {"self"}, "", prepareUnary, runMish);
  add("aten.mish_", {"self"}, "", prepareUnary, runMish);
  add("aten.mish_backward", {"grad_output", "self"}, "", prepareGradient, runMishBackward);
  return k;
}

} // namespace coop::rt
