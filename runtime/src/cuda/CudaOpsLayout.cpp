//===- CudaOpsLayout.cpp - Handlers: activations, comparisons, fills and layout ops (cat, stack, split, pad, ...) ===//
//
// The joins, splits, scattered gradients and padding copy between strided
// views (Kernel.h's narrowed / selected, as the CPU kernels), each view one
// StridedCopy launch; cat and stack launch one per input.
//
//===----------------------------------------------------------------------===//

#include "cuda/CudaBackendImpl.h"
#include "cuda/CudaKernelsLayout.h"

namespace coop::rt::cuda {
namespace {

//===----------------------------------------------------------------------===//
// Strided copies into views (Kernel.h's narrowed, selected, contiguousLike)
//===----------------------------------------------------------------------===//

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

// cat(Tensor[] tensors, dim) and stack(Tensor[] tensors, dim).
template <bool Stack> void join(CudaBackend &b, const Call &c) {
  forEachJoinPiece<Stack>(c, [&](const Tensor &window, const Tensor &input) {
    copyInto(b, window, input);
  });
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
  SliceWindow w = sliceWindow(c, out.shape[dim]);
  copyInto(b, narrowed(out, dim, w.start, w.count, w.step), g);
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
