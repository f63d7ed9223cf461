//===- CpuKernelsMath.cpp - CPU kernels: elementwise math and reductions ===//
//
// The elementwise math and reductions of models outside the zoo: LLaMA's
// RMSNorm (pow, rsqrt, mean) and rotary embeddings (sin, cos), hand-written
// softmax and normalization (amax, exp, log, var, std), clamps, absolute
// values and signs, erf, maximum/minimum, rsub; and the masks their
// backwards build (comparisons, logical_and, where, scalar_tensor,
// masked_fill_). Same contract as the other families (CpuKernels.h): `prepare` checks by name
// and shape, `run` neither fails nor allocates, inputs may be strided and
// broadcast, outputs are contiguous. Each kernel computes in its result's
// dtype as ATen does (float32 math in float, int64 where ATen allows it);
// reductions sum in double in a fixed order. The CUDA backend runs none of
// them.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"

#include <algorithm>
#include <cmath>

namespace coop::rt {
namespace {

/// "what [2,3]": a tensor's role and shape, for messages.
std::string described(const std::string &what, const Tensor &t) {
  std::string text = what + " [";
  for (int d = 0; d < t.rank; ++d)
    text += (d ? "," : "") + std::to_string(t.shape[d]);
  return text + "]";
}

/// Sets of dtypes a kernel accepts.
enum DtypeSet : int { kFloat = 1, kInt64 = 2, kBool = 4 };

int dtypeBit(coop_pb::DType dtype) {
  switch (dtype) {
  case coop_pb::FLOAT32: return kFloat;
  case coop_pb::INT64: return kInt64;
  case coop_pb::BOOL: return kBool;
  default: return 0;
  }
}

std::string expectedDtypes(const Tensor &t, const char *what, int set) {
  if (dtypeBit(t.dtype) & set)
    return "";
  std::string names;
  for (coop_pb::DType dtype : {coop_pb::FLOAT32, coop_pb::INT64, coop_pb::BOOL})
    if (dtypeBit(dtype) & set)
      names += (names.empty() ? "" : " or ") + std::string(dtypeName(dtype));
  return std::string(what) + " is " + dtypeName(t.dtype) + ", expected " + names;
}

/// An element of a float32, int64 or bool tensor, converted to T.
template <typename T> T load(const Tensor &t, const char *p) {
  switch (t.dtype) {
  case coop_pb::FLOAT32: return static_cast<T>(*reinterpret_cast<const float *>(p));
  case coop_pb::INT64: return static_cast<T>(*reinterpret_cast<const int64_t *>(p));
  default: return static_cast<T>(*reinterpret_cast<const uint8_t *>(p));
  }
}

/// Stores `value` as element i of the contiguous `out`, in out's dtype.
template <typename T> void put(const Tensor &out, int64_t i, T value) {
  switch (out.dtype) {
  case coop_pb::FLOAT32: out.ptr<float>()[i] = static_cast<float>(value); break;
  case coop_pb::INT64: out.ptr<int64_t>()[i] = static_cast<int64_t>(value); break;
  default: out.ptr<uint8_t>()[i] = value != 0; break;
  }
}

//===----------------------------------------------------------------------===//
// Elementwise: each operand a tensor parameter broadcast to the output
// (right-aligned, size-1 dimensions repeat) or a scalar argument.
//===----------------------------------------------------------------------===//

/// One output of a dtype in `outputs`; the schema's tensor parameters all
/// present, float32, int64 or bool, and broadcasting to it; no other
/// tensor inputs (an overload that takes a tensor where this one takes a
/// scalar has a kernel of its own). `scalar` names the scalar argument an
/// overload with fewer than two tensors takes besides them.
std::string checkElementwise(const Signature &sig, int outputs, const char *scalar = nullptr) {
  if (sig.call.numOutputs != 1)
    return "has " + std::to_string(sig.call.numOutputs) + " outputs, expected 1";
  const Tensor &out = sig.outputs[0];
  if (sig.call.numInputs != sig.call.numParams)
    return "has " + std::to_string(sig.call.numInputs) + " tensor inputs, expected " +
           std::to_string(sig.call.numParams);
  for (int p = 0; p < sig.call.numParams; ++p) {
    const Tensor *t = sig.call.tensor(p);
    if (!t)
      return "has no tensor argument #" + std::to_string(p);
    std::string operand = "operand #" + std::to_string(p);
    if (!dtypeBit(t->dtype))
      return expectedDtypes(*t, operand.c_str(), kFloat | kInt64 | kBool);
    bool broadcasts = t->rank <= out.rank;
    for (int d = 0; broadcasts && d < t->rank; ++d)
      broadcasts = t->shape[d] == 1 || t->shape[d] == out.shape[d + out.rank - t->rank];
    if (!broadcasts)
      return described(operand, *t) + " does not broadcast to " + described("the output", out);
  }
  if (scalar && sig.call.numParams < 2 && !sig.call.has(scalar))
    return std::string("has no scalar '") + scalar + "'";
  return expectedDtypes(out, "the output", outputs);
}

struct Operand {
  const Tensor *tensor; // nullptr: the scalar
  double scalar;
};

Operand param(const Call &c, int p) { return {c.tensor(p), 0}; }
/// Tensor parameter p, or the scalar argument `name` in its place.
Operand paramOr(const Call &c, int p, const char *name) {
  return c.tensor(p) ? param(c, p) : Operand{nullptr, c.f(name)};
}

/// The output's row-major index, walked element by element.
struct Index {
  const Tensor &out;
  int64_t idx[kMaxRank] = {};

  explicit Index(const Tensor &out) : out(out) {}
  void next() {
    for (int d = out.rank - 1; d >= 0 && ++idx[d] == out.shape[d]; --d)
      idx[d] = 0;
  }
  /// The operand's element at this index, as T.
  template <typename T> T read(const Operand &o) const {
    if (!o.tensor)
      return static_cast<T>(o.scalar);
    const Tensor &t = *o.tensor;
    int64_t offset = 0;
    for (int d = 0; d < t.rank; ++d)
      if (t.shape[d] != 1)
        offset += idx[d + out.rank - t.rank] * t.strides[d];
    return load<T>(t, t.data + offset * elementSize(t.dtype));
  }
};

/// out = f(operands...), computed in T.
template <typename T, typename F, typename... Operands>
void elementwise(const Call &c, F f, const Operands &...operands) {
  const Tensor &out = c.out(0);
  Index index(out);
  for (int64_t i = 0, n = out.numel(); i < n; ++i, index.next())
    put(out, i, f(index.template read<T>(operands)...));
}

/// elementwise() in float or in int64.
template <typename F, typename... Operands>
void inFloatOrInt64(const Call &c, bool inFloat, F f, const Operands &...operands) {
  if (inFloat)
    elementwise<float>(c, f, operands...);
  else
    elementwise<int64_t>(c, f, operands...);
}

/// ATen computes in the result's dtype (bool results: in int64).
bool floatResult(const Call &c) { return c.out(0).dtype == coop_pb::FLOAT32; }

template <typename T> bool isNan(T x) { return x != x; }

//===----------------------------------------------------------------------===//
// Float math: exp, log, log1p, expm1, atan, rsqrt, reciprocal, sin, cos, erf
// (float32 results, int64 and bool inputs promoted, as ATen), pow.
//===----------------------------------------------------------------------===//

std::string prepareFloatMath(const Signature &sig) { return checkElementwise(sig, kFloat); }

template <float (*F)(float)> void runFloatMath(const Call &c) {
  elementwise<float>(c, F, param(c, 0));
}
float expOf(float x) { return std::exp(x); }
float logOf(float x) { return std::log(x); }
float log1pOf(float x) { return std::log1p(x); }
float expm1Of(float x) { return std::expm1(x); }
float atanOf(float x) { return std::atan(x); }
float rsqrtOf(float x) { return 1 / std::sqrt(x); }
float reciprocalOf(float x) { return 1 / x; }
float sinOf(float x) { return std::sin(x); }
float cosOf(float x) { return std::cos(x); }
float erfOf(float x) { return std::erf(x); }

// pow.Tensor_Scalar(self, exponent): ATen's shortcuts for the common
// exponents (RMSNorm's square), std::pow in float otherwise.
std::string preparePowTensorScalar(const Signature &sig) {
  return checkElementwise(sig, kFloat, "exponent");
}

void runPowTensorScalar(const Call &c) {
  double e = c.f("exponent");
  elementwise<float>(c, [e](float x) {
    if (e == 2)
      return x * x;
    if (e == 3)
      return x * x * x;
    if (e == 0.5)
      return std::sqrt(x);
    if (e == -0.5)
      return 1 / std::sqrt(x);
    if (e == -2)
      return 1 / (x * x);
    return std::pow(x, static_cast<float>(e));
  }, param(c, 0));
}

// pow.Tensor_Tensor(self, exponent) and pow.Scalar(self: a scalar,
// exponent): std::pow in float.
float powOf(float base, float exponent) { return std::pow(base, exponent); }
void runPowTensorTensor(const Call &c) { elementwise<float>(c, powOf, param(c, 0), param(c, 1)); }

std::string preparePowScalar(const Signature &sig) {
  return checkElementwise(sig, kFloat, "self");
}
void runPowScalar(const Call &c) {
  elementwise<float>(c, powOf, Operand{nullptr, c.f("self")}, param(c, 0));
}

//===----------------------------------------------------------------------===//
// Float32 or int64: abs, sign (sgn on real numbers), clamps, maximum and
// minimum, rsub. NaN propagates as in ATen.
//===----------------------------------------------------------------------===//

std::string prepareNumeric(const Signature &sig) {
  return checkElementwise(sig, kFloat | kInt64);
}

void runAbs(const Call &c) {
  inFloatOrInt64(c, floatResult(c), [](auto x) { return x < 0 ? -x : x; }, param(c, 0));
}
void runSign(const Call &c) {
  inFloatOrInt64(c, floatResult(c), [](auto x) { return decltype(x)((0 < x) - (x < 0)); },
                 param(c, 0));
}

// clamp(self, min?, max?), clamp_min(self, min), clamp_max(self, max):
// max(x, min), then min(_, max), so max wins when min > max.
std::string prepareClamp(const Signature &sig) {
  if (!sig.call.has("min") && !sig.call.has("max"))
    return "has neither 'min' nor 'max'";
  return prepareNumeric(sig);
}

void runClamp(const Call &c) {
  bool hasMin = c.has("min"), hasMax = c.has("max");
  double lo = c.f("min"), hi = c.f("max");
  inFloatOrInt64(c, floatResult(c), [=](auto x) {
    using T = decltype(x);
    if (isNan(x))
      return x;
    if (hasMin && x < static_cast<T>(lo))
      x = static_cast<T>(lo);
    if (hasMax && x > static_cast<T>(hi))
      x = static_cast<T>(hi);
    return x;
  }, param(c, 0));
}

template <bool Max> void runExtremum(const Call &c) {
  inFloatOrInt64(c, floatResult(c), [](auto a, auto b) {
    if (isNan(a) || isNan(b))
      return isNan(a) ? a : b;
    return Max ? std::max(a, b) : std::min(a, b);
  }, param(c, 0), param(c, 1));
}

// rsub.Scalar(self, other, alpha), rsub.Tensor(self, other, alpha):
// other - alpha * self.
std::string prepareRsub(const Signature &sig) {
  return checkElementwise(sig, kFloat | kInt64, "other");
}

void runRsub(const Call &c) {
  double alpha = c.f("alpha", 1);
  inFloatOrInt64(c, floatResult(c), [alpha](auto self, auto other) {
    return other - static_cast<decltype(self)>(alpha) * self;
  }, param(c, 0), paramOr(c, 1, "other"));
}

//===----------------------------------------------------------------------===//
// Masks: comparisons (.Scalar and .Tensor), logical_and, where,
// scalar_tensor, masked_fill_ (clamp's, pow's and maximum's backwards,
// attention masks).
//===----------------------------------------------------------------------===//

std::string prepareMask(const Signature &sig) { return checkElementwise(sig, kBool); }

std::string prepareCompare(const Signature &sig) {
  return checkElementwise(sig, kBool, "other");
}

/// A comparison promotes as ATen: in float when an operand is float32 or
/// the scalar is a float, else in int64.
bool comparesInFloat(const Call &c) {
  for (int p = 0; p < c.numParams; ++p)
    if (c.tensor(p) && c.tensor(p)->dtype == coop_pb::FLOAT32)
      return true;
  const coop_pb::Value *other = c.tensor(1) ? nullptr : c.arg("other");
  return other && other->kind_case() == coop_pb::Value::kFloatValue;
}

enum class Relation { Eq, Ne, Ge, Le, Gt, Lt };

template <Relation R> void runCompare(const Call &c) {
  inFloatOrInt64(c, comparesInFloat(c), [](auto a, auto b) {
    switch (R) {
    case Relation::Eq: return a == b;
    case Relation::Ne: return a != b;
    case Relation::Ge: return a >= b;
    case Relation::Le: return a <= b;
    case Relation::Gt: return a > b;
    default: return a < b;
    }
  }, param(c, 0), paramOr(c, 1, "other"));
}

void runLogicalAnd(const Call &c) {
  elementwise<double>(c, [](double a, double b) { return a != 0 && b != 0; }, param(c, 0),
                      param(c, 1));
}

// where.self(condition, self, other).
std::string prepareWhere(const Signature &sig) {
  const Tensor *condition = sig.call.tensor(0);
  if (condition && condition->dtype != coop_pb::BOOL)
    return expectedDtypes(*condition, "the condition", kBool);
  return checkElementwise(sig, kFloat | kInt64 | kBool);
}

void runWhere(const Call &c) {
  inFloatOrInt64(c, floatResult(c), [](auto condition, auto a, auto b) {
    return condition != 0 ? a : b;
  }, param(c, 0), param(c, 1), param(c, 2));
}

// scalar_tensor(s): a rank-0 tensor holding s.
std::string prepareScalarTensor(const Signature &sig) {
  if (sig.call.numOutputs == 1 && sig.outputs[0].rank != 0)
    return described("the output", sig.outputs[0]) + " is not rank 0";
  return checkElementwise(sig, kFloat | kInt64 | kBool, "s");
}

void runScalarTensor(const Call &c) { put(c.out(0), 0, c.f("s")); }

// masked_fill_.Scalar runs as masked_fill.Scalar (CpuKernelsLayout.cpp) does
// in its output, which holds self.
const KernelDef &maskedFill() {
  static const KernelDef *kernel = findKernel("aten.masked_fill.Scalar");
  return *kernel;
}
std::string prepareMaskedFillInPlace(const Signature &sig) { return maskedFill().prepare(sig); }
void runMaskedFillInPlace(const Call &c) { maskedFill().run(c); }

//===----------------------------------------------------------------------===//
// Reductions over 'dim' (all dimensions when it is absent, None or empty),
// keepdim or not: amax and amin, and var, std and var_mean with a
// 'correction' (1 when absent or None).
//===----------------------------------------------------------------------===//

/// A reduction's input seen twice: `kept` holds the reduced dimensions at
/// size 1, so its row-major elements are the output's; `folded` holds the
/// others at size 1, its elements those one output element folds.
struct Reduction {
  Tensor kept, folded;
  int64_t count = 1;

  Reduction(const Call &c, const Tensor &in) : kept(in), folded(in) {
    int64_t dims[kMaxRank];
    int n = c.ints("dim", dims, kMaxRank);
    bool reduced[kMaxRank];
    std::fill(reduced, reduced + kMaxRank, n <= 0);
    for (int k = 0; k < n; ++k)
      reduced[dims[k] < 0 ? dims[k] + std::max(in.rank, 1) : dims[k]] = true;
    for (int d = 0; d < in.rank; ++d) {
      (reduced[d] ? kept : folded).shape[d] = 1;
      count *= reduced[d] ? in.shape[d] : 1;
    }
  }
  /// Element k of the fold of output element i.
  const char *at(int64_t i, int64_t k) const { return kept.at(i) + (folded.at(k) - folded.data); }
};

/// `outputs` outputs, each of self's dtype (in `dtypes`) and of the shape
/// the reduction of self leaves.
std::string checkReduction(const Signature &sig, int outputs, int dtypes) {
  if (sig.call.numOutputs != outputs)
    return "has " + std::to_string(sig.call.numOutputs) + " outputs, expected " +
           std::to_string(outputs);
  const Tensor *self = sig.call.tensor(0);
  if (!self)
    return "has no tensor argument 'self'";
  int64_t dims[kMaxRank];
  int n = sig.call.ints("dim", dims, kMaxRank);
  if (n > kMaxRank)
    return "reduces " + std::to_string(n) + " dimensions";
  int rank = std::max(self->rank, 1);
  bool reduced[kMaxRank] = {};
  for (int k = 0; k < n; ++k) {
    if (dims[k] < -rank || dims[k] >= rank)
      return "dimension " + std::to_string(dims[k]) + " is out of range for " +
             described("self", *self);
    int d = static_cast<int>(dims[k] < 0 ? dims[k] + rank : dims[k]);
    if (reduced[d])
      return "dimension " + std::to_string(d) + " appears twice";
    reduced[d] = true;
  }
  bool keepdim = sig.call.b("keepdim");
  Tensor expected = *self;
  expected.rank = 0;
  for (int d = 0; d < self->rank; ++d)
    if (!(n <= 0 || reduced[d]))
      expected.shape[expected.rank++] = self->shape[d];
    else if (keepdim)
      expected.shape[expected.rank++] = 1;
  for (int o = 0; o < outputs; ++o) {
    const Tensor &out = sig.outputs[o];
    if (out.dtype != self->dtype)
      return "output #" + std::to_string(o) + " is " + dtypeName(out.dtype) + ", self " +
             dtypeName(self->dtype);
    if (out.rank != expected.rank ||
        !std::equal(out.shape, out.shape + out.rank, expected.shape))
      return described("output #" + std::to_string(o), out) + " is not " + described("the shape", expected) +
             " that reducing " + described("self", *self) + " leaves";
  }
  return expectedDtypes(*self, "self", dtypes);
}

// amax(self, dim, keepdim), amin: NaN wins, as in ATen.
std::string prepareExtreme(const Signature &sig) {
  std::string problem = checkReduction(sig, 1, kFloat | kInt64);
  if (problem.empty() && Reduction(sig.call, *sig.call.tensor(0)).count == 0)
    return "reduces no elements";
  return problem;
}

template <bool Max, typename T> void extreme(const Call &c) {
  const Tensor &in = *c.tensor(0), &out = c.out(0);
  Reduction r(c, in);
  for (int64_t i = 0, n = out.numel(); i < n; ++i) {
    T best = load<T>(in, r.at(i, 0));
    for (int64_t k = 1; k < r.count && !isNan(best); ++k) {
      T x = load<T>(in, r.at(i, k));
      if (isNan(x) || (Max ? x > best : x < best))
        best = x;
    }
    put(out, i, best);
  }
}

template <bool Max> void runExtreme(const Call &c) {
  if (floatResult(c))
    extreme<Max, float>(c);
  else
    extreme<Max, int64_t>(c);
}

// var.correction(self, dim, correction, keepdim), std.correction and
// var_mean.correction (outputs var, mean): two passes in double; the sum of
// squares divided by max(0, count - correction), as ATen.
enum class Moment { Var, Std, VarMean };

template <Moment M> std::string prepareMoments(const Signature &sig) {
  return checkReduction(sig, M == Moment::VarMean ? 2 : 1, kFloat);
}

template <Moment M> void runMoments(const Call &c) {
  const Tensor &in = *c.tensor(0);
  Reduction r(c, in);
  double divisor = std::max(0.0, static_cast<double>(r.count) - c.f("correction", 1));
  for (int64_t i = 0, n = c.out(0).numel(); i < n; ++i) {
    double sum = 0, squares = 0;
    for (int64_t k = 0; k < r.count; ++k)
      sum += load<double>(in, r.at(i, k));
    double mean = sum / static_cast<double>(r.count);
    for (int64_t k = 0; k < r.count; ++k) {
      double deviation = load<double>(in, r.at(i, k)) - mean;
      squares += deviation * deviation;
    }
    double var = squares / divisor;
    put(c.out(0), i, M == Moment::Std ? std::sqrt(var) : var);
    if (M == Moment::VarMean)
      put(c.out(1), i, mean);
  }
}

} // namespace

std::vector<KernelDef> mathCpuKernels() {
  std::vector<KernelDef> kernels;
  // An in-place variant runs in its output, which holds self.
  auto withInPlace = [&](const char *name, const char *inPlace,
                         std::vector<std::string> params, const char *args, PrepareFn prepare,
                         RunFn run) {
    kernels.push_back({name, params, args, prepare, run});
    kernels.push_back({inPlace, params, args, prepare, run});
  };
  withInPlace("aten.exp", "aten.exp_", {"self"}, "", prepareFloatMath, runFloatMath<expOf>);
  withInPlace("aten.log", "aten.log_", {"self"}, "", prepareFloatMath, runFloatMath<logOf>);
  withInPlace("aten.log1p", "aten.log1p_", {"self"}, "", prepareFloatMath,
              runFloatMath<log1pOf>);
  withInPlace("aten.expm1", "aten.expm1_", {"self"}, "", prepareFloatMath,
              runFloatMath<expm1Of>);
  withInPlace("aten.atan", "aten.atan_", {"self"}, "", prepareFloatMath,
              runFloatMath<atanOf>);
  withInPlace("aten.rsqrt", "aten.rsqrt_", {"self"}, "", prepareFloatMath, runFloatMath<rsqrtOf>);
  withInPlace("aten.reciprocal", "aten.reciprocal_", {"self"}, "", prepareFloatMath,
              runFloatMath<reciprocalOf>);
  withInPlace("aten.sin", "aten.sin_", {"self"}, "", prepareFloatMath, runFloatMath<sinOf>);
  withInPlace("aten.cos", "aten.cos_", {"self"}, "", prepareFloatMath, runFloatMath<cosOf>);
  withInPlace("aten.erf", "aten.erf_", {"self"}, "", prepareFloatMath, runFloatMath<erfOf>);
  withInPlace("aten.pow.Tensor_Scalar", "aten.pow_.Scalar", {"self"},
      "exponent:scalar", preparePowTensorScalar,
              runPowTensorScalar);
  withInPlace("aten.pow.Tensor_Tensor", "aten.pow_.Tensor", {"self", "exponent"}, "",
              prepareFloatMath, runPowTensorTensor);
  kernels.push_back({"aten.pow.Scalar", {"exponent"},
      "self:scalar", preparePowScalar, runPowScalar});
  withInPlace("aten.abs", "aten.abs_", {"self"}, "", prepareNumeric, runAbs);
  withInPlace("aten.sign", "aten.sign_", {"self"}, "", prepareNumeric, runSign);
  kernels.push_back({"aten.sgn", {"self"}, "", prepareNumeric, runSign}); // abs's backward
  withInPlace("aten.clamp", "aten.clamp_", {"self"},
      "min:scalar? max:scalar?", prepareClamp, runClamp);
  withInPlace("aten.clamp_min", "aten.clamp_min_", {"self"}, "min:scalar", prepareClamp, runClamp);
  withInPlace("aten.clamp_max", "aten.clamp_max_", {"self"}, "max:scalar", prepareClamp, runClamp);
  kernels.push_back({"aten.maximum", {"self", "other"}, "", prepareNumeric, runExtremum<true>});
  kernels.push_back({"aten.minimum", {"self", "other"}, "", prepareNumeric, runExtremum<false>});
  kernels.push_back({"aten.rsub.Scalar", {"self"},
      "other:scalar alpha:scalar?", prepareRsub, runRsub});
  kernels.push_back({"aten.rsub.Tensor", {"self", "other"}, "alpha:scalar?", prepareRsub, runRsub});
  // eq.Scalar and ne.Scalar are CpuKernelsLayout.cpp's.
  kernels.insert(kernels.end(), {
      {"aten.ge.Scalar", {"self"}, "other:scalar", prepareCompare, runCompare<Relation::Ge>},
      {"aten.le.Scalar", {"self"}, "other:scalar", prepareCompare, runCompare<Relation::Le>},
      {"aten.gt.Scalar", {"self"}, "other:scalar", prepareCompare, runCompare<Relation::Gt>},
      {"aten.lt.Scalar", {"self"}, "other:scalar", prepareCompare, runCompare<Relation::Lt>},
      {"aten.eq.Tensor", {"self", "other"}, "", prepareCompare, runCompare<Relation::Eq>},
      {"aten.ne.Tensor", {"self", "other"}, "", prepareCompare, runCompare<Relation::Ne>},
      {"aten.ge.Tensor", {"self", "other"}, "", prepareCompare, runCompare<Relation::Ge>},
      {"aten.le.Tensor", {"self", "other"}, "", prepareCompare, runCompare<Relation::Le>},
      {"aten.gt.Tensor", {"self", "other"}, "", prepareCompare, runCompare<Relation::Gt>},
      {"aten.lt.Tensor", {"self", "other"}, "", prepareCompare, runCompare<Relation::Lt>},
      {"aten.where.self", {"condition", "self", "other"}, "", prepareWhere, runWhere},
      {"aten.scalar_tensor", {}, "s:scalar", prepareScalarTensor, runScalarTensor},
      {"aten.masked_fill_.Scalar", {"self", "mask"}, "value:scalar", prepareMaskedFillInPlace,
       runMaskedFillInPlace},
      {"aten.amax", {"self"}, "dim:ints? keepdim:bool?", prepareExtreme, runExtreme<true>},
      {"aten.amin", {"self"}, "dim:ints? keepdim:bool?", prepareExtreme, runExtreme<false>},
      {"aten.var.correction", {"self"},
       "dim:ints? correction:scalar? keepdim:bool?", prepareMoments<Moment::Var>,
       runMoments<Moment::Var>},
      {"aten.std.correction", {"self"},
       "dim:ints? correction:scalar? keepdim:bool?", prepareMoments<Moment::Std>,
       runMoments<Moment::Std>},
      {"aten.var_mean.correction", {"self"},
       "dim:ints? correction:scalar? keepdim:bool?", prepareMoments<Moment::VarMean>,
       runMoments<Moment::VarMean>},
  });
  withInPlace("aten.logical_and", "aten.logical_and_", {"self", "other"}, "", prepareMask,
              runLogicalAnd);
  return kernels;
}

} // namespace coop::rt
