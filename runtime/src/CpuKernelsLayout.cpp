//===- CpuKernelsLayout.cpp - CPU kernels: moving elements ----------------===//
//
// cat, stack, split and the scattered gradients of select and slice;
// arange, tril and triu, masks and comparisons (bitwise_not, eq/ne.Scalar,
// masked_fill, remainder); fills and copies into a tensor of its own shape
// (zero_, fill_, copy_, as_strided_, new_empty_strided); roll,
// constant_pad_nd and pixel (un)shuffles. Elements of any dtype move as
// they are. CUDA: CudaKernelsLayout.cu.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"

#include <cmath>

namespace coop::rt {
namespace {

using namespace cpu;

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
// Ranges, masks and comparisons
//===----------------------------------------------------------------------===//

// arange(end) / arange.start(start, end) / arange.start_step(start, end,
// step): element i is start + i * step.
std::string prepareArange(const Signature &sig) {
  TRY(operands(sig, 0));
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
    return "output " + shapeText(out) + " does not hold arange(" + std::to_string(start) + ", " +
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
  TRY(operands(sig, 1));
  const Tensor &in = *sig.call.tensor(0), &out = sig.outputs[0];
  if (!sameShape(in, out))
    return "input " + shapeText(in) + " and output " + shapeText(out) + " differ";
  if (in.dtype != out.dtype)
    return std::string("input is ") + dtypeName(in.dtype) + ", output " + dtypeName(out.dtype);
  if (dtype != coop_pb::DTYPE_UNSPECIFIED && in.dtype != dtype)
    return std::string("input is ") + dtypeName(in.dtype) + ", expected " + dtypeName(dtype);
  return "";
}

// tril and triu (self, diagonal): of a matrix, or a batch of them.
std::string prepareTriangle(const Signature &sig) {
  TRY(prepareSameShape(sig));
  if (sig.outputs[0].rank < 2)
    return "needs a matrix, got " + shapeText(sig.outputs[0]);
  return "";
}

/// Element (..., i, j) is kept where j - i <= diagonal (tril, Lower) or
/// j - i >= diagonal (triu), else zeroed.
template <bool Lower> void runTriangle(const Call &c) {
  const Tensor &in = *c.tensor(0), &out = c.out(0);
  int64_t rows = out.dim(-2), cols = out.dim(-1), diagonal = c.i("diagonal", 0);
  int64_t width = elementSize(out.dtype);
  for (int64_t k = 0, n = out.numel(); k < n; ++k) {
    int64_t j = k % cols, i = (k / cols) % rows;
    if (Lower ? j - i <= diagonal : j - i >= diagonal)
      std::memcpy(out.data + k * width, in.at(k), width);
    else
      std::memset(out.data + k * width, 0, width);
  }
}

// bitwise_not: logical not on bool, ~x on int64.
std::string prepareBitwiseNot(const Signature &sig) {
  TRY(prepareSameShape(sig));
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
  TRY(operands(sig, 1));
  const Tensor &in = *sig.call.tensor(0), &out = sig.outputs[0];
  TRY(dtypeIs(out, "the output", coop_pb::BOOL));
  if (in.dtype != coop_pb::FLOAT32 && in.dtype != coop_pb::INT64)
    return std::string("self is ") + dtypeName(in.dtype) + ", expected float32 or int64";
  if (!sameShape(in, out))
    return "self " + shapeText(in) + " and output " + shapeText(out) + " differ";
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
  TRY(operands(sig, 1));
  const Tensor &in = *sig.call.tensor(0), &out = sig.outputs[0];
  if (in.dtype != coop_pb::FLOAT32 && in.dtype != coop_pb::INT64)
    return std::string("self is ") + dtypeName(in.dtype) + ", expected float32 or int64";
  if (in.dtype != out.dtype || !sameShape(in, out))
    return "self " + shapeText(in) + " and output " + shapeText(out) + " differ";
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
  TRY(operands(sig, 2));
  const Tensor &self = *sig.call.tensor(0), &mask = *sig.call.tensor(1);
  const Tensor &out = sig.outputs[0];
  TRY(dtypeIs(mask, "mask", coop_pb::BOOL));
  if (!numeric(out.dtype) || self.dtype != out.dtype || !sameShape(self, out))
    return "self " + shapeText(self) + " " + dtypeName(self.dtype) + " and output " + shapeText(out) +
           " " + dtypeName(out.dtype) + " differ";
  if (!broadcastsTo(mask, out))
    return "mask " + shapeText(mask) + " does not broadcast to " + shapeText(out);
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
  TRY(prepareSameShape(sig));
  return numeric(sig.outputs[0].dtype) ? "" : "cannot zero " +
                                                  std::string(dtypeName(sig.outputs[0].dtype));
}

void runZero(const Call &c) {
  std::memset(c.out(0).data, 0, c.out(0).numel() * elementSize(c.out(0).dtype));
}

// fill_.Tensor(self, value): every element takes the one-element value;
// self may be a view (Swin fills slices of its attention mask).
std::string prepareFillTensor(const Signature &sig) {
  TRY(operands(sig, 2));
  const Tensor &value = *sig.call.tensor(1), &out = sig.outputs[0];
  if (value.numel() != 1 || !numeric(value.dtype) || !numeric(out.dtype))
    return "value " + shapeText(value) + " " + dtypeName(value.dtype) + " cannot fill " +
           dtypeName(out.dtype);
  if (!sameShape(*sig.call.tensor(0), out))
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
  TRY(operands(sig, 2));
  const Tensor &self = *sig.call.tensor(0), &src = *sig.call.tensor(1);
  const Tensor &out = sig.outputs[0];
  if (!sameShape(self, out) || self.dtype != out.dtype)
    return "self and output differ";
  if (!numeric(src.dtype) || !numeric(out.dtype))
    return std::string("cannot copy ") + dtypeName(src.dtype) + " into " + dtypeName(out.dtype);
  if (!broadcastsTo(src, out))
    return "src " + shapeText(src) + " does not broadcast to " + shapeText(out);
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
  TRY(prepareSameShape(sig));
  const Tensor &self = *sig.call.tensor(0);
  int64_t size[kMaxRank], stride[kMaxRank];
  int n = sig.call.ints("size", size, kMaxRank), m = sig.call.ints("stride", stride, kMaxRank);
  if (n != self.rank || m != self.rank || !std::equal(size, size + n, self.shape))
    return "size is not self's shape " + shapeText(self);
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
// Moving elements: roll, constant_pad_nd (index and index_put are in
// CpuKernelsIndexing.cpp)
//===----------------------------------------------------------------------===//

// roll(self, shifts, dims): out[i] = self[i - shift] (mod the size) along
// each rolled dimension; without dims the flattened tensor rolls.
std::string prepareRoll(const Signature &sig) {
  TRY(prepareSameShape(sig));
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
  TRY(operands(sig, 1));
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
      return "output " + shapeText(out) + " is not " + shapeText(in) + " padded";
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

//===----------------------------------------------------------------------===//
// Scalar fills and strided empties
//===----------------------------------------------------------------------===//

// fill_.Scalar(self, value): every element takes value; self may be a view.
std::string prepareFillScalar(const Signature &sig) {
  TRY(operands(sig, 1));
  const Tensor &out = sig.outputs[0];
  if (!numeric(out.dtype))
    return std::string("cannot fill ") + dtypeName(out.dtype);
  if (!sameShape(*sig.call.tensor(0), out))
    return "self " + shapeText(*sig.call.tensor(0)) + " and output " + shapeText(out) + " differ";
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
  TRY(operands(sig, 1));
  const Tensor &out = sig.outputs[0];
  if (!numeric(out.dtype))
    return std::string("cannot fill ") + dtypeName(out.dtype);
  int64_t size[kMaxRank], stride[kMaxRank];
  int n = sig.call.ints("size", size, kMaxRank), m = sig.call.ints("stride", stride, kMaxRank);
  if (n != out.rank || !std::equal(size, size + n, out.shape))
    return "size is not the output's shape " + shapeText(out);
  if (m != n)
    return "stride has " + std::to_string(m) + " entries for a size of " + std::to_string(n);
  return "";
}

void runNewEmptyStrided(const Call &c) {
  std::memset(c.out(0).data, 0, c.out(0).numel() * elementSize(c.out(0).dtype));
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
    return "packed " + shapeText(packed) + " and shuffled " + shapeText(shuffled) +
           " do not match by the factor " + std::to_string(r);
  return "";
}

template <bool Shuffle> std::string preparePixelShuffle(const Signature &sig) {
  TRY(operands(sig, 1));
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

std::vector<KernelDef> layoutCpuKernels() {
  std::vector<KernelDef> k;
  KernelAdder add{k};
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
  add("aten.arange", {}, "start:scalar? end:scalar? step:scalar?", prepareArange, runArange);
  add("aten.tril", {"self"}, "diagonal:int?", prepareTriangle, runTriangle<true>);
  add("aten.bitwise_not", {"self"}, "", prepareBitwiseNot, runBitwiseNot);
  add("aten.eq.Scalar", {"self"}, "other:scalar", prepareCompare, runCompare<true>);
  add("aten.ne.Scalar", {"self"}, "other:scalar", prepareCompare, runCompare<false>);
  add("aten.masked_fill.Scalar", {"self", "mask"},
      "value:scalar", prepareMaskedFill, runMaskedFill);
  add("aten.zero_", {"self"}, "", prepareZero, runZero);
  add("aten.fill_.Tensor", {"self", "value"}, "", prepareFillTensor, runFillTensor, true);
  add("aten.copy_", {"self", "src"}, "", prepareCopyInto, runCopyInto, true);
  add("aten.lift_fresh_copy", {"self"}, "", prepareFreshCopy, runFreshCopy);
  add("aten.as_strided_", {"self"},
      "size:ints[0,) stride:ints[0,) storage_offset:int?", prepareAsStrided, runFreshCopy);
  add("aten.roll", {"self"}, "shifts:ints dims:ints?", prepareRoll, runRoll);
  add("aten.constant_pad_nd", {"self"}, "pad:ints value:scalar?", preparePad, runPad);
  add("aten.remainder.Scalar", {"self"}, "other:scalar", prepareRemainder, runRemainder);
  add("aten.triu", {"self"}, "diagonal:int?", prepareTriangle, runTriangle<false>);
  add("aten.fill_.Scalar", {"self"}, "value:scalar", prepareFillScalar, runFillScalar, true);
  add("aten.new_empty_strided", {"self"},
      "size:ints[0,) stride:ints[0,)", prepareNewEmptyStrided, runNewEmptyStrided);
  add("aten.pixel_shuffle", {"self"},
      "upscale_factor:int[1,)", preparePixelShuffle<true>, runPixelShuffle<true>);
  add("aten.pixel_unshuffle", {"self"},
      "downscale_factor:int[1,)", preparePixelShuffle<false>, runPixelShuffle<false>);
  return k;
}

} // namespace coop::rt
