//===- CpuKernelsIndexing.cpp - CPU kernels: gathering, scattering, selection, conversions and losses ===//
//
// Kernels that read or write by an index tensor, under the contract of
// CpuKernels.h: embedding and its dense backward, index.Tensor and
// index_put (the zoo's GPT and Swin); and those of models outside the zoo
// (Hugging Face transformers, detection and segmentation heads,
// classification losses): dtype conversions (_to_copy; scalar_tensor and
// where are in CpuKernelsMath.cpp);
// gather, scatter, scatter_add, index_select, index_add (the backwards of
// gather and index_select) and flip; cumsum; max and min over a dimension
// and their arg variants (torch 1.13 differentiates them through zeros and
// scatter); binary cross entropy with logits and smooth L1 loss (the
// former's backward is decomposed by torch 1.13). Element copies move any
// dtype; arithmetic runs in float32 where ATen's CPU kernels do, sums and
// cumulative sums in double in a fixed order. Inputs may be strided,
// outputs are contiguous; an in-place variant runs in its output, which
// holds self. An index out of range, which ATen rejects when it runs,
// reads zeros and writes nothing here, as `run` cannot fail. CUDA:
// CudaKernelsIndexing.cu (embedding, index, index_put).
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace coop::rt {
namespace {

using namespace cpu;
using coop_pb::DType;

/// "[5,3] float32", for messages.
std::string describe(const Tensor &t) {
  std::string text;
  for (int d = 0; d < t.rank; ++d)
    text += (d ? "," : "[") + std::to_string(t.shape[d]);
  return (t.rank ? text : "[") + "] " + dtypeName(t.dtype);
}

bool convertible(DType dtype) {
  return dtype == coop_pb::FLOAT32 || dtype == coop_pb::INT64 || dtype == coop_pb::BOOL;
}

/// `outputs` outputs and the schema tensor parameters `names` present
/// (in order; nullptr entries are optional ones).
std::string launch(const Signature &sig, int outputs, std::initializer_list<const char *> names) {
  if (sig.call.numOutputs != outputs)
    return "has " + std::to_string(sig.call.numOutputs) + " outputs, expected " +
           std::to_string(outputs);
  int p = 0;
  for (const char *name : names) {
    if (name && !sig.call.tensor(p))
      return std::string("has no tensor argument '") + name + "'";
    ++p;
  }
  return "";
}

/// The same shape and dtype.
std::string matches(const Tensor &t, const char *what, const Tensor &like, const char *likeWhat) {
  if (sameShape(t, like) && t.dtype == like.dtype)
    return "";
  return std::string(what) + " " + describe(t) + " differs from " + likeWhat + " " +
         describe(like);
}

/// Whether `from` broadcasts to `to` (right-aligned, size-1 dimensions
/// repeat).
bool broadcasts(const Tensor &from, const Tensor &to) {
  if (from.rank > to.rank)
    return false;
  for (int d = 0; d < from.rank; ++d)
    if (from.shape[d] != 1 && from.shape[d] != to.shape[d + to.rank - from.rank])
      return false;
  return true;
}

/// Dimension `dim` of a rank-`rank` tensor, counted from the end when
/// negative; -1 when out of range.
int dimension(int64_t dim, int rank) {
  int64_t d = dim < 0 ? dim + rank : dim;
  return d >= 0 && d < rank ? static_cast<int>(d) : -1;
}

/// Visits the row-major indices of a shape in order.
struct Odometer {
  const Tensor &shape;
  int64_t idx[kMaxRank] = {};
  void next() {
    for (int d = shape.rank - 1; d >= 0 && ++idx[d] == shape.shape[d]; --d)
      idx[d] = 0;
  }
};

/// The element of `t` at `idx`, an index into a tensor of rank `rank` that
/// t broadcasts to, but at position `pos` along t's dimension `dim` when
/// dim >= 0.
char *elementAt(const Tensor &t, const int64_t *idx, int rank, int dim = -1, int64_t pos = 0) {
  int64_t offset = 0;
  for (int d = 0, lead = rank - t.rank; d < t.rank; ++d)
    offset += (d == dim ? pos : t.shape[d] == 1 ? 0 : idx[d + lead]) * t.strides[d];
  return t.data + offset * elementSize(t.dtype);
}

template <typename T> T load(const char *p) {
  T value;
  std::memcpy(&value, p, sizeof value);
  return value;
}

/// The element `from` (of dtype `type`) converted to To as ATen casts:
/// float to integer truncates, anything nonzero is true.
template <typename To> To convertedFrom(const char *from, DType type) {
  switch (type) {
  case coop_pb::FLOAT32: return static_cast<To>(load<float>(from));
  case coop_pb::INT64: return static_cast<To>(load<int64_t>(from));
  default: return static_cast<To>(load<bool>(from));
  }
}

template <typename To> void storeAs(char *to, To value) { std::memcpy(to, &value, sizeof value); }

void convert(char *to, DType toType, const char *from, DType fromType) {
  switch (toType) {
  case coop_pb::FLOAT32: storeAs(to, convertedFrom<float>(from, fromType)); break;
  case coop_pb::INT64: storeAs(to, convertedFrom<int64_t>(from, fromType)); break;
  default: storeAs(to, convertedFrom<bool>(from, fromType)); break;
  }
}

/// The scalar argument `name` (int, float or bool) stored at `to`.
void storeScalar(char *to, DType type, const Call &c, std::string_view name) {
  bool integral = c.arg(name)->kind_case() != coop_pb::Value::kFloatValue;
  switch (type) {
  case coop_pb::FLOAT32: storeAs(to, static_cast<float>(c.f(name))); break;
  case coop_pb::INT64:
    storeAs(to, integral ? c.i(name) : static_cast<int64_t>(c.f(name)));
    break;
  default: storeAs(to, c.f(name) != 0); break;
  }
}

//===----------------------------------------------------------------------===//
// Conversions: _to_copy(self, dtype, ...) converts between float32, int64
// and bool.
//===----------------------------------------------------------------------===//

std::string prepareToCopy(const Signature &sig) {
  TRY(launch(sig, 1, {"self"}));
  const Tensor &self = *sig.call.tensor(0), &out = sig.outputs[0];
  if (!sameShape(self, out))
    return "self " + describe(self) + " and output " + describe(out) + " differ";
  if (!convertible(self.dtype) || !convertible(out.dtype))
    return std::string("converting ") + dtypeName(self.dtype) + " to " + dtypeName(out.dtype) +
           " is not implemented";
  std::string_view dtype = sig.call.s("dtype");
  if (!dtype.empty() && dtype != dtypeName(out.dtype))
    return "dtype " + std::string(dtype) + " is not the output's " + dtypeName(out.dtype);
  return "";
}

void runToCopy(const Call &c) {
  const Tensor &self = *c.tensor(0), &out = c.out(0);
  int64_t width = elementSize(out.dtype);
  for (int64_t k = 0, n = out.numel(); k < n; ++k)
    convert(out.data + k * width, out.dtype, self.at(k), self.dtype);
}

//===----------------------------------------------------------------------===//
// Along a dimension, by an int64 index: gather(self, dim, index) reads
// out[i] = self[i with index[i] along dim]; scatter.src/.value(self, dim,
// index, src/value) and scatter_add(self, dim, index, src) write (or add)
// src[i] into self[i with index[i] along dim], in index order;
// index_select(self, dim, index) takes the slices index[j] along dim, and
// index_add(self, dim, index, source, alpha) adds alpha * source's slice j
// to self's slice index[j], in order. The index of gather and scatter has
// self's rank and fits self (and src) off `dim`.
//===----------------------------------------------------------------------===//

/// The dimension argument `dim` of a launch on `self`, or -1.
int dimOf(const Call &c, const Tensor &self) {
  return dimension(c.i("dim", 0), std::max(self.rank, 1));
}

/// The position an index element names along a dimension of `size`,
/// negative counting from the end; -1 when out of range.
int64_t positionAt(const char *element, int64_t size) {
  int64_t pos = load<int64_t>(element);
  pos += pos < 0 ? size : 0;
  return pos >= 0 && pos < size ? pos : -1;
}

/// Checks a gather or scatter index against self (and src), which it must
/// fit off `dim`.
std::string checkAlongIndex(const Signature &sig, const Tensor &self, const Tensor &index,
                            const Tensor *src) {
  TRY(dtypeIs(index, "index", coop_pb::INT64));
  int dim = dimOf(sig.call, self);
  if (dim < 0 || self.rank == 0)
    return "dim " + std::to_string(sig.call.i("dim", 0)) + " is out of range for self " +
           describe(self);
  if (index.rank != self.rank || (src && src->rank != self.rank))
    return "index " + describe(index) + " and self " + describe(self) + " ranks differ";
  for (int d = 0; d < index.rank; ++d)
    if ((d != dim && index.shape[d] > self.shape[d]) || (src && index.shape[d] > src->shape[d]))
      return "index " + describe(index) + " does not fit self " + describe(self) +
             (src ? " and src " + describe(*src) : std::string());
  return "";
}

std::string prepareGather(const Signature &sig) {
  TRY(launch(sig, 1, {"self", "index"}));
  const Tensor &self = *sig.call.tensor(0), &index = *sig.call.tensor(1);
  const Tensor &out = sig.outputs[0];
  if (!sameShape(index, out) || out.dtype != self.dtype)
    return "output " + describe(out) + " is not self's dtype in the shape of index " +
           describe(index);
  return checkAlongIndex(sig, self, index, nullptr);
}

/// out[i] = self[i, but at position indexOf(i) along dim], zero where that
/// is out of range.
template <typename IndexOf> void selectAlong(const Call &c, IndexOf indexOf) {
  const Tensor &self = *c.tensor(0), &out = c.out(0);
  int dim = dimOf(c, self);
  int64_t width = elementSize(out.dtype);
  Odometer o{out};
  for (char *to = out.data, *end = to + out.numel() * width; to != end; to += width, o.next()) {
    int64_t pos = positionAt(indexOf(o.idx), self.shape[dim]);
    if (pos < 0)
      std::memset(to, 0, width);
    else
      std::memcpy(to, elementAt(self, o.idx, self.rank, dim, pos), width);
  }
}

void runGather(const Call &c) {
  const Tensor &index = *c.tensor(1);
  selectAlong(c, [&](const int64_t *idx) { return elementAt(index, idx, index.rank); });
}

enum class Scatter { Src, Value, Add };

template <Scatter Kind> std::string prepareScatter(const Signature &sig) {
  bool fromTensor = Kind != Scatter::Value;
  TRY(launch(sig, 1, {"self", "index", fromTensor ? "src" : nullptr}));
  const Tensor &self = *sig.call.tensor(0), *src = sig.call.tensor(2);
  TRY(matches(sig.outputs[0], "the output", self, "self"));
  if (Kind == Scatter::Add)
    TRY(dtypeIs(self, "self", coop_pb::FLOAT32));
  else if (!convertible(self.dtype))
    return std::string("self is ") + dtypeName(self.dtype) + ", expected float32, int64 or bool";
  if (fromTensor && src->dtype != self.dtype)
    return std::string("src is ") + dtypeName(src->dtype) + ", self " + dtypeName(self.dtype);
  if (!fromTensor && !sig.call.has("value"))
    return "has no scalar 'value'";
  if (sig.call.has("reduce"))
    return "scatter with a reduction is not implemented";
  return checkAlongIndex(sig, self, *sig.call.tensor(1), fromTensor ? src : nullptr);
}

/// For each element i of `along` (scatter's index, index_add's source),
/// out's element at i, but at position indexOf(i) along `dim`, goes to
/// write(to, i); positions out of range are skipped. out starts as self.
template <typename IndexOf, typename Write>
void scatterAlong(const Call &c, const Tensor &along, IndexOf indexOf, Write write) {
  const Tensor &self = *c.tensor(0), &out = c.out(0);
  if (out.data != self.data)
    copyTensor(out, self);
  int dim = dimOf(c, self);
  Odometer o{along};
  for (int64_t k = 0, n = along.numel(); k < n; ++k, o.next())
    if (int64_t pos = positionAt(indexOf(o.idx), out.shape[dim]); pos >= 0)
      write(elementAt(out, o.idx, out.rank, dim, pos), o.idx);
}

template <Scatter Kind> void runScatter(const Call &c) {
  const Tensor &index = *c.tensor(1), &out = c.out(0);
  int64_t width = elementSize(out.dtype);
  char value[sizeof(int64_t)];
  if (Kind == Scatter::Value)
    storeScalar(value, out.dtype, c, "value");
  auto indexOf = [&](const int64_t *idx) { return elementAt(index, idx, index.rank); };
  scatterAlong(c, index, indexOf, [&](char *to, const int64_t *idx) {
    const char *from = Kind == Scatter::Value ? value : elementAt(*c.tensor(2), idx, out.rank);
    if (Kind == Scatter::Add)
      storeAs(to, load<float>(to) + load<float>(from));
    else
      std::memcpy(to, from, width);
  });
}

/// Checks a 1-D (or 0-dim) index along `dim` against self and `sliced`:
/// self with index.numel() slices along dim.
std::string checkSlicesIndex(const Signature &sig, const Tensor &self, const Tensor &index,
                             const Tensor &sliced, const char *what) {
  TRY(dtypeIs(index, "index", coop_pb::INT64));
  if (index.rank > 1)
    return "index " + describe(index) + " is not a vector";
  int dim = dimOf(sig.call, self);
  if (dim < 0 || self.rank == 0)
    return "dim " + std::to_string(sig.call.i("dim", 0)) + " is out of range for self " +
           describe(self);
  bool ok = sliced.rank == self.rank && sliced.dtype == self.dtype;
  for (int d = 0; d < self.rank && ok; ++d)
    ok = sliced.shape[d] == (d == dim ? index.numel() : self.shape[d]);
  if (!ok)
    return std::string(what) + " " + describe(sliced) + " is not self " + describe(self) +
           " with the " + std::to_string(index.numel()) + " slices of the index along dim " +
           std::to_string(dim);
  return "";
}

std::string prepareIndexSelect(const Signature &sig) {
  TRY(launch(sig, 1, {"self", "index"}));
  return checkSlicesIndex(sig, *sig.call.tensor(0), *sig.call.tensor(1), sig.outputs[0],
                          "the output");
}

void runIndexSelect(const Call &c) {
  const Tensor &index = *c.tensor(1);
  int dim = dimOf(c, *c.tensor(0));
  selectAlong(c, [&](const int64_t *idx) { return index.at(idx[dim]); });
}

std::string prepareIndexAdd(const Signature &sig) {
  TRY(launch(sig, 1, {"self", "index", "source"}));
  const Tensor &self = *sig.call.tensor(0);
  TRY(matches(sig.outputs[0], "the output", self, "self"));
  TRY(dtypeIs(self, "self", coop_pb::FLOAT32));
  return checkSlicesIndex(sig, self, *sig.call.tensor(1), *sig.call.tensor(2), "source");
}

void runIndexAdd(const Call &c) {
  const Tensor &index = *c.tensor(1), &source = *c.tensor(2);
  int dim = dimOf(c, *c.tensor(0));
  auto alpha = static_cast<float>(c.f("alpha", 1));
  scatterAlong(c, source, [&](const int64_t *idx) { return index.at(idx[dim]); },
               [&](char *to, const int64_t *idx) {
                 storeAs(to, load<float>(to) + alpha * load<float>(elementAt(source, idx,
                                                                             source.rank)));
               });
}

// flip(self, dims): out[i] = self[i reversed along each of dims].
std::string prepareFlip(const Signature &sig) {
  TRY(launch(sig, 1, {"self"}));
  const Tensor &self = *sig.call.tensor(0);
  TRY(matches(sig.outputs[0], "the output", self, "self"));
  int64_t dims[kMaxRank];
  int n = sig.call.ints("dims", dims, kMaxRank);
  if (n < 0 || n > kMaxRank)
    return "has no list 'dims'";
  for (int k = 0; k < n; ++k)
    if (dimension(dims[k], self.rank) < 0)
      return "dimension " + std::to_string(dims[k]) + " is out of range for " + describe(self);
  return "";
}

void runFlip(const Call &c) {
  const Tensor &self = *c.tensor(0), &out = c.out(0);
  int64_t dims[kMaxRank];
  bool flipped[kMaxRank] = {};
  for (int k = 0, n = c.ints("dims", dims, kMaxRank); k < n; ++k)
    flipped[dimension(dims[k], self.rank)] = true;
  int64_t width = elementSize(out.dtype);
  Odometer o{out};
  for (int64_t k = 0, n = out.numel(); k < n; ++k, o.next()) {
    int64_t offset = 0;
    for (int d = 0; d < self.rank; ++d)
      offset += (flipped[d] ? self.shape[d] - 1 - o.idx[d] : o.idx[d]) * self.strides[d];
    std::memcpy(out.data + k * width, self.data + offset * width, width);
  }
}

//===----------------------------------------------------------------------===//
// Along one dimension: cumsum(self, dim, dtype) (float32, or int64 from
// int64 and bool; its backward is flip, cumsum, flip), summed in double as
// ATen's CPU kernel; max.dim and min.dim(self, dim, keepdim) -> values,
// int64 indices, and argmax and argmin(self, dim, keepdim), over every
// element when dim is None. As ATen, the first extreme wins a tie and the
// first NaN wins over any number.
//===----------------------------------------------------------------------===//

/// A tensor seen as [outer, length, inner] around one dimension.
struct Axis {
  int64_t outer = 1, length = 1, inner = 1;
  int64_t at(int64_t o, int64_t j, int64_t i) const { return (o * length + j) * inner + i; }
};

/// Around dimension `dim` of t, or, when dim < 0, t as one row.
Axis axisOf(const Tensor &t, int dim) {
  Axis axis;
  if (dim < 0) {
    axis.length = t.numel();
    return axis;
  }
  for (int d = 0; d < t.rank; ++d)
    (d < dim ? axis.outer : d == dim ? axis.length : axis.inner) *= t.shape[d];
  return axis;
}

std::string prepareCumsum(const Signature &sig) {
  TRY(launch(sig, 1, {"self"}));
  const Tensor &self = *sig.call.tensor(0), &out = sig.outputs[0];
  if (!sameShape(self, out))
    return "self " + describe(self) + " and output " + describe(out) + " differ";
  bool summable = out.dtype == coop_pb::FLOAT32 ? self.dtype == coop_pb::FLOAT32
                                                : out.dtype == coop_pb::INT64 &&
                                                      self.dtype != coop_pb::FLOAT32 &&
                                                      convertible(self.dtype);
  if (!summable)
    return std::string("summing ") + dtypeName(self.dtype) + " into " + dtypeName(out.dtype) +
           " is not implemented";
  std::string_view dtype = sig.call.s("dtype");
  if (!dtype.empty() && dtype != dtypeName(out.dtype))
    return "dtype " + std::string(dtype) + " is not the output's " + dtypeName(out.dtype);
  if (dimOf(sig.call, self) < 0)
    return "dim " + std::to_string(sig.call.i("dim", 0)) + " is out of range for self " +
           describe(self);
  return "";
}

template <typename Sum, typename T> void cumulativeSum(const Tensor &self, Axis axis, T *out) {
  for (int64_t o = 0; o < axis.outer; ++o)
    for (int64_t i = 0; i < axis.inner; ++i) {
      Sum sum = 0;
      for (int64_t j = 0; j < axis.length; ++j) {
        sum += convertedFrom<Sum>(self.at(axis.at(o, j, i)), self.dtype);
        out[axis.at(o, j, i)] = static_cast<T>(sum);
      }
    }
}

void runCumsum(const Call &c) {
  const Tensor &self = *c.tensor(0), &out = c.out(0);
  Axis axis = axisOf(self, self.rank ? dimOf(c, self) : -1);
  if (out.dtype == coop_pb::FLOAT32)
    cumulativeSum<double>(self, axis, out.ptr<float>());
  else
    cumulativeSum<int64_t>(self, axis, out.ptr<int64_t>());
}

/// The reduced dimension of max.dim or argmax, -1 for all of them (argmax
/// with dim None).
int reducedDim(const Call &c, const Tensor &self) {
  return c.has("dim") && self.rank ? dimOf(c, self) : -1;
}

/// max.dim and min.dim (WithValues) or argmax and argmin.
template <bool WithValues> std::string prepareExtreme(const Signature &sig) {
  TRY(launch(sig, WithValues ? 2 : 1, {"self"}));
  const Tensor &self = *sig.call.tensor(0), &indices = sig.outputs[WithValues ? 1 : 0];
  if (self.dtype != coop_pb::FLOAT32 && self.dtype != coop_pb::INT64)
    return std::string("self is ") + dtypeName(self.dtype) + ", expected float32 or int64";
  TRY(dtypeIs(indices, "the indices output", coop_pb::INT64));
  if (WithValues)
    TRY(dtypeIs(sig.outputs[0], "the values output", self.dtype));
  if (WithValues && !sameShape(sig.outputs[0], indices))
    return "values " + describe(sig.outputs[0]) + " and indices " + describe(indices) +
           " differ";
  if ((WithValues || sig.call.has("dim")) && dimOf(sig.call, self) < 0)
    return "dim " + std::to_string(sig.call.i("dim", 0)) + " is out of range for self " +
           describe(self);
  int dim = reducedDim(sig.call, self);
  if (self.numel() == 0)
    return "cannot reduce the empty self " + describe(self);
  bool keepdim = sig.call.b("keepdim");
  Tensor reduced = self;
  reduced.rank = 0;
  for (int d = 0; d < self.rank; ++d)
    if (keepdim || (dim >= 0 && d != dim))
      reduced.shape[reduced.rank++] = dim < 0 || d == dim ? 1 : self.shape[d];
  if (!sameShape(reduced, indices))
    return "indices " + describe(indices) + " are not self " + describe(self) +
           " reduced along dim " + std::to_string(dim);
  return "";
}

/// Each row's extreme (Max or min) along the axis: its value (unless
/// values is nullptr) and index.
template <bool Max, typename T>
void extremes(const Tensor &self, Axis axis, T *values, int64_t *indices) {
  for (int64_t o = 0; o < axis.outer; ++o)
    for (int64_t i = 0; i < axis.inner; ++i) {
      T best = load<T>(self.at(axis.at(o, 0, i)));
      int64_t at = 0;
      for (int64_t j = 0; j < axis.length; ++j) {
        T v = load<T>(self.at(axis.at(o, j, i)));
        if (!(Max ? v <= best : v >= best)) { // a NaN is never <= or >=
          best = v;
          at = j;
          if (v != v)
            break;
        }
      }
      if (values)
        values[o * axis.inner + i] = best;
      indices[o * axis.inner + i] = at;
    }
}

template <bool Max, bool WithValues> void runExtreme(const Call &c) {
  const Tensor &self = *c.tensor(0);
  Axis axis = axisOf(self, reducedDim(c, self));
  int64_t *indices = c.out(WithValues ? 1 : 0).ptr<int64_t>();
  if (self.dtype == coop_pb::FLOAT32)
    extremes<Max>(self, axis, WithValues ? c.out(0).ptr<float>() : nullptr, indices);
  else
    extremes<Max>(self, axis, WithValues ? c.out(0).ptr<int64_t>() : nullptr, indices);
}

//===----------------------------------------------------------------------===//
// Losses of float32 self and target (which broadcasts to self), reduced by
// `reduction` (0 none, 1 mean, 2 sum; summed in double). Elementwise terms
// run in float32 as ATen's CPU kernels.
// binary_cross_entropy_with_logits(self, target, weight?, pos_weight?):
// with m = max(-x, 0) and s = log(exp(-m) + exp(-x - m)), (1 - t) x + m + s,
// or with pos_weight p, (1 - t) x + ((p - 1) t + 1) (s + m); times weight.
// (torch 1.13 decomposes its backward.)
// smooth_l1_loss(self, target, reduction, beta): with z = |x - t|,
// 0.5 z^2 / beta below beta, else z - 0.5 beta; its backward
// (grad_output, self, target, reduction, beta) is norm g clamp((x - t) /
// beta, -1, 1), norm 1 / numel for mean; with beta 0, L1's: sgn(x - t)
// times g (/ numel for mean).
//===----------------------------------------------------------------------===//

float floatAt(const Tensor &t, const int64_t *idx, int rank) {
  return load<float>(elementAt(t, idx, rank));
}

/// Self and target, then the optional float32 tensors `optional`, all
/// broadcasting to self; one output: self's shape for reduction none (or
/// for a backward), else one element.
std::string checkLoss(const Signature &sig, int self, std::initializer_list<int> optional,
                      bool backward) {
  const Tensor &x = *sig.call.tensor(self), &out = sig.outputs[0];
  TRY(dtypeIs(x, "self", coop_pb::FLOAT32));
  TRY(dtypeIs(out, "the output", coop_pb::FLOAT32));
  std::vector<int> operands = {self + 1};
  operands.insert(operands.end(), optional);
  if (backward)
    operands.push_back(0);
  for (int p : operands) {
    const Tensor *t = sig.call.tensor(p);
    if (t && (t->dtype != coop_pb::FLOAT32 || !broadcasts(*t, x)))
      return "operand #" + std::to_string(p) + " " + describe(*t) +
             " is not float32 broadcasting to self " + describe(x);
  }
  int64_t reduction = sig.call.i("reduction", 1);
  if (reduction < 0 || reduction > 2)
    return "reduction " + std::to_string(reduction) + " is not none, mean or sum";
  if (backward || reduction == 0 ? !sameShape(out, x) : out.numel() != 1)
    return "output " + describe(out) + " does not fit self " + describe(x) + " and reduction " +
           std::to_string(reduction);
  return "";
}

/// The loss of each element of self, loss(idx), or their mean or sum.
template <typename Loss> void reduceLoss(const Call &c, Loss loss) {
  const Tensor &self = *c.tensor(0);
  float *out = c.out(0).ptr<float>();
  int64_t reduction = c.i("reduction", 1), n = self.numel();
  double sum = 0;
  Odometer o{self};
  for (int64_t k = 0; k < n; ++k, o.next()) {
    float value = loss(o.idx);
    if (reduction == 0)
      out[k] = value;
    else
      sum += value;
  }
  if (reduction != 0)
    out[0] = static_cast<float>(reduction == 1 ? sum / n : sum);
}

std::string prepareBceWithLogits(const Signature &sig) {
  TRY(launch(sig, 1, {"self", "target", nullptr, nullptr}));
  return checkLoss(sig, 0, {2, 3}, false);
}

void runBceWithLogits(const Call &c) {
  const Tensor &self = *c.tensor(0), &target = *c.tensor(1);
  const Tensor *weight = c.tensor(2), *posWeight = c.tensor(3);
  int rank = self.rank;
  reduceLoss(c, [&](const int64_t *idx) {
    float x = floatAt(self, idx, rank), t = floatAt(target, idx, rank);
    float m = std::max(-x, 0.f);
    float s = std::log(std::exp(-m) + std::exp(-x - m));
    float loss = posWeight ? (1 - t) * x + ((floatAt(*posWeight, idx, rank) - 1) * t + 1) * (s + m)
                           : (1 - t) * x + m + s;
    return weight ? loss * floatAt(*weight, idx, rank) : loss;
  });
}

template <bool Backward> std::string prepareSmoothL1(const Signature &sig) {
  if (Backward)
    TRY(launch(sig, 1, {"grad_output", "self", "target"}));
  else
    TRY(launch(sig, 1, {"self", "target"}));
  if (sig.call.f("beta", 1) < 0)
    return "beta " + std::to_string(sig.call.f("beta", 1)) + " is negative";
  return checkLoss(sig, Backward ? 1 : 0, {}, Backward);
}

void runSmoothL1(const Call &c) {
  const Tensor &self = *c.tensor(0), &target = *c.tensor(1);
  auto beta = static_cast<float>(c.f("beta", 1));
  int rank = self.rank;
  reduceLoss(c, [&](const int64_t *idx) {
    float z = std::abs(floatAt(self, idx, rank) - floatAt(target, idx, rank));
    return z < beta ? 0.5f * z * z / beta : z - 0.5f * beta;
  });
}

void runSmoothL1Backward(const Call &c) {
  const Tensor &grad = *c.tensor(0), &self = *c.tensor(1), &target = *c.tensor(2);
  auto beta = static_cast<float>(c.f("beta", 1));
  bool mean = c.i("reduction", 1) == 1;
  int64_t n = self.numel();
  auto norm = static_cast<float>(mean ? 1.0 / n : 1.0);
  float *out = c.out(0).ptr<float>();
  Odometer o{self};
  for (int64_t k = 0; k < n; ++k, o.next()) {
    float x = floatAt(self, o.idx, self.rank) - floatAt(target, o.idx, self.rank);
    float g = floatAt(grad, o.idx, self.rank);
    if (beta == 0) // L1's backward
      out[k] = static_cast<float>((x > 0) - (x < 0)) * (mean ? g / n : g);
    else
      out[k] = x <= -beta ? -norm * g : x >= beta ? norm * g : norm * x * g / beta;
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
// Indexing by a tensor: index, index_put
//===----------------------------------------------------------------------===//

/// The single index tensor of an `indices` list (index.Tensor, index_put),
/// or nullptr.
const Tensor *indexTensor(const Call &c) {
  const coop_pb::Value *list = c.arg("indices");
  if (!list || list->kind_case() != coop_pb::Value::kList || list->list().items_size() != 1 ||
      list->list().items(0).kind_case() != coop_pb::Value::kOperand)
    return nullptr;
  return &c.inputs[list->list().items(0).operand()];
}

/// Checks self[index] (index int64 over self's first dimension) against
/// `result`: index's shape followed by self's other dimensions.
std::string checkIndexed(const Signature &sig, const Tensor &result, const char *what) {
  const Tensor *self = sig.call.tensor(0), *index = indexTensor(sig.call);
  if (!self)
    return "has no tensor argument 'self'";
  if (!index)
    return "indexing by other than one index tensor is not implemented";
  TRY(dtypeIs(*index, "the index", coop_pb::INT64));
  bool ok = self->rank >= 1 && result.rank == index->rank + self->rank - 1 &&
            std::equal(index->shape, index->shape + index->rank, result.shape) &&
            std::equal(self->shape + 1, self->shape + self->rank, result.shape + index->rank);
  if (!ok)
    return std::string(what) + " " + shapeText(result) + " is not self " + shapeText(*self) +
           " indexed by " + shapeText(*index);
  return "";
}

/// Row of self that index element i selects (negative counts from the
/// end), or -1 when out of range.
int64_t indexedRow(const Tensor &index, int64_t i, int64_t rows) {
  int64_t row = *reinterpret_cast<const int64_t *>(index.at(i));
  row += row < 0 ? rows : 0;
  return row >= 0 && row < rows ? row : -1;
}

// index.Tensor(self, indices=[index]): out[i, ...] = self[index[i], ...];
// an index out of range gives zeros.
std::string prepareIndex(const Signature &sig) {
  if (sig.call.numOutputs != 1)
    return "has " + std::to_string(sig.call.numOutputs) + " outputs, expected 1";
  TRY(checkIndexed(sig, sig.outputs[0], "output"));
  if (sig.call.tensor(0)->dtype != sig.outputs[0].dtype)
    return "self and output dtypes differ";
  return "";
}

void runIndex(const Call &c) {
  const Tensor &self = *c.tensor(0), &index = *indexTensor(c), &out = c.out(0);
  int64_t rows = self.shape[0], inner = rows ? self.numel() / rows : 0;
  int64_t width = elementSize(out.dtype);
  char *o = out.data;
  for (int64_t i = 0, n = index.numel(); i < n; ++i) {
    int64_t row = indexedRow(index, i, rows);
    for (int64_t k = 0; k < inner; ++k, o += width) {
      if (row < 0)
        std::memset(o, 0, width);
      else
        std::memcpy(o, self.at(row * inner + k), width);
    }
  }
}

// index_put(self, indices=[index], values, accumulate): self with
// out[index[i], ...] set to (or, accumulating, increased by) values[i, ...],
// in index order; values broadcast to index's shape and self's other
// dimensions.
std::string prepareIndexPut(const Signature &sig) {
  if (sig.call.numOutputs != 1)
    return "has " + std::to_string(sig.call.numOutputs) + " outputs, expected 1";
  const Tensor *self = sig.call.tensor(0), *values = sig.call.tensor(2);
  if (!self || !values)
    return "has no tensor arguments 'self' and 'values'";
  const Tensor *index = indexTensor(sig.call);
  if (!index)
    return "indexing by other than one index tensor is not implemented";
  TRY(dtypeIs(*index, "the index", coop_pb::INT64));
  if (!sameShape(*self, sig.outputs[0]) || self->dtype != sig.outputs[0].dtype)
    return "self and output differ";
  if (values->dtype != self->dtype || self->dtype != coop_pb::FLOAT32)
    return "self and values must be float32";
  Tensor indexed = *self;
  indexed.rank = index->rank + self->rank - 1;
  if (indexed.rank > kMaxRank || self->rank < 1)
    return "self " + shapeText(*self) + " indexed by " + shapeText(*index) + " has too many dimensions";
  std::copy(self->shape + 1, self->shape + self->rank, indexed.shape + index->rank);
  std::copy(index->shape, index->shape + index->rank, indexed.shape);
  if (!broadcastsTo(*values, indexed))
    return "values " + shapeText(*values) + " do not broadcast to " + shapeText(indexed);
  return "";
}

void runIndexPut(const Call &c) {
  const Tensor &self = *c.tensor(0), &index = *indexTensor(c), &values = *c.tensor(2);
  const Tensor &out = c.out(0);
  if (out.data != self.data)
    copyTensor(out, self);
  bool accumulate = c.b("accumulate");
  int64_t rows = self.shape[0], inner = rows ? self.numel() / rows : 0;
  int rank = index.rank + self.rank - 1;
  Tensor indexed = self;
  indexed.rank = rank;
  std::copy(self.shape + 1, self.shape + self.rank, indexed.shape + index.rank);
  std::copy(index.shape, index.shape + index.rank, indexed.shape);
  int64_t idx[kMaxRank];
  float *o = out.ptr<float>();
  for (int64_t i = 0, n = index.numel(), at = 0; i < n; ++i) {
    int64_t row = indexedRow(index, i, rows);
    for (int64_t k = 0; k < inner; ++k, ++at) {
      if (row < 0)
        continue;
      unflatten(indexed, at, idx);
      float v = *reinterpret_cast<const float *>(broadcastAt(values, idx, rank));
      o[row * inner + k] = accumulate ? o[row * inner + k] + v : v;
    }
  }
}

} // namespace

std::vector<KernelDef> indexingCpuKernels() {
  return {
      {"aten._to_copy", {"self"}, "dtype:any?", prepareToCopy, runToCopy},
      {"aten.gather", {"self", "index"}, "dim:int sparse_grad:bool?", prepareGather, runGather},
      {"aten.scatter.src", {"self", "index", "src"}, "dim:int reduce:str?",
       prepareScatter<Scatter::Src>, runScatter<Scatter::Src>},
      {"aten.scatter_.src", {"self", "index", "src"}, "dim:int reduce:str?",
       prepareScatter<Scatter::Src>, runScatter<Scatter::Src>},
      {"aten.scatter.value", {"self", "index"},
       "dim:int value:scalar reduce:str?", prepareScatter<Scatter::Value>,
       runScatter<Scatter::Value>},
      {"aten.scatter_.value", {"self", "index"},
       "dim:int value:scalar reduce:str?", prepareScatter<Scatter::Value>,
       runScatter<Scatter::Value>},
      {"aten.scatter_add", {"self", "index", "src"}, "dim:int", prepareScatter<Scatter::Add>,
       runScatter<Scatter::Add>},
      {"aten.scatter_add_", {"self", "index", "src"}, "dim:int", prepareScatter<Scatter::Add>,
       runScatter<Scatter::Add>},
      {"aten.index_select", {"self", "index"}, "dim:int", prepareIndexSelect, runIndexSelect},
      {"aten.index_add", {"self", "index", "source"},
       "dim:int alpha:scalar?", prepareIndexAdd, runIndexAdd},
      {"aten.index_add_", {"self", "index", "source"},
       "dim:int alpha:scalar?", prepareIndexAdd, runIndexAdd},
      {"aten.flip", {"self"}, "dims:ints", prepareFlip, runFlip},
      {"aten.cumsum", {"self"}, "dim:int dtype:any?", prepareCumsum, runCumsum},
      {"aten.max.dim", {"self"},
       "dim:int keepdim:bool?", prepareExtreme<true>, runExtreme<true, true>},
      {"aten.min.dim", {"self"},
       "dim:int keepdim:bool?", prepareExtreme<true>, runExtreme<false, true>},
      {"aten.argmax", {"self"},
       "dim:int? keepdim:bool?", prepareExtreme<false>, runExtreme<true, false>},
      {"aten.argmin", {"self"},
       "dim:int? keepdim:bool?", prepareExtreme<false>, runExtreme<false, false>},
      {"aten.binary_cross_entropy_with_logits", {"self", "target", "weight?", "pos_weight?"},
       "reduction:int[0,2]?",
       prepareBceWithLogits, runBceWithLogits},
      {"aten.smooth_l1_loss", {"self", "target"},
       "reduction:int[0,2]? beta:float[0,)?", prepareSmoothL1<false>, runSmoothL1},
      {"aten.smooth_l1_loss_backward", {"grad_output", "self", "target"},
       "reduction:int[0,2] beta:float[0,)",
       prepareSmoothL1<true>, runSmoothL1Backward},
      {"aten.embedding", {"weight", "indices"},
       "padding_idx:int? scale_grad_by_freq:bool? sparse:bool?", prepareEmbedding, runEmbedding},
      {"aten.embedding_dense_backward", {"grad_output", "indices"},
       "num_weights:int[0,) padding_idx:int? scale_grad_by_freq:bool?", prepareEmbeddingBackward,
       runEmbeddingBackward},
      {"aten.index.Tensor", {"self", "indices[]"}, "", prepareIndex, runIndex},
      {"aten.index_put", {"self", "indices[]", "values"},
       "accumulate:bool?", prepareIndexPut, runIndexPut},
      {"aten.index_put_", {"self", "indices[]", "values"},
       "accumulate:bool?", prepareIndexPut, runIndexPut},
  };
}

} // namespace coop::rt
