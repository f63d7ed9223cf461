//===- CpuKernels.cpp - The CPU reference backend and its kernels ---------===//
//
// Straightforward kernels with a fixed summation order (sequential, in
// double), so a result depends only on the input values: not on where the
// buffers live, nor on the run. They read strided inputs and write their
// (contiguous) outputs; none allocates memory.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"
#include "Random.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace coop::rt {
namespace {

//===----------------------------------------------------------------------===//
// Iteration helpers
//===----------------------------------------------------------------------===//

/// Walks a shape in row-major order keeping the element offsets of up to
/// four tensors (strides 0 broadcast).
struct Walk {
  int rank = 0;
  int64_t shape[kMaxRank] = {};
  int64_t idx[kMaxRank] = {};
  int count = 0;
  int64_t strides[4][kMaxRank] = {};
  int64_t off[4] = {};

  explicit Walk(const Tensor &like) : rank(like.rank) {
    std::copy(like.shape, like.shape + rank, shape);
  }
  /// Adds `t`, broadcast to the walked shape (right-aligned).
  int add(const Tensor &t) {
    int shift = rank - t.rank;
    for (int d = 0; d < rank; ++d) {
      int s = d - shift;
      strides[count][d] = s >= 0 && t.shape[s] != 1 ? t.strides[s] : 0;
    }
    return count++;
  }
  void next() {
    for (int d = rank - 1; d >= 0; --d) {
      ++idx[d];
      for (int t = 0; t < count; ++t)
        off[t] += strides[t][d];
      if (idx[d] < shape[d])
        return;
      for (int t = 0; t < count; ++t)
        off[t] -= strides[t][d] * shape[d];
      idx[d] = 0;
    }
  }
};

inline float ldf(const Tensor &t, int64_t off) { return t.ptr<float>()[off]; }
inline int64_t ldi(const Tensor &t, int64_t off) {
  switch (t.dtype) {
  case coop_pb::INT64: return t.ptr<int64_t>()[off];
  case coop_pb::INT32: return t.ptr<int32_t>()[off];
  default: return t.ptr<uint8_t>()[off];
  }
}
inline float *outf(const Tensor &t) { return t.ptr<float>(); }

//===----------------------------------------------------------------------===//
// Prepare helpers
//===----------------------------------------------------------------------===//

std::string shapeText(const Tensor &t) {
  std::string text = "[";
  for (int d = 0; d < t.rank; ++d)
    text += (d ? "," : "") + std::to_string(t.shape[d]);
  return text + "]";
}

bool sameShape(const Tensor &a, const Tensor &b) {
  return a.rank == b.rank && std::equal(a.shape, a.shape + a.rank, b.shape);
}

/// Counts, float32 everywhere except where `allow` says otherwise.
std::string expect(const Signature &sig, int outputs, bool floatOutputs = true) {
  if (sig.call.numOutputs != outputs)
    return "has " + std::to_string(sig.call.numOutputs) + " outputs, expected " +
           std::to_string(outputs);
  if (floatOutputs)
    for (int o = 0; o < outputs; ++o)
      if (sig.outputs[o].dtype != coop_pb::FLOAT32)
        return "output #" + std::to_string(o) + " is " + dtypeName(sig.outputs[o].dtype) +
               "; the CPU kernel computes float32";
  return "";
}

std::string needTensor(const Signature &sig, int p, const char *name,
                       coop_pb::DType dtype = coop_pb::FLOAT32) {
  const Tensor *t = sig.call.tensor(p);
  if (!t)
    return std::string("has no tensor argument '") + name + "'";
  if (dtype != coop_pb::DTYPE_UNSPECIFIED && t->dtype != dtype)
    return std::string("tensor argument '") + name + "' is " + dtypeName(t->dtype) +
           ", expected " + dtypeName(dtype);
  return "";
}

bool broadcastsTo(const Tensor &in, const Tensor &out) {
  if (in.rank > out.rank)
    return false;
  for (int d = 0; d < in.rank; ++d) {
    int64_t a = in.shape[d], b = out.shape[d + out.rank - in.rank];
    if (a != 1 && a != b)
      return false;
  }
  return true;
}

#define TRY(expr)                                                              \
  do {                                                                         \
    std::string error_ = (expr);                                               \
    if (!error_.empty())                                                       \
      return error_;                                                           \
  } while (0)

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

/// An element of a float32, bool or int64 operand, as float32 (what
/// prepareElementwise accepts).
float asFloat(const Tensor &t, int64_t off) {
  if (t.dtype == coop_pb::INT64)
    return static_cast<float>(t.ptr<int64_t>()[off]);
  return t.dtype == coop_pb::BOOL ? static_cast<float>(t.ptr<uint8_t>()[off]) : ldf(t, off);
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
// Fills, copies, random
//===----------------------------------------------------------------------===//

std::string prepareFill(const Signature &sig) {
  if (sig.call.numOutputs != 1)
    return "has " + std::to_string(sig.call.numOutputs) + " outputs, expected 1";
  int64_t w = elementSize(sig.outputs[0].dtype);
  if (w != 1 && w != 4 && w != 8)
    return std::string("cannot fill ") + dtypeName(sig.outputs[0].dtype);
  return "";
}

void fill(const Tensor &out, double value) {
  int64_t n = out.numel();
  switch (out.dtype) {
  case coop_pb::FLOAT32: std::fill_n(out.ptr<float>(), n, static_cast<float>(value)); break;
  case coop_pb::FLOAT64: std::fill_n(out.ptr<double>(), n, value); break;
  case coop_pb::INT64: std::fill_n(out.ptr<int64_t>(), n, static_cast<int64_t>(value)); break;
  case coop_pb::INT32: std::fill_n(out.ptr<int32_t>(), n, static_cast<int32_t>(value)); break;
  default: std::fill_n(out.ptr<uint8_t>(), n, static_cast<uint8_t>(value != 0)); break;
  }
}

// empty/empty_like are zero-filled: a deterministic run reads no garbage.
void runZeros(const Call &c) { fill(c.out(0), 0); }
void runOnes(const Call &c) { fill(c.out(0), 1); }
void runFull(const Call &c) { fill(c.out(0), c.f("fill_value")); }

std::string prepareCopy(const Signature &sig) {
  if (sig.call.numOutputs != 1 || sig.call.numInputs != 1)
    return "takes one input and one output";
  if (sig.inputs[0].dtype != sig.outputs[0].dtype ||
      sig.inputs[0].numel() != sig.outputs[0].numel())
    return "copies " + shapeText(sig.inputs[0]) + " " + dtypeName(sig.inputs[0].dtype) +
           " into " + shapeText(sig.outputs[0]) + " " + dtypeName(sig.outputs[0].dtype);
  // A view or reshape's `size` (one dimension may be -1) is its output's shape.
  int64_t size[kMaxRank];
  int n = sig.call.ints("size", size, kMaxRank);
  const Tensor &out = sig.outputs[0];
  bool same = n < 0 || n == out.rank;
  for (int d = 0; same && d < n; ++d)
    same = size[d] == out.shape[d] || size[d] == -1;
  if (!same) {
    std::string text = "[";
    for (int d = 0; d < n && d < kMaxRank; ++d)
      text += (d ? "," : "") + std::to_string(size[d]);
    return "size " + text + (n > kMaxRank ? ",...]" : "]") + " is not the output's shape " +
           shapeText(out);
  }
  return "";
}

void runCopy(const Call &c) { copyTensor(c.out(0), c.inputs[0]); }

std::string prepareBernoulli(const Signature &sig) {
  TRY(expect(sig, 1));
  if (!sig.call.has("p"))
    return "has no float 'p'";
  return "";
}

void runBernoulli(const Call &c) {
  const Tensor &out = c.out(0);
  double p = c.f("p", 0.5);
  uint64_t key = streamKey(c.rngSeed);
  float *o = outf(out);
  for (int64_t i = 0, n = out.numel(); i < n; ++i)
    o[i] = uniform(key, c.rngOffset + i) < p ? 1.f : 0.f;
}

std::string prepareNativeDropout(const Signature &sig) {
  if (sig.call.numOutputs != 2)
    return "has " + std::to_string(sig.call.numOutputs) + " outputs, expected 2";
  TRY(needTensor(sig, 0, "input"));
  if (sig.outputs[0].dtype != coop_pb::FLOAT32 || sig.outputs[1].dtype != coop_pb::BOOL)
    return "outputs are not (float32, bool)";
  if (!sameShape(sig.outputs[0], *sig.call.tensor(0)) ||
      !sameShape(sig.outputs[1], *sig.call.tensor(0)))
    return "outputs do not have the input's shape";
  return "";
}

// native_dropout(input, p, train): keep element i when
// uniform(seed, offset + i) < 1 - p, scaled by 1 / (1 - p).
void runNativeDropout(const Call &c) {
  const Tensor &in = *c.tensor(0), &out = c.out(0), &mask = c.out(1);
  double p = c.b("train", true) ? c.f("p") : 0;
  float scale = p < 1 ? static_cast<float>(1 / (1 - p)) : 0.f;
  uint64_t key = streamKey(c.rngSeed);
  Walk w(out);
  int ia = w.add(in);
  float *o = outf(out);
  uint8_t *m = mask.ptr<uint8_t>();
  for (int64_t i = 0, n = out.numel(); i < n; ++i, w.next()) {
    bool keep = uniform(key, c.rngOffset + i) < 1 - p;
    m[i] = keep;
    o[i] = keep ? ldf(in, w.off[ia]) * scale : 0.f;
  }
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// Which dimensions of `in` the reduction folds (all when 'dim' is absent
/// or empty).
int reducedDims(const Call &c, const Tensor &in, bool *reduced) {
  int64_t dims[kMaxRank];
  int n = c.ints("dim", dims, kMaxRank);
  std::fill(reduced, reduced + kMaxRank, n <= 0);
  for (int k = 0; k < n; ++k)
    reduced[normDim(dims[k], in.rank)] = true;
  return n;
}

std::string prepareReduce(const Signature &sig) {
  TRY(expect(sig, 1, /*floatOutputs=*/false));
  const Tensor *self = sig.call.tensor(0);
  if (!self)
    return "has no tensor argument 'self'";
  const Tensor &in = *self;
  const coop_pb::DType outType = sig.outputs[0].dtype;
  // Float sums (and means) of float32, bool or int64; integer sums of bool
  // or int64 (a count of mask elements, as amax's backward takes).
  const bool integerSum = outType == coop_pb::INT64 && *sig.kernel != "aten.mean" &&
                          *sig.kernel != "aten.mean.dim" && in.dtype != coop_pb::FLOAT32;
  if (outType != coop_pb::FLOAT32 && !integerSum)
    return std::string("output is ") + dtypeName(outType) + " for a " + dtypeName(in.dtype) +
           " input; expected float32, or int64 summing bool or int64";
  if (in.dtype != coop_pb::FLOAT32 && in.dtype != coop_pb::BOOL && in.dtype != coop_pb::INT64)
    return std::string("self is ") + dtypeName(in.dtype) + ", expected float32, bool or int64";
  int64_t dims[kMaxRank];
  int n = sig.call.ints("dim", dims, kMaxRank);
  if (n > kMaxRank)
    return "reduces too many dimensions";
  for (int k = 0; k < n; ++k)
    if (dims[k] < -std::max(in.rank, 1) || dims[k] >= std::max(in.rank, 1))
      return "dimension " + std::to_string(dims[k]) + " is out of range";
  bool reduced[kMaxRank];
  reducedDims(sig.call, in, reduced);
  int64_t kept = 1;
  for (int d = 0; d < in.rank; ++d)
    kept *= reduced[d] ? 1 : in.shape[d];
  if (kept != sig.outputs[0].numel())
    return "output " + shapeText(sig.outputs[0]) + " does not match the reduction of " +
           shapeText(in);
  return "";
}

void reduce(const Call &c, bool mean) {
  const Tensor &in = *c.tensor(0), &out = c.out(0);
  bool reduced[kMaxRank];
  reducedDims(c, in, reduced);
  Tensor keptT = in, redT = in;
  int64_t count = 1;
  for (int d = 0; d < in.rank; ++d) {
    (reduced[d] ? keptT : redT).shape[d] = 1;
    if (reduced[d])
      count *= in.shape[d];
  }
  Walk outer(keptT);
  int io = outer.add(in);
  for (int64_t i = 0, n = out.numel(); i < n; ++i, outer.next()) {
    Walk inner(redT);
    int ii = inner.add(in);
    if (out.dtype == coop_pb::INT64) {
      int64_t sum = 0;
      for (int64_t k = 0; k < count; ++k, inner.next()) {
        const int64_t off = outer.off[io] + inner.off[ii];
        sum += in.dtype == coop_pb::BOOL ? in.ptr<uint8_t>()[off] : in.ptr<int64_t>()[off];
      }
      out.ptr<int64_t>()[i] = sum;
      continue;
    }
    double sum = 0;
    for (int64_t k = 0; k < count; ++k, inner.next())
      sum += asFloat(in, outer.off[io] + inner.off[ii]);
    outf(out)[i] = static_cast<float>(mean ? sum / count : sum);
  }
}
void runSum(const Call &c) { reduce(c, false); }
void runMean(const Call &c) { reduce(c, true); }

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

// mm(self, mat2), bmm(self, mat2), addmm(self, mat1, mat2): out = beta * self
// + alpha * mat1 @ mat2.
template <int Kind> std::string prepareMatmul(const Signature &sig) {
  TRY(expect(sig, 1));
  int first = Kind == 2 ? 1 : 0, rank = Kind == 1 ? 3 : 2;
  TRY(needTensor(sig, first, Kind == 2 ? "mat1" : "self"));
  TRY(needTensor(sig, first + 1, "mat2"));
  const Tensor &a = *sig.call.tensor(first), &b = *sig.call.tensor(first + 1);
  const Tensor &out = sig.outputs[0];
  if (a.rank != rank || b.rank != rank || out.rank != rank)
    return "operands are not all rank " + std::to_string(rank);
  int m = rank - 2;
  bool ok = a.shape[m + 1] == b.shape[m] && out.shape[m] == a.shape[m] &&
            out.shape[m + 1] == b.shape[m + 1] &&
            (rank == 2 || (a.shape[0] == b.shape[0] && out.shape[0] == a.shape[0]));
  if (!ok)
    return "shapes " + shapeText(a) + " x " + shapeText(b) + " -> " + shapeText(out) +
           " do not multiply";
  if (Kind == 2) {
    TRY(needTensor(sig, 0, "self"));
    if (!broadcastsTo(*sig.call.tensor(0), out))
      return "self " + shapeText(*sig.call.tensor(0)) + " does not broadcast to " +
             shapeText(out);
  }
  return "";
}

void matmul(const Tensor &a, const Tensor &b, const Tensor &out, int64_t batch,
            const Tensor *bias, double beta, double alpha) {
  int r = a.rank - 2;
  int64_t M = a.shape[r], K = a.shape[r + 1], N = b.shape[r + 1];
  const float *A = a.ptr<float>(), *B = b.ptr<float>();
  int64_t as0 = a.strides[r], as1 = a.strides[r + 1], bs0 = b.strides[r], bs1 = b.strides[r + 1];
  int64_t ab = r ? a.strides[0] : 0, bb = r ? b.strides[0] : 0;
  Walk w(out);
  int ib = bias ? w.add(*bias) : 0;
  float *o = outf(out);
  for (int64_t t = 0; t < batch; ++t)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j, w.next()) {
        double sum = 0;
        const float *ar = A + t * ab + i * as0, *bc = B + t * bb + j * bs1;
        for (int64_t k = 0; k < K; ++k)
          sum += double(ar[k * as1]) * bc[k * bs0];
        double value = alpha * sum;
        if (bias)
          value += beta * ldf(*bias, w.off[ib]);
        o[(t * M + i) * N + j] = static_cast<float>(value);
      }
}

void runMm(const Call &c) { matmul(*c.tensor(0), *c.tensor(1), c.out(0), 1, nullptr, 0, 1); }
void runBmm(const Call &c) {
  matmul(*c.tensor(0), *c.tensor(1), c.out(0), c.tensor(0)->shape[0], nullptr, 0, 1);
}
void runAddmm(const Call &c) {
  matmul(*c.tensor(1), *c.tensor(2), c.out(0), 1, c.tensor(0), c.f("beta", 1), c.f("alpha", 1));
}

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

// nll_loss_forward(self [N, C] or [C], target, weight?, reduction, ignore_index)
std::string prepareNll(const Signature &sig, int selfParam, int targetParam, int outputs) {
  TRY(expect(sig, outputs));
  TRY(needTensor(sig, selfParam, "self"));
  TRY(needTensor(sig, targetParam, "target", coop_pb::INT64));
  const Tensor &self = *sig.call.tensor(selfParam), &target = *sig.call.tensor(targetParam);
  if (self.rank < 1 || self.rank > 2 || target.numel() != (self.rank == 2 ? self.shape[0] : 1))
    return "self " + shapeText(self) + " and target " + shapeText(target) + " do not match";
  int64_t reduction = sig.call.i("reduction", 1);
  if (reduction != 1 && reduction != 2)
    return "reduction " + std::to_string(reduction) + " is not implemented (mean or sum)";
  return "";
}

std::string prepareNllForward(const Signature &sig) {
  TRY(prepareNll(sig, 0, 1, 2));
  if (sig.call.tensor(2))
    return "class weights are not implemented";
  return "";
}
std::string prepareNllBackward(const Signature &sig) {
  TRY(prepareNll(sig, 1, 2, 1));
  if (sig.call.tensor(3))
    return "class weights are not implemented";
  TRY(needTensor(sig, 0, "grad_output"));
  TRY(needTensor(sig, 4, "total_weight"));
  return "";
}

void runNllForward(const Call &c) {
  const Tensor &self = *c.tensor(0), &target = *c.tensor(1);
  int64_t ignore = c.i("ignore_index", -100);
  int64_t N = self.rank == 2 ? self.shape[0] : 1, C = self.shape[self.rank - 1];
  int64_t cs = self.strides[self.rank - 1], ns = self.rank == 2 ? self.strides[0] : 0;
  double sum = 0, count = 0;
  for (int64_t n = 0; n < N; ++n) {
    int64_t t = ldi(target, target.rank ? n * target.strides[0] : 0);
    if (t == ignore || t < 0 || t >= C)
      continue;
    sum -= ldf(self, n * ns + t * cs);
    count += 1;
  }
  bool mean = c.i("reduction", 1) == 1;
  outf(c.out(0))[0] = static_cast<float>(mean ? sum / count : sum);
  outf(c.out(1))[0] = static_cast<float>(count);
}

void runNllBackward(const Call &c) {
  const Tensor &g = *c.tensor(0), &self = *c.tensor(1), &target = *c.tensor(2),
               &total = *c.tensor(4), &out = c.out(0);
  int64_t ignore = c.i("ignore_index", -100);
  int64_t N = self.rank == 2 ? self.shape[0] : 1, C = self.shape[self.rank - 1];
  float *o = outf(out);
  std::fill_n(o, out.numel(), 0.f);
  float scale = ldf(g, 0);
  if (c.i("reduction", 1) == 1)
    scale /= ldf(total, 0);
  for (int64_t n = 0; n < N; ++n) {
    int64_t t = ldi(target, target.rank ? n * target.strides[0] : 0);
    if (t != ignore && t >= 0 && t < C)
      o[n * C + t] = -scale;
  }
}

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

std::string prepareMaskedBackward(const Signature &sig) {
  int64_t mask[3] = {1, 1, 1};
  int n = sig.call.ints("output_mask", mask, 3);
  int expected = n < 0 ? 3 : int(mask[0] != 0) + int(mask[1] != 0) + int(mask[2] != 0);
  return expect(sig, expected);
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
float at1(const Tensor *t, int64_t i, float fallback) {
  return t ? *reinterpret_cast<float *>(t->at(i)) : fallback;
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

float ld4(const Tensor &t, int64_t a, int64_t b, int64_t c, int64_t d) {
  return t.ptr<float>()[a * t.strides[0] + b * t.strides[1] + c * t.strides[2] +
                        d * t.strides[3]];
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

void runTransposedConvolution(const Call &c) {
  const Tensor x = convolutionAs2d(*c.tensor(0)), w = convolutionAs2d(*c.tensor(1));
  const Tensor out = convolutionAs2d(c.out(0));
  const Tensor *bias = c.tensor(2);
  Conv2d g = transposedGeometry(c, x, w, out);
  int64_t cpg = g.C / g.groups, kpg = g.K / g.groups;
  float *o = outf(out);
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t k = 0; k < g.K; ++k) {
      int64_t group = k / kpg, kk = k % kpg;
      for (int64_t oh = 0; oh < g.OH; ++oh)
        for (int64_t ow = 0; ow < g.OW; ++ow) {
          double sum = bias ? at1(bias, k, 0) : 0;
          for (int64_t ci = 0; ci < cpg; ++ci)
            for (int64_t r = 0; r < g.R; ++r) {
              int64_t ih = transposedSource(oh, r, g.sh, g.ph, g.dh, g.H);
              if (ih < 0)
                continue;
              for (int64_t s = 0; s < g.S; ++s) {
                int64_t iw = transposedSource(ow, s, g.sw, g.pw, g.dw, g.W);
                if (iw < 0)
                  continue;
                int64_t ch = group * cpg + ci;
                sum += double(ld4(x, n, ch, ih, iw)) * ld4(w, ch, kk, r, s);
              }
            }
          o[((n * g.K + k) * g.OH + oh) * g.OW + ow] = static_cast<float>(sum);
        }
    }
}

void runTransposedConvolutionBackward(const Call &c) {
  const Tensor go = convolutionAs2d(*c.tensor(0)), x = convolutionAs2d(*c.tensor(1)),
               w = convolutionAs2d(*c.tensor(2));
  Conv2d g = transposedGeometry(c, x, w, go);
  int64_t cpg = g.C / g.groups, kpg = g.K / g.groups;
  int outs[3];
  maskedOutputs(c, outs);
  if (outs[0] >= 0) { // an ordinary convolution of grad_output
    float *dx = outf(c.out(outs[0]));
    for (int64_t n = 0; n < g.N; ++n)
      for (int64_t ch = 0; ch < g.C; ++ch) {
        int64_t group = ch / cpg;
        for (int64_t ih = 0; ih < g.H; ++ih)
          for (int64_t iw = 0; iw < g.W; ++iw) {
            double sum = 0;
            for (int64_t kk = 0; kk < kpg; ++kk)
              for (int64_t r = 0; r < g.R; ++r) {
                int64_t oh = ih * g.sh - g.ph + r * g.dh;
                if (oh < 0 || oh >= g.OH)
                  continue;
                for (int64_t s = 0; s < g.S; ++s) {
                  int64_t ow = iw * g.sw - g.pw + s * g.dw;
                  if (ow < 0 || ow >= g.OW)
                    continue;
                  sum += double(ld4(go, n, group * kpg + kk, oh, ow)) * ld4(w, ch, kk, r, s);
                }
              }
            dx[((n * g.C + ch) * g.H + ih) * g.W + iw] = static_cast<float>(sum);
          }
      }
  }
  if (outs[1] >= 0) {
    float *dw = outf(c.out(outs[1]));
    for (int64_t ch = 0; ch < g.C; ++ch) {
      int64_t group = ch / cpg;
      for (int64_t kk = 0; kk < kpg; ++kk)
        for (int64_t r = 0; r < g.R; ++r)
          for (int64_t s = 0; s < g.S; ++s) {
            double sum = 0;
            for (int64_t n = 0; n < g.N; ++n)
              for (int64_t ih = 0; ih < g.H; ++ih) {
                int64_t oh = ih * g.sh - g.ph + r * g.dh;
                if (oh < 0 || oh >= g.OH)
                  continue;
                for (int64_t iw = 0; iw < g.W; ++iw) {
                  int64_t ow = iw * g.sw - g.pw + s * g.dw;
                  if (ow < 0 || ow >= g.OW)
                    continue;
                  sum += double(ld4(x, n, ch, ih, iw)) * ld4(go, n, group * kpg + kk, oh, ow);
                }
              }
            dw[((ch * kpg + kk) * g.R + r) * g.S + s] = static_cast<float>(sum);
          }
    }
  }
  if (outs[2] >= 0)
    writeBiasGradient(go, g, outf(c.out(outs[2])));
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
  if (c.b("transposed"))
    return runTransposedConvolution(c);
  const Tensor x = convolutionAs2d(*c.tensor(0)), w = convolutionAs2d(*c.tensor(1));
  const Tensor out = convolutionAs2d(c.out(0));
  const Tensor *bias = c.tensor(2);
  Conv2d g = convGeometry(c, x, w, out);
  int64_t cpg = g.C / g.groups, kpg = g.K / g.groups;
  float *o = outf(out);
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t k = 0; k < g.K; ++k) {
      int64_t group = k / kpg;
      for (int64_t oh = 0; oh < g.OH; ++oh)
        for (int64_t ow = 0; ow < g.OW; ++ow) {
          double sum = bias ? at1(bias, k, 0) : 0;
          for (int64_t ci = 0; ci < cpg; ++ci)
            for (int64_t r = 0; r < g.R; ++r) {
              int64_t ih = oh * g.sh - g.ph + r * g.dh;
              if (ih < 0 || ih >= g.H)
                continue;
              for (int64_t s = 0; s < g.S; ++s) {
                int64_t iw = ow * g.sw - g.pw + s * g.dw;
                if (iw < 0 || iw >= g.W)
                  continue;
                sum += double(ld4(x, n, group * cpg + ci, ih, iw)) * ld4(w, k, ci, r, s);
              }
            }
          o[((n * g.K + k) * g.OH + oh) * g.OW + ow] = static_cast<float>(sum);
        }
    }
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

void runConvolutionBackward(const Call &c) {
  if (c.b("transposed"))
    return runTransposedConvolutionBackward(c);
  const Tensor go = convolutionAs2d(*c.tensor(0)), x = convolutionAs2d(*c.tensor(1)),
               w = convolutionAs2d(*c.tensor(2));
  Conv2d g = convGeometry(c, x, w, go);
  int64_t cpg = g.C / g.groups, kpg = g.K / g.groups;
  int outs[3];
  maskedOutputs(c, outs);
  if (outs[0] >= 0) {
    float *dx = outf(c.out(outs[0]));
    for (int64_t n = 0; n < g.N; ++n)
      for (int64_t ch = 0; ch < g.C; ++ch) {
        int64_t group = ch / cpg, ci = ch % cpg;
        for (int64_t ih = 0; ih < g.H; ++ih)
          for (int64_t iw = 0; iw < g.W; ++iw) {
            double sum = 0;
            for (int64_t kk = 0; kk < kpg; ++kk) {
              int64_t k = group * kpg + kk;
              for (int64_t r = 0; r < g.R; ++r) {
                int64_t th = ih + g.ph - r * g.dh;
                if (th < 0 || th % g.sh || th / g.sh >= g.OH)
                  continue;
                for (int64_t s = 0; s < g.S; ++s) {
                  int64_t tw = iw + g.pw - s * g.dw;
                  if (tw < 0 || tw % g.sw || tw / g.sw >= g.OW)
                    continue;
                  sum += double(ld4(go, n, k, th / g.sh, tw / g.sw)) * ld4(w, k, ci, r, s);
                }
              }
            }
            dx[((n * g.C + ch) * g.H + ih) * g.W + iw] = static_cast<float>(sum);
          }
      }
  }
  if (outs[1] >= 0) {
    float *dw = outf(c.out(outs[1]));
    for (int64_t k = 0; k < g.K; ++k) {
      int64_t group = k / kpg;
      for (int64_t ci = 0; ci < cpg; ++ci)
        for (int64_t r = 0; r < g.R; ++r)
          for (int64_t s = 0; s < g.S; ++s) {
            double sum = 0;
            for (int64_t n = 0; n < g.N; ++n)
              for (int64_t oh = 0; oh < g.OH; ++oh) {
                int64_t ih = oh * g.sh - g.ph + r * g.dh;
                if (ih < 0 || ih >= g.H)
                  continue;
                for (int64_t ow = 0; ow < g.OW; ++ow) {
                  int64_t iw = ow * g.sw - g.pw + s * g.dw;
                  if (iw < 0 || iw >= g.W)
                    continue;
                  sum += double(ld4(go, n, k, oh, ow)) * ld4(x, n, group * cpg + ci, ih, iw);
                }
              }
            dw[((k * cpg + ci) * g.R + r) * g.S + s] = static_cast<float>(sum);
          }
    }
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
// Embedding
//===----------------------------------------------------------------------===//

// embedding(weight [V, D], indices, padding_idx, scale_grad_by_freq, sparse)
std::string prepareEmbedding(const Signature &sig) {
  TRY(expect(sig, 1));
  TRY(needTensor(sig, 0, "weight"));
  TRY(needTensor(sig, 1, "indices", coop_pb::INT64));
  const Tensor &w = *sig.call.tensor(0), &ind = *sig.call.tensor(1);
  if (w.rank != 2 || sig.outputs[0].numel() != ind.numel() * w.shape[1])
    return "weight " + shapeText(w) + " and indices " + shapeText(ind) + " do not give " +
           shapeText(sig.outputs[0]);
  return "";
}

void runEmbedding(const Call &c) {
  const Tensor &w = *c.tensor(0), &ind = *c.tensor(1);
  int64_t V = w.shape[0], D = w.shape[1];
  float *o = outf(c.out(0));
  for (int64_t i = 0, n = ind.numel(); i < n; ++i) {
    int64_t row = *reinterpret_cast<int64_t *>(ind.at(i));
    for (int64_t d = 0; d < D; ++d)
      o[i * D + d] = row >= 0 && row < V ? w.ptr<float>()[row * w.strides[0] + d * w.strides[1]]
                                         : 0.f;
  }
}

// embedding_dense_backward(grad_output, indices, num_weights, padding_idx,
// scale_grad_by_freq)
std::string prepareEmbeddingBackward(const Signature &sig) {
  TRY(expect(sig, 1));
  TRY(needTensor(sig, 0, "grad_output"));
  TRY(needTensor(sig, 1, "indices", coop_pb::INT64));
  if (sig.call.b("scale_grad_by_freq"))
    return "scale_grad_by_freq is not implemented";
  const Tensor &out = sig.outputs[0];
  if (out.rank != 2 || out.shape[0] != sig.call.i("num_weights") ||
      sig.call.tensor(0)->numel() != sig.call.tensor(1)->numel() * out.shape[1])
    return "output " + shapeText(out) + " does not match num_weights and grad_output";
  return "";
}

void runEmbeddingBackward(const Call &c) {
  const Tensor &g = *c.tensor(0), &ind = *c.tensor(1), &out = c.out(0);
  int64_t V = out.shape[0], D = out.shape[1], pad = c.i("padding_idx", -1);
  float *o = outf(out);
  std::fill_n(o, out.numel(), 0.f);
  for (int64_t i = 0, n = ind.numel(); i < n; ++i) {
    int64_t row = *reinterpret_cast<int64_t *>(ind.at(i));
    if (row < 0 || row >= V || row == pad)
      continue;
    for (int64_t d = 0; d < D; ++d)
      o[row * D + d] += *reinterpret_cast<float *>(g.at(i * D + d));
  }
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
// Joining, splitting and scattering back (copies between strided views)
//===----------------------------------------------------------------------===//

/// Copies `src` element by element into the strided view `dst` of the
/// same shape.
void copyStrided(const Tensor &dst, const Tensor &src) {
  int64_t width = elementSize(src.dtype), n = src.numel();
  Walk w(src);
  int is = w.add(src), id = w.add(dst);
  for (int64_t i = 0; i < n; ++i, w.next())
    std::memcpy(dst.data + w.off[id] * width, src.data + w.off[is] * width, width);
}

// cat(Tensor[] tensors, dim) and stack(Tensor[] tensors, dim).
template <bool Stack> std::string prepareJoin(const Signature &sig) {
  if (sig.call.numOutputs != 1)
    return "has " + std::to_string(sig.call.numOutputs) + " outputs, expected 1";
  const Tensor *ins[kMaxOperands];
  int n = listInputs(sig.call, "tensors", ins);
  if (n == 0)
    return "has no tensors to join";
  const Tensor &out = sig.outputs[0];
  int dim = normDim(sig.call.i("dim", 0), Stack ? out.rank : out.rank);
  if (dim < 0 || dim >= out.rank)
    return "dim " + std::to_string(sig.call.i("dim", 0)) + " is outside output " +
           shapeText(out);
  int64_t total = 0;
  for (int k = 0; k < n; ++k) {
    const Tensor &t = *ins[k];
    if (t.dtype != out.dtype)
      return "input #" + std::to_string(k) + " is " + dtypeName(t.dtype) + ", output " +
             dtypeName(out.dtype);
    if (t.rank + (Stack ? 1 : 0) != out.rank)
      return "input #" + std::to_string(k) + " " + shapeText(t) + " does not join into " +
             shapeText(out);
    for (int d = 0, e = 0; d < out.rank; ++d) {
      if (d == dim) {
        total += Stack ? 1 : t.shape[e];
        e += Stack ? 0 : 1;
        continue;
      }
      if (t.shape[e++] != out.shape[d])
        return "input #" + std::to_string(k) + " " + shapeText(t) + " does not join into " +
               shapeText(out) + " along dim " + std::to_string(dim);
    }
  }
  if (total != out.shape[dim])
    return "inputs add up to " + std::to_string(total) + " along dim " + std::to_string(dim) +
           ", output " + shapeText(out);
  return "";
}

template <bool Stack> void runJoin(const Call &c) { forEachJoinPiece<Stack>(c, copyStrided); }

// split.Tensor / unsafe_split.Tensor(self, split_size, dim) and
// split_with_sizes: every output is a contiguous copy of its piece.
std::string prepareSplit(const Signature &sig) {
  TRY(needTensor(sig, 0, "self", coop_pb::DTYPE_UNSPECIFIED));
  const Tensor &self = *sig.call.tensor(0);
  int dim = normDim(sig.call.i("dim", 0), self.rank);
  if (dim < 0 || dim >= self.rank)
    return "dim is outside self " + shapeText(self);
  int64_t total = 0;
  for (int o = 0; o < sig.call.numOutputs; ++o) {
    const Tensor &out = sig.outputs[o];
    if (out.dtype != self.dtype || out.rank != self.rank)
      return "output #" + std::to_string(o) + " " + shapeText(out) +
             " is not a piece of self " + shapeText(self);
    for (int d = 0; d < self.rank; ++d)
      if (d != dim && out.shape[d] != self.shape[d])
        return "output #" + std::to_string(o) + " " + shapeText(out) +
               " is not a piece of self " + shapeText(self);
    total += out.shape[dim];
  }
  if (total != self.shape[dim])
    return "outputs cover " + std::to_string(total) + " of self's " +
           std::to_string(self.shape[dim]) + " along dim " + std::to_string(dim);
  return "";
}

void runSplit(const Call &c) {
  const Tensor &self = *c.tensor(0);
  int dim = normDim(c.i("dim", 0), self.rank);
  int64_t at = 0;
  for (int o = 0; o < c.numOutputs; ++o) {
    const Tensor &out = c.out(o);
    copyTensor(out, narrowed(self, dim, at, out.shape[dim]));
    at += out.shape[dim];
  }
}

/// slice_backward(grad_output, input_sizes, dim, start, end, step) and
/// select_backward(grad_output, input_sizes, dim, index): zeros of
/// input_sizes with grad_output written into the window.
template <bool Select> std::string prepareScatterBack(const Signature &sig) {
  TRY(expect(sig, 1));
  TRY(needTensor(sig, 0, "grad_output"));
  const Tensor &g = *sig.call.tensor(0), &out = sig.outputs[0];
  int64_t sizes[kMaxRank];
  int rank = sig.call.ints("input_sizes", sizes, kMaxRank);
  if (rank != out.rank || !std::equal(sizes, sizes + rank, out.shape))
    return "input_sizes do not match output " + shapeText(out);
  int dim = normDim(sig.call.i("dim", 0), out.rank);
  if (dim < 0 || dim >= out.rank)
    return "dim is outside output " + shapeText(out);
  if (Select) {
    int64_t index = sig.call.i("index", 0);
    if (index < -out.shape[dim] || index >= out.shape[dim])
      return "index " + std::to_string(index) + " is outside dim " + std::to_string(dim) +
             " of " + shapeText(out);
    if (g.rank + 1 != out.rank)
      return "grad_output " + shapeText(g) + " is not a selection of " + shapeText(out);
    for (int d = 0, e = 0; d < out.rank; ++d)
      if (d != dim && g.shape[e++] != out.shape[d])
        return "grad_output " + shapeText(g) + " is not a selection of " + shapeText(out);
    return "";
  }
  if (sig.call.i("step", 1) < 1)
    return "step must be positive";
  SliceWindow w = sliceWindow(sig.call, out.shape[dim]);
  if (g.rank != out.rank)
    return "grad_output " + shapeText(g) + " is not a slice of " + shapeText(out);
  for (int d = 0; d < out.rank; ++d)
    if (g.shape[d] != (d == dim ? w.count : out.shape[d]))
      return "grad_output " + shapeText(g) + " is not the slice of " + shapeText(out);
  return "";
}

template <bool Select> void runScatterBack(const Call &c) {
  const Tensor &g = *c.tensor(0);
  Tensor out = contiguousLike(c.out(0));
  std::fill_n(outf(out), out.numel(), 0.f);
  int dim = normDim(c.i("dim", 0), out.rank);
  if (Select) {
    int64_t index = c.i("index", 0);
    copyStrided(selected(out, dim, index < 0 ? index + out.shape[dim] : index), g);
    return;
  }
  SliceWindow w = sliceWindow(c, out.shape[dim]);
  copyStrided(narrowed(out, dim, w.start, w.count, w.step), g);
}

//===----------------------------------------------------------------------===//
// Per-pixel loss: nll_loss2d (self [N, C, H, W], target [N, H, W])
//===----------------------------------------------------------------------===//

std::string prepareNll2d(const Signature &sig, int selfParam, int targetParam, int outputs) {
  TRY(expect(sig, outputs));
  TRY(needTensor(sig, selfParam, "self"));
  TRY(needTensor(sig, targetParam, "target", coop_pb::INT64));
  const Tensor &self = *sig.call.tensor(selfParam), &target = *sig.call.tensor(targetParam);
  if (self.rank != 4 || target.rank != 3 || target.shape[0] != self.shape[0] ||
      target.shape[1] != self.shape[2] || target.shape[2] != self.shape[3])
    return "self " + shapeText(self) + " and target " + shapeText(target) +
           " are not [N, C, H, W] and [N, H, W]";
  int64_t reduction = sig.call.i("reduction", 1);
  if (reduction != 1 && reduction != 2)
    return "reduction " + std::to_string(reduction) + " is not implemented (mean or sum)";
  return "";
}

std::string prepareNll2dForward(const Signature &sig) {
  TRY(prepareNll2d(sig, 0, 1, 2));
  if (sig.call.tensor(2))
    return "class weights are not implemented";
  return "";
}
std::string prepareNll2dBackward(const Signature &sig) {
  TRY(prepareNll2d(sig, 1, 2, 1));
  if (sig.call.tensor(3))
    return "class weights are not implemented";
  TRY(needTensor(sig, 0, "grad_output"));
  TRY(needTensor(sig, 4, "total_weight"));
  return "";
}

void runNll2dForward(const Call &c) {
  const Tensor &self = *c.tensor(0), &target = *c.tensor(1);
  int64_t ignore = c.i("ignore_index", -100);
  int64_t N = self.shape[0], C = self.shape[1], H = self.shape[2], W = self.shape[3];
  double sum = 0, count = 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t w = 0; w < W; ++w) {
        int64_t t = ldi(target, n * target.strides[0] + h * target.strides[1] +
                                    w * target.strides[2]);
        if (t == ignore || t < 0 || t >= C)
          continue;
        sum -= ld4(self, n, t, h, w);
        count += 1;
      }
  bool mean = c.i("reduction", 1) == 1;
  outf(c.out(0))[0] = static_cast<float>(mean ? sum / count : sum);
  outf(c.out(1))[0] = static_cast<float>(count);
}

void runNll2dBackward(const Call &c) {
  const Tensor &g = *c.tensor(0), &self = *c.tensor(1), &target = *c.tensor(2),
               &total = *c.tensor(4), &out = c.out(0);
  int64_t ignore = c.i("ignore_index", -100);
  int64_t N = self.shape[0], C = self.shape[1], H = self.shape[2], W = self.shape[3];
  float *o = outf(out);
  std::fill_n(o, out.numel(), 0.f);
  float scale = ldf(g, 0);
  if (c.i("reduction", 1) == 1)
    scale /= ldf(total, 0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t w = 0; w < W; ++w) {
        int64_t t = ldi(target, n * target.strides[0] + h * target.strides[1] +
                                    w * target.strides[2]);
        if (t != ignore && t >= 0 && t < C)
          o[((n * C + t) * H + h) * W + w] = -scale;
      }
}

//===----------------------------------------------------------------------===//
// The registry
//===----------------------------------------------------------------------===//

const std::vector<KernelDef> &registry() {
  static const std::vector<KernelDef> kernels = [] {
    std::vector<KernelDef> k;
    auto add = [&](const char *name, std::vector<std::string> params, const char *args,
                   PrepareFn prepare, RunFn run) {
      k.push_back({name, std::move(params), args, prepare, run});
    };
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
    // Fills: the *_like and new_* ones read only their input's shape.
    for (const char *name : {"aten.zeros_like", "aten.empty_like"})
      add(name, {"self"}, "", prepareFill, runZeros);
    for (const char *name : {"aten.new_zeros", "aten.new_empty"})
      add(name, {"self"}, "size:ints[0,)", prepareFill, runZeros);
    add("aten.ones_like", {"self"}, "", prepareFill, runOnes);
    add("aten.full_like", {"self"}, "fill_value:scalar", prepareFill, runFull);
    for (const char *name : {"aten.zeros", "aten.empty.memory_format"})
      add(name, {}, "size:ints[0,)", prepareFill, runZeros);
    add("aten.ones", {}, "size:ints[0,)", prepareFill, runOnes);
    add("aten.full", {}, "size:ints[0,) fill_value:scalar", prepareFill, runFull);
    // Copies in logical order.
    for (const char *name :
         {"coop.copy", "aten.clone", "aten.contiguous", "aten.alias", "aten.detach"})
      add(name, {"self"}, "", prepareCopy, runCopy);
    for (const char *name : {"aten._unsafe_view", "aten.view", "aten.reshape"})
      add(name, {"self"}, "size:ints? stride:ints?", prepareCopy, runCopy);
    // Random.
    add("aten.bernoulli_.float", {"self"}, "p:float[0,1] rng", prepareBernoulli, runBernoulli);
    add("aten.native_dropout", {"input"},
        "p:float[0,1] train:bool? rng", prepareNativeDropout, runNativeDropout);
    // Reductions.
    add("aten.sum.dim_IntList", {"self"}, "dim:ints? keepdim:bool?", prepareReduce, runSum);
    add("aten.sum", {"self"}, "", prepareReduce, runSum);
    add("aten.mean.dim", {"self"}, "dim:ints? keepdim:bool?", prepareReduce, runMean);
    add("aten.mean", {"self"}, "", prepareReduce, runMean);
    // Linear algebra.
    add("aten.mm", {"self", "mat2"}, "", prepareMatmul<0>, runMm);
    add("aten.bmm", {"self", "mat2"}, "", prepareMatmul<1>, runBmm);
    add("aten.addmm", {"self", "mat1", "mat2"},
        "beta:scalar? alpha:scalar?", prepareMatmul<2>, runAddmm);
    // Softmax and loss.
    add("aten._softmax", {"self"}, "dim:int half_to_float:bool?", prepareSoftmax, runSoftmax);
    add("aten._log_softmax", {"self"},
        "dim:int half_to_float:bool?", prepareSoftmax, runLogSoftmax);
    add("aten._softmax_backward_data", {"grad_output", "output"}, "dim:int input_dtype:any?", prepareSoftmax,
        runSoftmaxBackward);
    add("aten._log_softmax_backward_data", {"grad_output", "output"}, "dim:int input_dtype:any?", prepareSoftmax,
        runLogSoftmaxBackward);
    add("aten.nll_loss_forward", {"self", "target", "weight?"},
        "reduction:int[0,2] ignore_index:int", prepareNllForward,
        runNllForward);
    add("aten.nll_loss_backward",
        {"grad_output", "self", "target", "weight?", "total_weight"},
         "reduction:int[0,2] ignore_index:int", prepareNllBackward,
        runNllBackward);
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
    // Recurrent nets.
    for (const char *name : {"aten.sigmoid", "aten.sigmoid_"})
      add(name, {"self"}, "", prepareElementwise<1>, runSigmoid);
    for (const char *name : {"aten.tanh", "aten.tanh_"})
      add(name, {"self"}, "", prepareElementwise<1>, runTanh);
    add("aten.sigmoid_backward", {"grad_output", "output"}, "", prepareElementwise<2>,
        runSigmoidBackward);
    add("aten.tanh_backward", {"grad_output", "output"}, "", prepareElementwise<2>,
        runTanhBackward);
    // Joining, splitting, scattering gradients back.
    add("aten.cat", {"tensors[]"}, "dim:int?", prepareJoin<false>, runJoin<false>);
    add("aten.stack", {"tensors[]"}, "dim:int?", prepareJoin<true>, runJoin<true>);
    for (const char *name : {"aten.split.Tensor", "aten.unsafe_split.Tensor",
                             "aten.split_with_sizes", "aten.unsafe_split_with_sizes"})
      add(name, {"self"}, "split_size:int[1,)? split_sizes:ints[0,)? dim:int?", prepareSplit,
          runSplit);
    add("aten.select_backward", {"grad_output"},
        "input_sizes:ints[0,) dim:int index:int", prepareScatterBack<true>,
        runScatterBack<true>);
    add("aten.slice_backward", {"grad_output"},
        "input_sizes:ints[0,) dim:int start:int? end:int? step:int[1,)", prepareScatterBack<false>,
        runScatterBack<false>);
    add("aten.nll_loss2d_forward", {"self", "target", "weight?"},
        "reduction:int[0,2] ignore_index:int", prepareNll2dForward,
        runNll2dForward);
    add("aten.nll_loss2d_backward",
        {"grad_output", "self", "target", "weight?", "total_weight"},
         "reduction:int[0,2] ignore_index:int", prepareNll2dBackward,
        runNll2dBackward);
    // Convolution (also transposed), pooling, embedding.
    add("aten.convolution", {"input", "weight", "bias?"},
        "stride:ints[1,) padding:ints[0,) dilation:ints[1,) transposed:bool "
        "output_padding:ints[0,) groups:int[1,)",
        prepareConvolution, runConvolution);
    add("aten.convolution_backward", {"grad_output", "input", "weight"},
        "stride:ints[1,) padding:ints[0,) dilation:ints[1,) transposed:bool "
        "output_padding:ints[0,) groups:int[1,) bias_sizes:any? output_mask:any?",
        prepareConvolutionBackward, runConvolutionBackward);
    add("aten.max_pool2d_with_indices", {"self"},
        "kernel_size:ints[1,) stride:ints[1,)? padding:ints[0,)? dilation:ints[1,)? "
        "ceil_mode:bool?",
        prepareMaxPool, runMaxPool);
    add("aten.max_pool2d_with_indices_backward", {"grad_output", "self", "indices"},
        "kernel_size:ints[1,) stride:ints[1,)? padding:ints[0,)? dilation:ints[1,)? "
        "ceil_mode:bool?",
        prepareMaxPoolBackward, runMaxPoolBackward);
    add("aten.embedding", {"weight", "indices"},
        "padding_idx:int? scale_grad_by_freq:bool? sparse:bool?", prepareEmbedding, runEmbedding);
    add("aten.embedding_dense_backward", {"grad_output", "indices"},
        "num_weights:int[0,) padding_idx:int? scale_grad_by_freq:bool?", prepareEmbeddingBackward,
        runEmbeddingBackward);
    // The rest of the zoo's kernels (CpuKernelsMore.cpp).
    for (auto more : {moreCpuKernels, mathCpuKernels, indexingCpuKernels})
      for (KernelDef &kernel : more())
        k.push_back(std::move(kernel));
    return k;
  }();
  return kernels;
}

class CpuBackend : public Backend {
public:
  ~CpuBackend() override { std::free(arena); }
  char *allocateArena(int64_t bytes, std::string &error) override {
    if (arena) {
      error = "the CPU backend holds an arena already";
      return nullptr;
    }
    size_t rounded = (static_cast<size_t>(bytes) + 63) / 64 * 64;
    arena = static_cast<char *>(std::aligned_alloc(64, rounded));
    if (!arena) {
      error = "cannot allocate an arena of " + std::to_string(bytes) + " bytes";
      return nullptr;
    }
    ++count;
    std::memset(arena, 0, rounded);
    return arena;
  }
  int64_t allocations() const override { return count; }
  void upload(char *device, const void *host, size_t bytes) override {
    std::memcpy(device, host, bytes);
  }
  void download(void *host, const char *device, size_t bytes) const override {
    std::memcpy(host, device, bytes);
  }
  void launch(const KernelDef &kernel, const Call &call, const int *inplace) override {
    for (int o = 0; o < call.numOutputs; ++o) {
      int k = inplace[o];
      if (k >= 0 && call.inputs[k].data != call.outputs[o].data)
        copyTensor(call.outputs[o], call.inputs[k]); // copy on write
    }
    kernel.run(call);
  }

private:
  char *arena = nullptr;
  int64_t count = 0;
};

} // namespace

void copyTensor(const Tensor &dst, const Tensor &src) {
  int64_t width = elementSize(src.dtype), n = src.numel();
  if (src.contiguous()) {
    std::memmove(dst.data, src.data, static_cast<size_t>(n * width));
    return;
  }
  Walk w(src);
  int is = w.add(src);
  for (int64_t i = 0; i < n; ++i, w.next())
    std::memcpy(dst.data + i * width, src.data + w.off[is] * width, width);
}

const KernelDef *findKernel(const std::string &name) {
  std::string base = name;
  size_t first = name.find('.');
  size_t second = first == std::string::npos ? first : name.find('.', first + 1);
  if (second != std::string::npos)
    base = name.substr(0, second);
  for (const std::string &candidate : {name, base})
    for (const KernelDef &kernel : registry())
      if (candidate == kernel.name)
        return &kernel;
  return nullptr;
}

std::vector<std::string> kernelNames() {
  std::vector<std::string> names;
  for (const KernelDef &kernel : registry())
    names.push_back(kernel.name);
  return names;
}

std::unique_ptr<Backend> createCpuBackend() { return std::make_unique<CpuBackend>(); }

} // namespace coop::rt
