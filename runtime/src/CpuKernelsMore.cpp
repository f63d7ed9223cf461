//===- CpuKernelsMore.cpp - CPU kernels for the rest of the model zoo -----===//
//
// The kernels the zoo's bigger models emit beyond the core set of
// CpuKernels.cpp: average pooling (Inception, DenseNet), the causal mask
// of GPT (arange, tril, bitwise_not, masked_fill), and Swin's shifted
// windows (roll, constant_pad_nd, relative position index and index_put,
// comparisons, in-place fills and copies); and those of common models
// outside the zoo (hard activations, SiLU, leaky ReLU, ELU, softplus, mish,
// neg, triu, baddbmm, MSE loss, group normalization, adaptive average and
// max pooling, nearest and bilinear upsampling, pixel shuffles, scalar
// fills). Same contract as the core set: `prepare` checks by name and
// shape, `run` neither fails nor allocates, inputs may be strided, outputs
// are contiguous, sums run in double in a fixed order. The registry in
// CpuKernels.cpp appends this table.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace coop::rt {
namespace {

#define CHECK_OK(expr)                                                         \
  do {                                                                         \
    std::string problem_ = (expr);                                             \
    if (!problem_.empty())                                                     \
      return problem_;                                                         \
  } while (0)

std::string dims(const Tensor &t) {
  std::string text = "[";
  for (int d = 0; d < t.rank; ++d)
    text += (d ? "," : "") + std::to_string(t.shape[d]);
  return text + "]";
}

bool shapesEqual(const Tensor &a, const Tensor &b) {
  return a.rank == b.rank && std::equal(a.shape, a.shape + a.rank, b.shape);
}

/// One output and schema parameters 0..inputs-1 present.
std::string operands(const Signature &sig, int inputs) {
  if (sig.call.numOutputs != 1)
    return "has " + std::to_string(sig.call.numOutputs) + " outputs, expected 1";
  for (int p = 0; p < inputs; ++p)
    if (!sig.call.tensor(p))
      return "has no tensor argument #" + std::to_string(p);
  return "";
}

std::string dtypeIs(const Tensor &t, const char *what, coop_pb::DType dtype) {
  if (t.dtype == dtype)
    return "";
  return std::string(what) + " is " + dtypeName(t.dtype) + ", expected " + dtypeName(dtype);
}

/// The logical index of row-major element `linear` of `shape`.
void unflatten(const Tensor &shape, int64_t linear, int64_t *idx) {
  for (int d = shape.rank - 1; d >= 0; --d) {
    idx[d] = shape.shape[d] ? linear % shape.shape[d] : 0;
    linear = shape.shape[d] ? linear / shape.shape[d] : 0;
  }
}

/// The element of `t` at the index `idx` of a tensor of rank `rank` that
/// t broadcasts to (right-aligned, size-1 dimensions repeat).
char *broadcastAt(const Tensor &t, const int64_t *idx, int rank) {
  int64_t off = 0;
  for (int d = 0; d < t.rank; ++d)
    if (t.shape[d] != 1)
      off += idx[d + rank - t.rank] * t.strides[d];
  return t.data + off * elementSize(t.dtype);
}

bool broadcastable(const Tensor &from, const Tensor &to) {
  if (from.rank > to.rank)
    return false;
  for (int d = 0; d < from.rank; ++d) {
    int64_t size = from.shape[d];
    if (size != 1 && size != to.shape[d + to.rank - from.rank])
      return false;
  }
  return true;
}

float floatAt(const Tensor &t, int64_t linear) {
  return *reinterpret_cast<const float *>(t.at(linear));
}

/// A value of a float32, int64 or bool tensor, as double.
double valueAt(const char *p, coop_pb::DType dtype) {
  switch (dtype) {
  case coop_pb::FLOAT32: return *reinterpret_cast<const float *>(p);
  case coop_pb::INT64: return static_cast<double>(*reinterpret_cast<const int64_t *>(p));
  default: return *reinterpret_cast<const uint8_t *>(p);
  }
}

void store(char *p, coop_pb::DType dtype, double value) {
  switch (dtype) {
  case coop_pb::FLOAT32: *reinterpret_cast<float *>(p) = static_cast<float>(value); break;
  case coop_pb::INT64: *reinterpret_cast<int64_t *>(p) = static_cast<int64_t>(value); break;
  default: *reinterpret_cast<uint8_t *>(p) = value != 0; break;
  }
}

bool numeric(coop_pb::DType dtype) {
  return dtype == coop_pb::FLOAT32 || dtype == coop_pb::INT64 || dtype == coop_pb::BOOL;
}

//===----------------------------------------------------------------------===//
// Average pooling: avg_pool2d(self, kernel_size, stride, padding, ceil_mode,
// count_include_pad, divisor_override) and its backward (grad_output, self,
// same arguments). A window starts at o * stride - padding; its divisor is
// divisor_override, else its size clipped to the padded input
// (count_include_pad) or to the input.
//===----------------------------------------------------------------------===//

struct AvgPool {
  int64_t N, C, H, W, OH, OW, kh, kw, sh, sw, ph, pw, divisor;
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
  p.N = in.shape[0]; p.C = in.shape[1]; p.H = in.shape[2]; p.W = in.shape[3];
  p.OH = out.shape[2]; p.OW = out.shape[3];
  p.kh = c.listItem("kernel_size", 0, 1); p.kw = c.listItem("kernel_size", 1, 1);
  p.sh = c.listItem("stride", 0, p.kh); p.sw = c.listItem("stride", 1, p.kw);
  p.ph = c.listItem("padding", 0, 0); p.pw = c.listItem("padding", 1, 0);
  p.divisor = c.has("divisor_override") ? c.i("divisor_override") : 0;
  p.includePad = c.b("count_include_pad", true);
  return p;
}

std::string checkAvgPool(const Call &c, const Tensor &in, const Tensor &out) {
  if (in.rank != 4 || out.rank != 4 || in.shape[0] != out.shape[0] ||
      in.shape[1] != out.shape[1])
    return "only [N, C, H, W] pooling is implemented: " + dims(in) + " -> " + dims(out);
  AvgPool p = avgPool(c, in, out);
  if (p.kh < 1 || p.kw < 1 || p.sh < 1 || p.sw < 1 || p.ph < 0 || p.pw < 0 ||
      2 * p.ph > p.kh || 2 * p.pw > p.kw)
    return "kernel and stride must be positive, padding at most half the kernel";
  if (c.has("divisor_override") && p.divisor == 0)
    return "divisor_override is zero";
  if (p.H + 2 * p.ph < p.kh || p.W + 2 * p.pw < p.kw)
    return "the kernel is larger than the padded input " + dims(in);
  bool ceil = c.b("ceil_mode");
  if (pooledSize(p.H, p.kh, p.sh, p.ph, ceil) != p.OH ||
      pooledSize(p.W, p.kw, p.sw, p.pw, ceil) != p.OW)
    return "output " + dims(out) + " is not the pooling of " + dims(in);
  return "";
}

std::string prepareAvgPool(const Signature &sig) {
  CHECK_OK(operands(sig, 1));
  CHECK_OK(dtypeIs(*sig.call.tensor(0), "self", coop_pb::FLOAT32));
  CHECK_OK(dtypeIs(sig.outputs[0], "the output", coop_pb::FLOAT32));
  return checkAvgPool(sig.call, *sig.call.tensor(0), sig.outputs[0]);
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
  CHECK_OK(operands(sig, 2));
  CHECK_OK(dtypeIs(*sig.call.tensor(0), "grad_output", coop_pb::FLOAT32));
  CHECK_OK(dtypeIs(sig.outputs[0], "the output", coop_pb::FLOAT32));
  if (!shapesEqual(*sig.call.tensor(1), sig.outputs[0]))
    return "output " + dims(sig.outputs[0]) + " differs from self " +
           dims(*sig.call.tensor(1));
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
// Ranges, masks and comparisons
//===----------------------------------------------------------------------===//

// arange(end) / arange.start(start, end) / arange.start_step(start, end,
// step): element i is start + i * step.
std::string prepareArange(const Signature &sig) {
  CHECK_OK(operands(sig, 0));
  const Tensor &out = sig.outputs[0];
  if (out.dtype != coop_pb::INT64 && out.dtype != coop_pb::FLOAT32)
    return std::string("output is ") + dtypeName(out.dtype) + ", expected int64 or float32";
  if (!sig.call.has("end"))
    return "has no 'end'";
  double start = sig.call.f("start", 0), end = sig.call.f("end"), step = sig.call.f("step", 1);
  if (step == 0)
    return "step is zero";
  double count = std::max(0.0, std::ceil((end - start) / step));
  if (out.rank != 1 || out.shape[0] != static_cast<int64_t>(count))
    return "output " + dims(out) + " does not hold arange(" + std::to_string(start) + ", " +
           std::to_string(end) + ", " + std::to_string(step) + ")";
  return "";
}

void runArange(const Call &c) {
  const Tensor &out = c.out(0);
  double start = c.f("start", 0), step = c.f("step", 1);
  for (int64_t i = 0, n = out.shape[0]; i < n; ++i)
    store(out.data + i * elementSize(out.dtype), out.dtype, start + i * step);
}

/// One input of the output's shape and dtype (or `dtype`, when given).
std::string prepareSameShape(const Signature &sig,
                             coop_pb::DType dtype = coop_pb::DTYPE_UNSPECIFIED) {
  CHECK_OK(operands(sig, 1));
  const Tensor &in = *sig.call.tensor(0), &out = sig.outputs[0];
  if (!shapesEqual(in, out))
    return "input " + dims(in) + " and output " + dims(out) + " differ";
  if (in.dtype != out.dtype)
    return std::string("input is ") + dtypeName(in.dtype) + ", output " + dtypeName(out.dtype);
  if (dtype != coop_pb::DTYPE_UNSPECIFIED && in.dtype != dtype)
    return std::string("input is ") + dtypeName(in.dtype) + ", expected " + dtypeName(dtype);
  return "";
}

// tril(self, diagonal): element (..., i, j) is kept where j - i <= diagonal.
std::string prepareTril(const Signature &sig) {
  CHECK_OK(prepareSameShape(sig));
  if (sig.outputs[0].rank < 2)
    return "needs a matrix, got " + dims(sig.outputs[0]);
  return "";
}

void runTril(const Call &c) {
  const Tensor &in = *c.tensor(0), &out = c.out(0);
  int64_t rows = out.dim(-2), cols = out.dim(-1), diagonal = c.i("diagonal", 0);
  int64_t width = elementSize(out.dtype);
  for (int64_t k = 0, n = out.numel(); k < n; ++k) {
    int64_t j = k % cols, i = (k / cols) % rows;
    if (j - i <= diagonal)
      std::memcpy(out.data + k * width, in.at(k), width);
    else
      std::memset(out.data + k * width, 0, width);
  }
}

// bitwise_not: logical not on bool, ~x on int64.
std::string prepareBitwiseNot(const Signature &sig) {
  CHECK_OK(prepareSameShape(sig));
  coop_pb::DType dtype = sig.outputs[0].dtype;
  if (dtype != coop_pb::BOOL && dtype != coop_pb::INT64)
    return std::string("input is ") + dtypeName(dtype) + ", expected bool or int64";
  return "";
}

void runBitwiseNot(const Call &c) {
  const Tensor &in = *c.tensor(0), &out = c.out(0);
  for (int64_t k = 0, n = out.numel(); k < n; ++k) {
    if (out.dtype == coop_pb::BOOL)
      out.ptr<uint8_t>()[k] = !*reinterpret_cast<const uint8_t *>(in.at(k));
    else
      out.ptr<int64_t>()[k] = ~*reinterpret_cast<const int64_t *>(in.at(k));
  }
}

// eq.Scalar, ne.Scalar(self, other): bool of self's shape.
std::string prepareCompare(const Signature &sig) {
  CHECK_OK(operands(sig, 1));
  const Tensor &in = *sig.call.tensor(0), &out = sig.outputs[0];
  CHECK_OK(dtypeIs(out, "the output", coop_pb::BOOL));
  if (in.dtype != coop_pb::FLOAT32 && in.dtype != coop_pb::INT64)
    return std::string("self is ") + dtypeName(in.dtype) + ", expected float32 or int64";
  if (!shapesEqual(in, out))
    return "self " + dims(in) + " and output " + dims(out) + " differ";
  if (!sig.call.has("other"))
    return "has no scalar 'other'";
  return "";
}

template <bool Equal> void runCompare(const Call &c) {
  const Tensor &in = *c.tensor(0), &out = c.out(0);
  // float32 compares in float, as PyTorch does.
  double other = in.dtype == coop_pb::FLOAT32 ? static_cast<float>(c.f("other")) : c.f("other");
  for (int64_t k = 0, n = out.numel(); k < n; ++k)
    out.ptr<uint8_t>()[k] = (valueAt(in.at(k), in.dtype) == other) == Equal;
}

// remainder.Scalar(self, other): Python's modulo, the sign of `other`
// (window and position arithmetic on int64 indices, or float32).
std::string prepareRemainder(const Signature &sig) {
  CHECK_OK(operands(sig, 1));
  const Tensor &in = *sig.call.tensor(0), &out = sig.outputs[0];
  if (in.dtype != coop_pb::FLOAT32 && in.dtype != coop_pb::INT64)
    return std::string("self is ") + dtypeName(in.dtype) + ", expected float32 or int64";
  if (in.dtype != out.dtype || !shapesEqual(in, out))
    return "self " + dims(in) + " and output " + dims(out) + " differ";
  if (!sig.call.has("other"))
    return "has no scalar 'other'";
  if (in.dtype == coop_pb::INT64 && sig.call.i("other") == 0)
    return "integer remainder by zero";
  return "";
}

void runRemainder(const Call &c) {
  const Tensor &in = *c.tensor(0), &out = c.out(0);
  if (in.dtype == coop_pb::INT64) {
    int64_t b = c.i("other");
    for (int64_t k = 0, n = out.numel(); k < n; ++k) {
      int64_t r = *reinterpret_cast<const int64_t *>(in.at(k)) % b;
      out.ptr<int64_t>()[k] = r != 0 && (r < 0) != (b < 0) ? r + b : r;
    }
    return;
  }
  float b = static_cast<float>(c.f("other"));
  for (int64_t k = 0, n = out.numel(); k < n; ++k) {
    float r = std::fmod(*reinterpret_cast<const float *>(in.at(k)), b);
    out.ptr<float>()[k] = r != 0 && (r < 0) != (b < 0) ? r + b : r;
  }
}

// masked_fill.Scalar(self, mask, value): value where the (broadcast) bool
// mask is set, else self.
std::string prepareMaskedFill(const Signature &sig) {
  CHECK_OK(operands(sig, 2));
  const Tensor &self = *sig.call.tensor(0), &mask = *sig.call.tensor(1);
  const Tensor &out = sig.outputs[0];
  CHECK_OK(dtypeIs(mask, "mask", coop_pb::BOOL));
  if (!numeric(out.dtype) || self.dtype != out.dtype || !shapesEqual(self, out))
    return "self " + dims(self) + " " + dtypeName(self.dtype) + " and output " + dims(out) +
           " " + dtypeName(out.dtype) + " differ";
  if (!broadcastable(mask, out))
    return "mask " + dims(mask) + " does not broadcast to " + dims(out);
  if (!sig.call.has("value"))
    return "has no scalar 'value'";
  return "";
}

void runMaskedFill(const Call &c) {
  const Tensor &self = *c.tensor(0), &mask = *c.tensor(1), &out = c.out(0);
  double value = c.f("value");
  int64_t width = elementSize(out.dtype), idx[kMaxRank];
  for (int64_t k = 0, n = out.numel(); k < n; ++k) {
    unflatten(out, k, idx);
    if (*broadcastAt(mask, idx, out.rank))
      store(out.data + k * width, out.dtype, value);
    else
      std::memcpy(out.data + k * width, self.at(k), width);
  }
}

//===----------------------------------------------------------------------===//
// Fills and copies into a tensor's own shape
//===----------------------------------------------------------------------===//

// zero_(self).
std::string prepareZero(const Signature &sig) {
  CHECK_OK(prepareSameShape(sig));
  return numeric(sig.outputs[0].dtype) ? "" : "cannot zero " +
                                                  std::string(dtypeName(sig.outputs[0].dtype));
}

void runZero(const Call &c) {
  std::memset(c.out(0).data, 0, c.out(0).numel() * elementSize(c.out(0).dtype));
}

// fill_.Tensor(self, value): every element takes the one-element value;
// self may be a view (Swin fills slices of its attention mask).
std::string prepareFillTensor(const Signature &sig) {
  CHECK_OK(operands(sig, 2));
  const Tensor &value = *sig.call.tensor(1), &out = sig.outputs[0];
  if (value.numel() != 1 || !numeric(value.dtype) || !numeric(out.dtype))
    return "value " + dims(value) + " " + dtypeName(value.dtype) + " cannot fill " +
           dtypeName(out.dtype);
  if (!shapesEqual(*sig.call.tensor(0), out))
    return "self and output shapes differ";
  return "";
}

void runFillTensor(const Call &c) {
  const Tensor &value = *c.tensor(1), &out = c.out(0);
  double v = valueAt(value.data, value.dtype);
  for (int64_t k = 0, n = out.numel(); k < n; ++k)
    store(out.at(k), out.dtype, v);
}

// copy_(self, src): src broadcast to self's shape, converted between
// float32, int64 and bool.
std::string prepareCopyInto(const Signature &sig) {
  CHECK_OK(operands(sig, 2));
  const Tensor &self = *sig.call.tensor(0), &src = *sig.call.tensor(1);
  const Tensor &out = sig.outputs[0];
  if (!shapesEqual(self, out) || self.dtype != out.dtype)
    return "self and output differ";
  if (!numeric(src.dtype) || !numeric(out.dtype))
    return std::string("cannot copy ") + dtypeName(src.dtype) + " into " + dtypeName(out.dtype);
  if (!broadcastable(src, out))
    return "src " + dims(src) + " does not broadcast to " + dims(out);
  return "";
}

// Writes through the output's strides: a slice assignment (x[:, ::2] = y)
// copies into a strided view of x.
void runCopyInto(const Call &c) {
  const Tensor &src = *c.tensor(1), &out = c.out(0);
  int64_t width = elementSize(out.dtype), idx[kMaxRank];
  for (int64_t k = 0, n = out.numel(); k < n; ++k) {
    unflatten(out, k, idx);
    const char *from = broadcastAt(src, idx, out.rank);
    char *to = out.at(k);
    if (src.dtype == out.dtype)
      std::memcpy(to, from, width);
    else
      store(to, out.dtype, valueAt(from, src.dtype));
  }
}

// lift_fresh_copy(self): a copy.
std::string prepareFreshCopy(const Signature &sig) { return prepareSameShape(sig); }
void runFreshCopy(const Call &c) { copyTensor(c.out(0), *c.tensor(0)); }

// as_strided_(self, size, stride, storage_offset): implemented where it
// re-views self's elements as they are (the size is self's shape and every
// dimension longer than 1 keeps its stride), which is what the zoo emits.
std::string prepareAsStrided(const Signature &sig) {
  CHECK_OK(prepareSameShape(sig));
  const Tensor &self = *sig.call.tensor(0);
  int64_t size[kMaxRank], stride[kMaxRank];
  int n = sig.call.ints("size", size, kMaxRank), m = sig.call.ints("stride", stride, kMaxRank);
  if (n != self.rank || m != self.rank || !std::equal(size, size + n, self.shape))
    return "size is not self's shape " + dims(self);
  for (int d = 0; d < n; ++d)
    if (size[d] > 1 && stride[d] != self.strides[d])
      return "a view that moves elements (stride " + std::to_string(stride[d]) +
             " for dimension " + std::to_string(d) + " of stride " +
             std::to_string(self.strides[d]) + ") is not implemented";
  if (sig.call.has("storage_offset"))
    return "a storage_offset is not implemented";
  return "";
}

//===----------------------------------------------------------------------===//
// Moving elements: roll, constant_pad_nd, index, index_put
//===----------------------------------------------------------------------===//

// roll(self, shifts, dims): out[i] = self[i - shift] (mod the size) along
// each rolled dimension; without dims the flattened tensor rolls.
std::string prepareRoll(const Signature &sig) {
  CHECK_OK(prepareSameShape(sig));
  int64_t shifts[kMaxRank], which[kMaxRank];
  int n = sig.call.ints("shifts", shifts, kMaxRank), m = sig.call.ints("dims", which, kMaxRank);
  int rank = sig.outputs[0].rank;
  if (n < 1 || n > kMaxRank || (m > 0 && m != n) || (m <= 0 && n != 1))
    return "shifts and dims do not match";
  for (int k = 0; k < m; ++k)
    if (which[k] < -rank || which[k] >= rank)
      return "dimension " + std::to_string(which[k]) + " is out of range";
  return "";
}

int64_t wrap(int64_t i, int64_t size) { return size ? ((i % size) + size) % size : 0; }

void runRoll(const Call &c) {
  const Tensor &in = *c.tensor(0), &out = c.out(0);
  int64_t shifts[kMaxRank], which[kMaxRank], shift[kMaxRank] = {}, idx[kMaxRank];
  int n = c.ints("shifts", shifts, kMaxRank), m = c.ints("dims", which, kMaxRank);
  int64_t width = elementSize(out.dtype), count = out.numel();
  if (m <= 0) {
    for (int64_t k = 0; k < count; ++k)
      std::memcpy(out.data + k * width, in.at(wrap(k - shifts[0], count)), width);
    return;
  }
  for (int k = 0; k < n; ++k) {
    int d = static_cast<int>(which[k] < 0 ? which[k] + out.rank : which[k]);
    shift[d] += shifts[k];
  }
  for (int64_t k = 0; k < count; ++k) {
    unflatten(out, k, idx);
    int64_t off = 0;
    for (int d = 0; d < out.rank; ++d)
      off += wrap(idx[d] - shift[d], out.shape[d]) * in.strides[d];
    std::memcpy(out.data + k * width, in.data + off * width, width);
  }
}

// constant_pad_nd(self, pad, value): pad[2k], pad[2k + 1] are added before
// and after dimension rank - 1 - k (negative amounts crop).
std::string preparePad(const Signature &sig) {
  CHECK_OK(operands(sig, 1));
  const Tensor &in = *sig.call.tensor(0), &out = sig.outputs[0];
  int64_t pad[2 * kMaxRank];
  int n = sig.call.ints("pad", pad, 2 * kMaxRank);
  if (n < 0 || n % 2 || n / 2 > in.rank)
    return "pad needs an even count of at most twice the rank";
  if (in.dtype != out.dtype || !numeric(out.dtype) || in.rank != out.rank)
    return "input and output dtypes or ranks differ";
  for (int d = 0; d < in.rank; ++d) {
    int k = in.rank - 1 - d;
    int64_t grown = in.shape[d] + (k < n / 2 ? pad[2 * k] + pad[2 * k + 1] : 0);
    if (out.shape[d] != grown)
      return "output " + dims(out) + " is not " + dims(in) + " padded";
  }
  return "";
}

void runPad(const Call &c) {
  const Tensor &in = *c.tensor(0), &out = c.out(0);
  int64_t pad[2 * kMaxRank], before[kMaxRank] = {}, idx[kMaxRank];
  int n = c.ints("pad", pad, 2 * kMaxRank);
  for (int k = 0; k < n / 2; ++k)
    before[in.rank - 1 - k] = pad[2 * k];
  double value = c.f("value", 0);
  int64_t width = elementSize(out.dtype);
  for (int64_t k = 0, count = out.numel(); k < count; ++k) {
    unflatten(out, k, idx);
    int64_t off = 0;
    bool inside = true;
    for (int d = 0; d < out.rank && inside; ++d) {
      int64_t i = idx[d] - before[d];
      inside = i >= 0 && i < in.shape[d];
      off += i * in.strides[d];
    }
    if (inside)
      std::memcpy(out.data + k * width, in.data + off * width, width);
    else
      store(out.data + k * width, out.dtype, value);
  }
}

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
  CHECK_OK(dtypeIs(*index, "the index", coop_pb::INT64));
  bool ok = self->rank >= 1 && result.rank == index->rank + self->rank - 1 &&
            std::equal(index->shape, index->shape + index->rank, result.shape) &&
            std::equal(self->shape + 1, self->shape + self->rank, result.shape + index->rank);
  if (!ok)
    return std::string(what) + " " + dims(result) + " is not self " + dims(*self) +
           " indexed by " + dims(*index);
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
  CHECK_OK(checkIndexed(sig, sig.outputs[0], "output"));
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
  CHECK_OK(dtypeIs(*index, "the index", coop_pb::INT64));
  if (!shapesEqual(*self, sig.outputs[0]) || self->dtype != sig.outputs[0].dtype)
    return "self and output differ";
  if (values->dtype != self->dtype || self->dtype != coop_pb::FLOAT32)
    return "self and values must be float32";
  Tensor indexed = *self;
  indexed.rank = index->rank + self->rank - 1;
  if (indexed.rank > kMaxRank || self->rank < 1)
    return "self " + dims(*self) + " indexed by " + dims(*index) + " has too many dimensions";
  std::copy(self->shape + 1, self->shape + self->rank, indexed.shape + index->rank);
  std::copy(index->shape, index->shape + index->rank, indexed.shape);
  if (!broadcastable(*values, indexed))
    return "values " + dims(*values) + " do not broadcast to " + dims(indexed);
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


//===----------------------------------------------------------------------===//
// Activations outside the core set (MobileNet's ReLU6 and hard swish,
// EfficientNet's SiLU; leaky ReLU, ELU and CELU, softplus, mish) and their
// backwards, negation. float32; inputs may be strided; an in-place variant
// runs in its output, which holds self.
//===----------------------------------------------------------------------===//

/// Float32 tensor parameters 0..inputs-1, all of the output's shape.
std::string prepareFloatSameShape(const Signature &sig, int inputs) {
  CHECK_OK(operands(sig, inputs));
  const Tensor &out = sig.outputs[0];
  CHECK_OK(dtypeIs(out, "the output", coop_pb::FLOAT32));
  for (int p = 0; p < inputs; ++p) {
    const Tensor &t = *sig.call.tensor(p);
    CHECK_OK(dtypeIs(t, p ? "the second operand" : "the first operand", coop_pb::FLOAT32));
    if (!shapesEqual(t, out))
      return "operand #" + std::to_string(p) + " " + dims(t) + " and output " + dims(out) +
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
  CHECK_OK(prepareFloatSameShape(sig, sig.call.numParams));
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
  CHECK_OK(prepareGradient(sig));
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
  CHECK_OK(prepareUnary(sig));
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
  CHECK_OK(prepareGradient(sig));
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

// triu(self, diagonal): element (..., i, j) is kept where j - i >= diagonal.
void runTriu(const Call &c) {
  const Tensor &in = *c.tensor(0), &out = c.out(0);
  int64_t rows = out.dim(-2), cols = out.dim(-1), diagonal = c.i("diagonal", 0);
  int64_t width = elementSize(out.dtype);
  for (int64_t k = 0, n = out.numel(); k < n; ++k) {
    int64_t j = k % cols, i = (k / cols) % rows;
    if (j - i >= diagonal)
      std::memcpy(out.data + k * width, in.at(k), width);
    else
      std::memset(out.data + k * width, 0, width);
  }
}

//===----------------------------------------------------------------------===//
// Scalar fills and strided empties
//===----------------------------------------------------------------------===//

// fill_.Scalar(self, value): every element takes value; self may be a view.
std::string prepareFillScalar(const Signature &sig) {
  CHECK_OK(operands(sig, 1));
  const Tensor &out = sig.outputs[0];
  if (!numeric(out.dtype))
    return std::string("cannot fill ") + dtypeName(out.dtype);
  if (!shapesEqual(*sig.call.tensor(0), out))
    return "self " + dims(*sig.call.tensor(0)) + " and output " + dims(out) + " differ";
  if (!sig.call.has("value"))
    return "has no scalar 'value'";
  return "";
}

void runFillScalar(const Call &c) {
  const Tensor &out = c.out(0);
  double v = c.f("value");
  for (int64_t k = 0, n = out.numel(); k < n; ++k)
    store(out.at(k), out.dtype, v);
}

// new_empty_strided(self, size, stride): zeros of `size` (a deterministic
// run reads no garbage); the output's layout is the plan's, and since
// every element is zero, `stride` changes no value.
std::string prepareNewEmptyStrided(const Signature &sig) {
  CHECK_OK(operands(sig, 1));
  const Tensor &out = sig.outputs[0];
  if (!numeric(out.dtype))
    return std::string("cannot fill ") + dtypeName(out.dtype);
  int64_t size[kMaxRank], stride[kMaxRank];
  int n = sig.call.ints("size", size, kMaxRank), m = sig.call.ints("stride", stride, kMaxRank);
  if (n != out.rank || !std::equal(size, size + n, out.shape))
    return "size is not the output's shape " + dims(out);
  if (m != n)
    return "stride has " + std::to_string(m) + " entries for a size of " + std::to_string(n);
  return "";
}

void runNewEmptyStrided(const Call &c) {
  std::memset(c.out(0).data, 0, c.out(0).numel() * elementSize(c.out(0).dtype));
}

//===----------------------------------------------------------------------===//
// baddbmm(self, batch1, batch2, beta=1, alpha=1): beta * self + alpha *
// batch1 @ batch2, self broadcast to [B, M, N] (ignored when beta is 0, as
// ATen); each product a fixed-order sum in double.
//===----------------------------------------------------------------------===//

std::string prepareBaddbmm(const Signature &sig) {
  CHECK_OK(operands(sig, 3));
  const Tensor &self = *sig.call.tensor(0), &a = *sig.call.tensor(1), &b = *sig.call.tensor(2);
  const Tensor &out = sig.outputs[0];
  CHECK_OK(dtypeIs(self, "self", coop_pb::FLOAT32));
  CHECK_OK(dtypeIs(a, "batch1", coop_pb::FLOAT32));
  CHECK_OK(dtypeIs(b, "batch2", coop_pb::FLOAT32));
  CHECK_OK(dtypeIs(out, "the output", coop_pb::FLOAT32));
  if (a.rank != 3 || b.rank != 3 || out.rank != 3 || a.shape[0] != b.shape[0] ||
      a.shape[2] != b.shape[1] || out.shape[0] != a.shape[0] || out.shape[1] != a.shape[1] ||
      out.shape[2] != b.shape[2])
    return "batch1 " + dims(a) + " x batch2 " + dims(b) + " -> " + dims(out) +
           " is not a batched matrix product";
  if (!broadcastable(self, out))
    return "self " + dims(self) + " does not broadcast to " + dims(out);
  return "";
}

void runBaddbmm(const Call &c) {
  const Tensor &self = *c.tensor(0), &a = *c.tensor(1), &b = *c.tensor(2), &out = c.out(0);
  double beta = c.f("beta", 1), alpha = c.f("alpha", 1);
  int64_t B = a.shape[0], M = a.shape[1], K = a.shape[2], N = b.shape[2], idx[kMaxRank];
  const float *A = a.ptr<float>(), *Bm = b.ptr<float>();
  float *o = out.ptr<float>();
  for (int64_t t = 0, at = 0; t < B; ++t)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j, ++at) {
        double sum = 0;
        for (int64_t k = 0; k < K; ++k)
          sum += double(A[t * a.strides[0] + i * a.strides[1] + k * a.strides[2]]) *
                 Bm[t * b.strides[0] + k * b.strides[1] + j * b.strides[2]];
        double value = alpha * sum;
        if (beta != 0) {
          idx[0] = t; idx[1] = i; idx[2] = j;
          value += beta * *reinterpret_cast<const float *>(broadcastAt(self, idx, 3));
        }
        o[at] = static_cast<float>(value);
      }
}

//===----------------------------------------------------------------------===//
// mse_loss(self, target, reduction) and mse_loss_backward(grad_output,
// self, target, reduction); reduction 0 none, 1 mean, 2 sum.
//===----------------------------------------------------------------------===//

std::string checkMse(const Signature &sig, int self, const Tensor &expected) {
  const Tensor &x = *sig.call.tensor(self), &t = *sig.call.tensor(self + 1);
  CHECK_OK(dtypeIs(x, "self", coop_pb::FLOAT32));
  CHECK_OK(dtypeIs(t, "target", coop_pb::FLOAT32));
  CHECK_OK(dtypeIs(sig.outputs[0], "the output", coop_pb::FLOAT32));
  if (!shapesEqual(x, t))
    return "self " + dims(x) + " and target " + dims(t) + " differ";
  int64_t reduction = sig.call.i("reduction", 1);
  if (reduction < 0 || reduction > 2)
    return "reduction " + std::to_string(reduction) + " is not 0 (none), 1 (mean) or 2 (sum)";
  if (reduction == 0 ? !shapesEqual(expected, x) : expected.numel() != 1)
    return std::string(self ? "grad_output " : "output ") + dims(expected) +
           (reduction ? " is not a scalar" : " is not self's shape " + dims(x));
  return "";
}

std::string prepareMse(const Signature &sig) {
  CHECK_OK(operands(sig, 2));
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
  CHECK_OK(operands(sig, 3));
  CHECK_OK(dtypeIs(*sig.call.tensor(0), "grad_output", coop_pb::FLOAT32));
  if (!shapesEqual(*sig.call.tensor(1), sig.outputs[0]))
    return "output " + dims(sig.outputs[0]) + " is not self's shape " + dims(*sig.call.tensor(1));
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
    return "only [N, C, H, W] or [C, H, W] pooling is implemented: " + dims(in) + " -> " +
           dims(out);
  if (out.dim(-2) < 1 || out.dim(-1) < 1 || in.dim(-2) < 1 || in.dim(-1) < 1)
    return "empty pooling " + dims(in) + " -> " + dims(out);
  return "";
}

/// checkAdaptive, and output_size against the output.
std::string checkAdaptiveForward(const Call &c, const Tensor &in, const Tensor &out) {
  CHECK_OK(checkAdaptive(in, out));
  int64_t size[2];
  if (c.ints("output_size", size, 2) != 2 || size[0] != out.dim(-2) || size[1] != out.dim(-1))
    return "output_size is not the output's last two dimensions " + dims(out);
  return "";
}

std::string prepareAdaptiveAvgPool(const Signature &sig) {
  CHECK_OK(operands(sig, 1));
  const Tensor &in = *sig.call.tensor(0), &out = sig.outputs[0];
  CHECK_OK(dtypeIs(in, "self", coop_pb::FLOAT32));
  CHECK_OK(dtypeIs(out, "the output", coop_pb::FLOAT32));
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
  CHECK_OK(operands(sig, 2));
  const Tensor &go = *sig.call.tensor(0), &self = *sig.call.tensor(1);
  CHECK_OK(dtypeIs(go, "grad_output", coop_pb::FLOAT32));
  CHECK_OK(dtypeIs(sig.outputs[0], "the output", coop_pb::FLOAT32));
  if (!shapesEqual(self, sig.outputs[0]))
    return "output " + dims(sig.outputs[0]) + " differs from self " + dims(self);
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
    return "only [N, C, H, W] upsampling is implemented: " + dims(in) + " -> " + dims(out);
  int64_t size[2];
  int n = c.ints("output_size", size, 2);
  if (n > 0) {
    if (n != 2 || size[0] != out.shape[2] || size[1] != out.shape[3])
      return "output_size is not the output's last two dimensions " + dims(out);
  } else {
    for (int d = 0; d < 2; ++d) {
      double factor = scaleFactor(c, d);
      if (factor <= 0)
        return "has neither output_size nor two positive scale_factors";
      if (static_cast<int64_t>(std::floor(in.shape[2 + d] * factor)) != out.shape[2 + d])
        return "output " + dims(out) + " is not " + dims(in) + " scaled by the scale_factors";
    }
  }
  if (in.shape[2] < 1 || in.shape[3] < 1)
    return "empty input " + dims(in);
  return "";
}

std::string prepareUpsample(const Signature &sig) {
  CHECK_OK(operands(sig, 1));
  CHECK_OK(dtypeIs(*sig.call.tensor(0), "input", coop_pb::FLOAT32));
  CHECK_OK(dtypeIs(sig.outputs[0], "the output", coop_pb::FLOAT32));
  return checkUpsample(sig.call, *sig.call.tensor(0), sig.outputs[0]);
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
  CHECK_OK(operands(sig, 1));
  const Tensor &go = *sig.call.tensor(0), &out = sig.outputs[0];
  CHECK_OK(dtypeIs(go, "grad_output", coop_pb::FLOAT32));
  CHECK_OK(dtypeIs(out, "the output", coop_pb::FLOAT32));
  int64_t size[kMaxRank];
  int n = sig.call.ints("input_size", size, kMaxRank);
  if (n != out.rank || !std::equal(size, size + n, out.shape))
    return "input_size is not the output's shape " + dims(out);
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
  CHECK_OK(dtypeIs(t, what, coop_pb::FLOAT32));
  if (t.numel() != count)
    return std::string(what) + " " + dims(t) + " does not hold " + std::to_string(count) +
           " elements";
  return "";
}

/// Checks input (float32 [N, C, *]) against N, C, HxW and group, and the
/// optional weight [C].
std::string checkGroupNorm(const Call &c, const Tensor &input, const Tensor *weight) {
  CHECK_OK(dtypeIs(input, "input", coop_pb::FLOAT32));
  GroupNorm g = groupNormOf(c);
  if (input.rank < 2 || input.shape[0] != g.N || input.shape[1] != g.C ||
      input.numel() != g.N * g.C * g.HxW)
    return "input " + dims(input) + " is not [N, C, *] of N " + std::to_string(g.N) + ", C " +
           std::to_string(g.C) + ", HxW " + std::to_string(g.HxW);
  if (g.groups < 1 || g.C % g.groups)
    return "group " + std::to_string(g.groups) + " does not divide C " + std::to_string(g.C);
  if (g.HxW < 1)
    return "input " + dims(input) + " has no elements to normalize";
  return weight ? floatCount(*weight, "weight", g.C) : "";
}

std::string prepareGroupNorm(const Signature &sig) {
  if (sig.call.numOutputs != 3)
    return "has " + std::to_string(sig.call.numOutputs) + " outputs, expected 3";
  const Tensor *input = sig.call.tensor(0), *bias = sig.call.tensor(2);
  if (!input)
    return "has no tensor argument 'input'";
  CHECK_OK(checkGroupNorm(sig.call, *input, sig.call.tensor(1)));
  GroupNorm g = groupNormOf(sig.call);
  if (bias)
    CHECK_OK(floatCount(*bias, "bias", g.C));
  CHECK_OK(dtypeIs(sig.outputs[0], "the output", coop_pb::FLOAT32));
  if (!shapesEqual(sig.outputs[0], *input))
    return "output " + dims(sig.outputs[0]) + " differs from input " + dims(*input);
  CHECK_OK(floatCount(sig.outputs[1], "the mean", g.N * g.groups));
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
  CHECK_OK(checkGroupNorm(sig.call, input, sig.call.tensor(4)));
  CHECK_OK(dtypeIs(go, "grad_out", coop_pb::FLOAT32));
  if (!shapesEqual(go, input))
    return "grad_out " + dims(go) + " differs from input " + dims(input);
  GroupNorm g = groupNormOf(sig.call);
  CHECK_OK(floatCount(*sig.call.tensor(2), "mean", g.N * g.groups));
  CHECK_OK(floatCount(*sig.call.tensor(3), "rstd", g.N * g.groups));
  int64_t mask[3] = {1, 1, 1};
  sig.call.ints("output_mask", mask, 3);
  int expected = int(mask[0] != 0) + int(mask[1] != 0) + int(mask[2] != 0);
  if (sig.call.numOutputs != expected)
    return "has " + std::to_string(sig.call.numOutputs) + " outputs; output_mask asks for " +
           std::to_string(expected);
  int outs[3];
  maskedOutputs(sig.call, outs);
  if (int o = outs[0]; o >= 0) {
    CHECK_OK(dtypeIs(sig.outputs[o], "grad_input", coop_pb::FLOAT32));
    if (!shapesEqual(sig.outputs[o], input))
      return "grad_input " + dims(sig.outputs[o]) + " differs from input " + dims(input);
  }
  if (int o = outs[1]; o >= 0)
    CHECK_OK(floatCount(sig.outputs[o], "grad_weight", g.C));
  if (int o = outs[2]; o >= 0)
    CHECK_OK(floatCount(sig.outputs[o], "grad_bias", g.C));
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
  CHECK_OK(dtypeIs(*in, "self", coop_pb::FLOAT32));
  CHECK_OK(dtypeIs(values, "the output", coop_pb::FLOAT32));
  CHECK_OK(dtypeIs(indices, "the indices output", coop_pb::INT64));
  if (!shapesEqual(values, indices))
    return "indices " + dims(indices) + " and output " + dims(values) + " differ";
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
  CHECK_OK(operands(sig, 3));
  const Tensor &go = *sig.call.tensor(0), &self = *sig.call.tensor(1);
  const Tensor &indices = *sig.call.tensor(2);
  CHECK_OK(dtypeIs(go, "grad_output", coop_pb::FLOAT32));
  CHECK_OK(dtypeIs(indices, "indices", coop_pb::INT64));
  CHECK_OK(dtypeIs(sig.outputs[0], "the output", coop_pb::FLOAT32));
  if (!shapesEqual(self, sig.outputs[0]))
    return "output " + dims(sig.outputs[0]) + " differs from self " + dims(self);
  if (!shapesEqual(indices, go))
    return "indices " + dims(indices) + " and grad_output " + dims(go) + " differ";
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

//===----------------------------------------------------------------------===//
// pixel_shuffle(self [*, C r^2, H, W], upscale_factor r) -> [*, C, H r, W r]
// and its inverse pixel_unshuffle(self, downscale_factor r): element
// (b, c, h r + i, w r + j) of the shuffled tensor is element
// (b, c r^2 + i r + j, h, w) of the packed one. Any dtype.
//===----------------------------------------------------------------------===//

/// Checks packed [*, C r^2, H, W] against shuffled [*, C, H r, W r].
std::string checkShuffle(const Tensor &packed, const Tensor &shuffled, int64_t r) {
  if (r < 1)
    return "the factor " + std::to_string(r) + " is not positive";
  int rank = packed.rank;
  bool ok = rank >= 3 && shuffled.rank == rank &&
            std::equal(packed.shape, packed.shape + rank - 3, shuffled.shape) &&
            packed.dim(-3) == shuffled.dim(-3) * r * r && packed.dim(-2) * r == shuffled.dim(-2) &&
            packed.dim(-1) * r == shuffled.dim(-1);
  if (!ok)
    return "packed " + dims(packed) + " and shuffled " + dims(shuffled) +
           " do not match by the factor " + std::to_string(r);
  return "";
}

template <bool Shuffle> std::string preparePixelShuffle(const Signature &sig) {
  CHECK_OK(operands(sig, 1));
  const Tensor &in = *sig.call.tensor(0), &out = sig.outputs[0];
  if (in.dtype != out.dtype)
    return std::string("input is ") + dtypeName(in.dtype) + ", output " + dtypeName(out.dtype);
  int64_t r = sig.call.i(Shuffle ? "upscale_factor" : "downscale_factor", 0);
  return Shuffle ? checkShuffle(in, out, r) : checkShuffle(out, in, r);
}

/// Walks the shuffled tensor in logical order, copying between it and the
/// packed one: pixel_shuffle reads packed `in`, pixel_unshuffle writes
/// packed `out`.
template <bool Shuffle> void runPixelShuffle(const Call &c) {
  const Tensor &in = *c.tensor(0), &out = c.out(0);
  const Tensor &shuffled = Shuffle ? out : in;
  int64_t r = c.i(Shuffle ? "upscale_factor" : "downscale_factor");
  int64_t H = shuffled.dim(-2) / r, W = shuffled.dim(-1) / r;
  int64_t width = elementSize(out.dtype);
  for (int64_t k = 0, n = shuffled.numel(); k < n; ++k) {
    int64_t x = k % (W * r), y = k / (W * r) % (H * r), bc = k / (W * r * H * r);
    int64_t packed = ((bc * r + y % r) * r + x % r) * H * W + y / r * W + x / r;
    if (Shuffle)
      std::memcpy(out.data + k * width, in.at(packed), width);
    else
      std::memcpy(out.data + packed * width, in.at(k), width);
  }
}

} // namespace

std::vector<KernelDef> moreCpuKernels() {
  return {
      {"aten.avg_pool2d", {"self"},
       "kernel_size:ints[1,) stride:ints[1,)? padding:ints[0,)? ceil_mode:bool? "
       "count_include_pad:bool? divisor_override:int[1,)?",
       prepareAvgPool, runAvgPool},
      {"aten.avg_pool2d_backward", {"grad_output", "self"},
       "kernel_size:ints[1,) stride:ints[1,)? padding:ints[0,)? ceil_mode:bool? "
       "count_include_pad:bool? divisor_override:int[1,)?",
       prepareAvgPoolBackward,
       runAvgPoolBackward},
      {"aten.arange", {}, "start:scalar? end:scalar? step:scalar?", prepareArange, runArange},
      {"aten.tril", {"self"}, "diagonal:int?", prepareTril, runTril},
      {"aten.bitwise_not", {"self"}, "", prepareBitwiseNot, runBitwiseNot},
      {"aten.eq.Scalar", {"self"}, "other:scalar", prepareCompare, runCompare<true>},
      {"aten.ne.Scalar", {"self"}, "other:scalar", prepareCompare, runCompare<false>},
      {"aten.masked_fill.Scalar", {"self", "mask"},
       "value:scalar", prepareMaskedFill, runMaskedFill},
      {"aten.zero_", {"self"}, "", prepareZero, runZero},
      {"aten.fill_.Tensor", {"self", "value"}, "", prepareFillTensor, runFillTensor, true},
      {"aten.copy_", {"self", "src"}, "", prepareCopyInto, runCopyInto, true},
      {"aten.lift_fresh_copy", {"self"}, "", prepareFreshCopy, runFreshCopy},
      {"aten.as_strided_", {"self"},
       "size:ints[0,) stride:ints[0,) storage_offset:int?", prepareAsStrided, runFreshCopy},
      {"aten.roll", {"self"}, "shifts:ints dims:ints?", prepareRoll, runRoll},
      {"aten.constant_pad_nd", {"self"}, "pad:ints value:scalar?", preparePad, runPad},
      {"aten.index.Tensor", {"self", "indices[]"}, "", prepareIndex, runIndex},
      {"aten.index_put", {"self", "indices[]", "values"},
       "accumulate:bool?", prepareIndexPut, runIndexPut},
      {"aten.index_put_", {"self", "indices[]", "values"},
       "accumulate:bool?", prepareIndexPut, runIndexPut},
      {"aten.remainder.Scalar", {"self"}, "other:scalar", prepareRemainder, runRemainder},
      {"aten.hardtanh", {"self"}, "min_val:scalar? max_val:scalar?", prepareHardtanh, runHardtanh},
      {"aten.hardtanh_", {"self"}, "min_val:scalar? max_val:scalar?", prepareHardtanh, runHardtanh},
      {"aten.hardtanh_backward", {"grad_output", "self"},
       "min_val:scalar max_val:scalar", prepareHardtanh, runHardtanhBackward},
      {"aten.hardswish", {"self"}, "", prepareUnary, runHardswish},
      {"aten.hardswish_", {"self"}, "", prepareUnary, runHardswish},
      {"aten.hardswish_backward", {"grad_output", "self"}, "", prepareGradient,
       runHardswishBackward},
      {"aten.hardsigmoid", {"self"}, "", prepareUnary, runHardsigmoid},
      {"aten.hardsigmoid_", {"self"}, "", prepareUnary, runHardsigmoid},
      {"aten.hardsigmoid_backward", {"grad_output", "self"}, "", prepareGradient,
       runHardsigmoidBackward},
      {"aten.silu", {"self"}, "", prepareUnary, runSilu},
      {"aten.silu_", {"self"}, "", prepareUnary, runSilu},
      {"aten.neg", {"self"}, "", prepareUnary, runNeg},
      {"aten.neg_", {"self"}, "", prepareUnary, runNeg},
      {"aten.triu", {"self"}, "diagonal:int?", prepareTril, runTriu},
      {"aten.fill_.Scalar", {"self"}, "value:scalar", prepareFillScalar, runFillScalar, true},
      {"aten.new_empty_strided", {"self"},
       "size:ints[0,) stride:ints[0,)", prepareNewEmptyStrided, runNewEmptyStrided},
      {"aten.baddbmm", {"self", "batch1", "batch2"},
       "beta:scalar? alpha:scalar?", prepareBaddbmm, runBaddbmm},
      {"aten.mse_loss", {"self", "target"}, "reduction:int[0,2]?", prepareMse, runMse},
      {"aten.mse_loss_backward", {"grad_output", "self", "target"},
       "reduction:int[0,2]", prepareMseBackward,
       runMseBackward},
      {"aten._adaptive_avg_pool2d", {"self"},
       "output_size:ints[0,)", prepareAdaptiveAvgPool, runAdaptiveAvgPool},
      {"aten._adaptive_avg_pool2d_backward", {"grad_output", "self"}, "",
       prepareAdaptiveAvgPoolBackward, runAdaptiveAvgPoolBackward},
      {"aten.upsample_nearest2d.vec", {"input"},
       "output_size:ints[0,)? scale_factors:any?", prepareUpsample, runUpsampleNearest},
      {"aten.upsample_nearest2d_backward.vec", {"grad_output"},
       "output_size:ints[0,)? input_size:ints[0,) scale_factors:any?", prepareUpsampleBackward,
       runUpsampleNearestBackward},
      {"aten.silu_backward", {"grad_output", "self"}, "", prepareGradient, runSiluBackward},
      {"aten.leaky_relu", {"self"}, "negative_slope:scalar?", prepareUnary, runLeakyRelu},
      {"aten.leaky_relu_", {"self"}, "negative_slope:scalar?", prepareUnary, runLeakyRelu},
      {"aten.leaky_relu_backward", {"grad_output", "self"},
       "negative_slope:scalar self_is_result:bool?", prepareLeakyReluBackward,
       runLeakyReluBackward},
      {"aten.elu", {"self"},
       "alpha:scalar? scale:scalar? input_scale:scalar?", prepareUnary, runElu},
      {"aten.elu_", {"self"},
       "alpha:scalar? scale:scalar? input_scale:scalar?", prepareUnary, runElu},
      {"aten.celu", {"self"}, "alpha:scalar?", prepareCelu, runCelu},
      {"aten.celu_", {"self"}, "alpha:scalar?", prepareCelu, runCelu},
      {"aten.elu_backward", {"grad_output", "self_or_result"},
       "alpha:scalar scale:scalar? input_scale:scalar? is_result:bool", prepareEluBackward,
       runEluBackward},
      {"aten.softplus", {"self"}, "beta:scalar? threshold:scalar?", prepareUnary, runSoftplus},
      {"aten.softplus_backward", {"grad_output", "self"},
       "beta:scalar threshold:scalar", prepareGradient, runSoftplusBackward},
      {"aten.mish", {"self"}, "", prepareUnary, runMish},
      {"aten.mish_", {"self"}, "", prepareUnary, runMish},
      {"aten.mish_backward", {"grad_output", "self"}, "", prepareGradient, runMishBackward},
      {"aten.native_group_norm", {"input", "weight?", "bias?"},
       "N:int[0,) C:int[0,) HxW:int[0,) group:int[1,) eps:float[0,)",
       prepareGroupNorm, runGroupNorm},
      {"aten.native_group_norm_backward", {"grad_out", "input", "mean", "rstd", "weight?"},
       "N:int[0,) C:int[0,) HxW:int[0,) group:int[1,) output_mask:any?",
       prepareGroupNormBackward, runGroupNormBackward},
      {"aten.upsample_bilinear2d.vec", {"input"},
       "align_corners:bool output_size:ints[0,)? scale_factors:any?",
       withAlignCorners<prepareUpsample>,
       runUpsampleBilinear},
      {"aten.upsample_bilinear2d_backward.vec", {"grad_output"},
       "align_corners:bool input_size:ints[0,) output_size:ints[0,)? scale_factors:any?",
       withAlignCorners<prepareUpsampleBackward>, runUpsampleBilinearBackward},
      {"aten.adaptive_max_pool2d", {"self"},
       "output_size:ints[0,)", prepareAdaptiveMaxPool, runAdaptiveMaxPool},
      {"aten.adaptive_max_pool2d_backward", {"grad_output", "self", "indices"}, "",
       prepareAdaptiveMaxPoolBackward, runAdaptiveMaxPoolBackward},
      {"aten.pixel_shuffle", {"self"},
       "upscale_factor:int[1,)", preparePixelShuffle<true>, runPixelShuffle<true>},
      {"aten.pixel_unshuffle", {"self"},
       "downscale_factor:int[1,)", preparePixelShuffle<false>, runPixelShuffle<false>},
  };
}

} // namespace coop::rt
