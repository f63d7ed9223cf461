//===- CudaOpsLayout.cpp - Handlers: activations, comparisons, fills and layout ops (cat, stack, split, pad, ...) ===//
//
// The joins, splits, scattered gradients and padding copy between strided
// views (as CpuKernels.cpp's narrowed / selected views), each view one
// StridedCopy launch; cat and stack launch one per input.
//
//===----------------------------------------------------------------------===//

#include "cuda/CudaBackendImpl.h"
#include "cuda/CudaKernelsLayout.h"

namespace coop::rt::cuda {
namespace {

//===----------------------------------------------------------------------===//
// Views (the CPU kernels' narrowed, selected and contiguousLike)
//===----------------------------------------------------------------------===//

/// `t` restricted to [start, start + count) along `dim`, every `step`th.
Tensor narrowed(const Tensor &t, int dim, int64_t start, int64_t count, int64_t step = 1) {
  Tensor v = t;
  v.data += start * t.strides[dim] * elementSize(t.dtype);
  v.shape[dim] = count;
  v.strides[dim] *= step;
  return v;
}

/// `t`'s slice at `index` along `dim`, with that dimension removed.
Tensor selected(const Tensor &t, int dim, int64_t index) {
  Tensor v = narrowed(t, dim, index, 1);
  for (int d = dim; d + 1 < t.rank; ++d) {
    v.shape[d] = v.shape[d + 1];
    v.strides[d] = v.strides[d + 1];
  }
  v.rank = t.rank - 1;
  return v;
}

/// `t` with the contiguous strides of its shape.
Tensor contiguousLike(const Tensor &t) {
  Tensor v = t;
  int64_t stride = 1;
  for (int d = t.rank - 1; d >= 0; --d) {
    v.strides[d] = stride;
    stride *= t.shape[d];
  }
  return v;
}

/// A StridedCopy into the view `dst`.
StridedCopy into(const Tensor &dst) {
  StridedCopy p;
  p.shape = shapeOf(dst);
  p.dst = dst.data;
  p.dstDtype = dst.dtype;
  std::copy(dst.strides, dst.strides + dst.rank, p.dstStrides);
  p.width = static_cast<int>(elementSize(dst.dtype));
  return p;
}

/// dst = src broadcast to it, converted where the dtypes differ (always,
/// with `convert`: through double as the CPU's fill_.Tensor).
void copyInto(CudaBackend &b, const Tensor &dst, const Tensor &src, bool convert = false) {
  StridedCopy p = into(dst);
  p.src = operandOf(src, dst);
  p.convert = convert || src.dtype != dst.dtype;
  b.check(launchStridedCopy(p, b.stream), "strided copy kernel");
}

/// Every element of the view `dst` = value.
void fillInto(CudaBackend &b, const Tensor &dst, double value) {
  StridedCopy p = into(dst);
  p.value = value;
  b.check(launchStridedCopy(p, b.stream), "strided fill kernel");
}

//===----------------------------------------------------------------------===//
// Joining, splitting and scattering back
//===----------------------------------------------------------------------===//

/// The inputs a Tensor[] parameter names (its operand list), or, with
/// positional operands, all inputs in order (the CPU's listInputs).
int listInputs(const Call &c, std::string_view name, const Tensor **out) {
  const coop_pb::Value *list = c.arg(name);
  int n = 0;
  if (list && list->kind_case() == coop_pb::Value::kList) {
    for (const coop_pb::Value &item : list->list().items())
      if (item.kind_case() == coop_pb::Value::kOperand && n < kMaxOperands)
        out[n++] = &c.inputs[item.operand()];
    return n;
  }
  for (; n < c.numInputs && n < kMaxOperands; ++n)
    out[n] = &c.inputs[n];
  return n;
}

// cat(Tensor[] tensors, dim) and stack(Tensor[] tensors, dim).
template <bool Stack> void join(CudaBackend &b, const Call &c) {
  const Tensor *ins[kMaxOperands];
  int n = listInputs(c, "tensors", ins);
  Tensor out = contiguousLike(c.out(0));
  int dim = normDim(c.i("dim", 0), out.rank);
  int64_t at = 0;
  for (int k = 0; k < n; ++k) {
    const Tensor &t = *ins[k];
    if (Stack) {
      copyInto(b, selected(out, dim, at++), t);
    } else {
      copyInto(b, narrowed(out, dim, at, t.shape[dim]), t);
      at += t.shape[dim];
    }
  }
}

// split.Tensor, split_with_sizes and their unsafe_ twins: output o is a
// contiguous copy of its piece of self.
void split(CudaBackend &b, const Call &c) {
  const Tensor &self = *c.tensor(0);
  int dim = normDim(c.i("dim", 0), self.rank);
  int64_t at = 0;
  for (int o = 0; o < c.numOutputs; ++o) {
    const Tensor &out = c.out(o);
    copyInto(b, contiguousLike(out), narrowed(self, dim, at, out.shape[dim]));
    at += out.shape[dim];
  }
}

/// slice_backward's window (start, count, step) in a dimension of `size`,
/// clamped as ATen (the CPU's sliceWindow).
void sliceWindow(const Call &c, int64_t size, int64_t &start, int64_t &count, int64_t &step) {
  start = c.has("start") ? c.i("start") : 0;
  int64_t end = c.has("end") ? c.i("end") : size;
  step = c.i("step", 1);
  if (start < 0)
    start += size;
  if (end < 0)
    end += size;
  start = std::clamp<int64_t>(start, 0, size);
  end = std::clamp<int64_t>(end, start, size);
  count = step > 0 ? (end - start + step - 1) / step : 0;
}

// slice_backward(grad_output, input_sizes, dim, start, end, step) and
// select_backward(grad_output, input_sizes, dim, index): zeros with
// grad_output written into the window.
template <bool Select> void scatterBack(CudaBackend &b, const Call &c) {
  const Tensor &g = *c.tensor(0);
  Tensor out = contiguousLike(c.out(0));
  if (!b.check(launchFill(out.data, out.dtype, out.numel(), 0, b.stream), "zero fill kernel"))
    return;
  int dim = normDim(c.i("dim", 0), out.rank);
  if (Select) {
    int64_t index = c.i("index", 0);
    copyInto(b, selected(out, dim, index < 0 ? index + out.shape[dim] : index), g);
    return;
  }
  int64_t start = 0, count = 0, step = 1;
  sliceWindow(c, out.shape[dim], start, count, step);
  copyInto(b, narrowed(out, dim, start, count, step), g);
}

//===----------------------------------------------------------------------===//
// Moving elements: constant_pad_nd, roll, tril / triu
//===----------------------------------------------------------------------===//

// constant_pad_nd(self, pad, value): pad[2k], pad[2k + 1] are added before
// and after dimension rank - 1 - k; negative amounts crop. Self's kept
// window is copied into its place, after a fill of the output with value
// where anything is padded.
void constantPad(CudaBackend &b, const Call &c) {
  const Tensor &in = *c.tensor(0);
  Tensor out = contiguousLike(c.out(0));
  int64_t pad[2 * kMaxRank];
  int n = c.ints("pad", pad, 2 * kMaxRank);
  Tensor from = in, to = out;
  for (int k = 0; k < n / 2; ++k) {
    int d = in.rank - 1 - k;
    int64_t cropBefore = std::max<int64_t>(-pad[2 * k], 0);
    int64_t cropAfter = std::max<int64_t>(-pad[2 * k + 1], 0);
    int64_t kept = std::max<int64_t>(in.shape[d] - cropBefore - cropAfter, 0);
    from = narrowed(from, d, cropBefore, kept);
    to = narrowed(to, d, std::max<int64_t>(pad[2 * k], 0), kept);
  }
  if (to.numel() < out.numel())
    fillInto(b, out, c.f("value", 0));
  copyInto(b, to, from);
}

// roll(self, shifts, dims): along each rolled dimension (shifts of one
// dimension named twice add up), or along the flattened tensor without dims.
void roll(CudaBackend &b, const Call &c) {
  const Tensor &in = *c.tensor(0), &out = c.out(0);
  int64_t shifts[kMaxRank], which[kMaxRank];
  int n = c.ints("shifts", shifts, kMaxRank), m = c.ints("dims", which, kMaxRank);
  Roll p;
  p.shape = shapeOf(out);
  p.self = stridedOf(in);
  p.out = out.data;
  p.width = static_cast<int>(elementSize(out.dtype));
  p.flat = m <= 0;
  if (p.flat)
    p.shift[0] = shifts[0];
  else
    for (int k = 0; k < n; ++k)
      p.shift[normDim(which[k], out.rank)] += shifts[k];
  b.check(launchRoll(p, b.stream), "roll kernel");
}

// tril / triu(self, diagonal).
template <bool Lower> void triangle(CudaBackend &b, const Call &c) {
  const Tensor &out = c.out(0);
  Triangle p;
  p.shape = shapeOf(out);
  p.self = stridedOf(*c.tensor(0));
  p.diagonal = c.i("diagonal", 0);
  p.lower = Lower;
  p.out = out.data;
  p.width = static_cast<int>(elementSize(out.dtype));
  b.check(launchTriangle(p, b.stream), "tril/triu kernel");
}

//===----------------------------------------------------------------------===//
// Masks and comparisons
//===----------------------------------------------------------------------===//

// bitwise_not(self); eq.Scalar / ne.Scalar(self, other).
template <Logic K> void logical(CudaBackend &b, const Call &c) {
  const Tensor &self = *c.tensor(0), &out = c.out(0);
  Logical p;
  p.op = K;
  p.shape = shapeOf(out);
  p.self = stridedOf(self);
  p.out = out.data;
  if (K != Logic::Not) // float32 compares in float, as PyTorch
    p.other = self.dtype == coop_pb::FLOAT32 ? static_cast<float>(c.f("other")) : c.f("other");
  b.check(launchLogical(p, b.stream), "logical kernel");
}

// masked_fill.Scalar(self, mask, value).
void maskedFill(CudaBackend &b, const Call &c) {
  const Tensor &out = c.out(0);
  MaskedFill p;
  p.shape = shapeOf(out);
  p.self = stridedOf(*c.tensor(0));
  p.mask = operandOf(*c.tensor(1), out);
  p.value = c.f("value");
  p.out = out.data;
  p.width = static_cast<int>(elementSize(out.dtype));
  b.check(launchMaskedFill(p, b.stream), "masked_fill kernel");
}

//===----------------------------------------------------------------------===//
// Fills, copies and ranges
//===----------------------------------------------------------------------===//

void zero(CudaBackend &b, const Call &c) {
  const Tensor &out = c.out(0);
  b.check(launchFill(out.data, out.dtype, out.numel(), 0, b.stream), "zero_ kernel");
}

// fill_.Tensor(self, value): the one-element value, converted through
// double; self may be a view.
void fillTensor(CudaBackend &b, const Call &c) { copyInto(b, c.out(0), *c.tensor(1), true); }

// fill_.Scalar(self, value): self may be a view.
void fillScalar(CudaBackend &b, const Call &c) { fillInto(b, c.out(0), c.f("value")); }

// copy_(self, src): src broadcast to self's shape and converted; self may
// be a view (a slice assignment).
void copyFrom(CudaBackend &b, const Call &c) { copyInto(b, c.out(0), *c.tensor(1)); }

// lift_fresh_copy(self), and as_strided_(self, ...) where it re-views
// self's elements as they are (all the CPU kernel accepts).
void freshCopy(CudaBackend &b, const Call &c) { b.copy(c.out(0), *c.tensor(0)); }

// arange(end) / arange.start(start, end) / arange.start_step(start, end, step).
void arange(CudaBackend &b, const Call &c) {
  const Tensor &out = c.out(0);
  b.check(launchArange(out.data, out.dtype, out.shape[0], c.f("start", 0), c.f("step", 1),
                       b.stream),
          "arange kernel");
}

} // namespace

void addLayoutHandlers(HandlerTable &h) {
  h["aten.cat"] = join<false>;
  h["aten.stack"] = join<true>;
  for (const char *name : {"aten.split.Tensor", "aten.unsafe_split.Tensor",
                           "aten.split_with_sizes", "aten.unsafe_split_with_sizes"})
    h[name] = split;
  h["aten.select_backward"] = scatterBack<true>;
  h["aten.slice_backward"] = scatterBack<false>;
  h["aten.constant_pad_nd"] = constantPad;
  h["aten.roll"] = roll;
  h["aten.tril"] = triangle<true>;
  h["aten.triu"] = triangle<false>;
  h["aten.bitwise_not"] = logical<Logic::Not>;
  h["aten.eq.Scalar"] = logical<Logic::Equal>;
  h["aten.ne.Scalar"] = logical<Logic::NotEqual>;
  h["aten.masked_fill.Scalar"] = maskedFill;
  h["aten.zero_"] = zero;
  h["aten.fill_.Tensor"] = fillTensor;
  h["aten.fill_.Scalar"] = fillScalar;
  h["aten.copy_"] = copyFrom;
  h["aten.lift_fresh_copy"] = freshCopy;
  h["aten.as_strided_"] = freshCopy;
  h["aten.arange"] = arange;
}

} // namespace coop::rt::cuda
