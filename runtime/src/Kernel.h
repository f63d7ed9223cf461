//===- Kernel.h - Kernels, their calls and their registry -------*- C++ -*-===//
//
// A kernel is looked up once, when a plan is loaded: `prepare` checks the
// launch (operand counts, dtypes, shapes, arguments) and reports what is
// wrong by name; `run` then executes it without failing and without
// allocating memory.
//
//===----------------------------------------------------------------------===//
#ifndef COOP_RUNTIME_KERNEL_H
#define COOP_RUNTIME_KERNEL_H

#include "plan.pb.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace coop::rt {

constexpr int kMaxRank = 8;
/// Operands of one launch: DenseNet-121 concatenates up to 25 tensors, a
/// recurrent net unrolled over T time steps stacks T.
constexpr int kMaxOperands = 4096;

int64_t elementSize(coop_pb::DType dtype);
const char *dtypeName(coop_pb::DType dtype);

/// A tensor in memory: `data` points at its element 0 (the storage start
/// plus the element offset); element i_0..i_n is at
/// data + sum(i_k * strides[k]) elements.
struct Tensor {
  char *data = nullptr;
  coop_pb::DType dtype = coop_pb::DTYPE_UNSPECIFIED;
  int rank = 0;
  int64_t shape[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};

  int64_t numel() const;
  int64_t dim(int d) const { return shape[d < 0 ? d + rank : d]; }
  template <typename T> T *ptr() const { return reinterpret_cast<T *>(data); }
  /// The address of the element at a logical row-major index.
  char *at(int64_t linear) const;
  bool contiguous() const;
};

/// A launch's buffer, relative to the arena.
struct BufferDesc {
  int64_t offset = 0; // byte offset of the storage
  int64_t size = 0;
  Tensor layout;      // data = nullptr + element offset in bytes
  int64_t elementByteOffset = 0;

  Tensor in(char *arena) const {
    Tensor t = layout;
    t.data = arena + offset + elementByteOffset;
    return t;
  }
};

using ArgMap = std::map<std::string, coop_pb::Value, std::less<>>;

/// One launch as a kernel sees it.
struct Call {
  const ArgMap *args = nullptr;
  // Schema tensor parameter #p is input params[p], or absent (-1).
  const int *params = nullptr;
  int numParams = 0;
  const Tensor *inputs = nullptr;
  int numInputs = 0;
  const Tensor *outputs = nullptr;
  int numOutputs = 0;
  uint64_t rngSeed = 0, rngOffset = 0;

  /// Schema tensor parameter #p, or nullptr when it is absent.
  const Tensor *tensor(int p) const {
    return p < numParams && params[p] >= 0 ? &inputs[params[p]] : nullptr;
  }
  const Tensor &out(int i) const { return outputs[i]; }

  const coop_pb::Value *arg(std::string_view name) const;
  bool has(std::string_view name) const; // present and not None
  double f(std::string_view name, double fallback = 0) const;
  int64_t i(std::string_view name, int64_t fallback = 0) const;
  bool b(std::string_view name, bool fallback = false) const;
  std::string_view s(std::string_view name) const;
  /// An int[] argument (a single int counts as a one-element list); returns
  /// the count, or -1 when absent.
  int ints(std::string_view name, int64_t *out, int max) const;
  int64_t listItem(std::string_view name, int index, int64_t fallback) const;
};

/// A 1-D convolution's tensor seen as its 2-D twin's: a rank-3 [N, C, L]
/// (or weight [O, C / groups, K]) becomes the view [N, C, 1, L] of the same
/// elements, so the 2-D kernels run 1-D convolutions; any other rank comes
/// back as it is.
Tensor convolutionAs2d(const Tensor &t);

/// Item `axis` (0 height, 1 width) of the int[] argument `name` (stride,
/// padding, dilation, output_padding) of convolution or
/// convolution_backward. A 1-D launch (its first tensor parameter of rank
/// 3) lists the width only; its height, a unit dimension, takes `fallback`
/// (the identity: stride and dilation 1, padding 0).
int64_t convolutionItem(const Call &c, std::string_view name, int axis, int64_t fallback);

/// What `prepare` sees: the call without memory.
struct Signature {
  const std::string *kernel = nullptr;
  Call call;
  const Tensor *inputs = nullptr;  // layouts, data = nullptr
  const Tensor *outputs = nullptr;
};

using PrepareFn = std::string (*)(const Signature &);
using RunFn = void (*)(const Call &);

struct KernelDef {
  const char *name;                 // "aten.addmm", "aten.add_.Tensor"
  std::vector<std::string> params;  // schema tensor parameters, in order;
                                    // a trailing '?' marks an optional one
  /// The scalar arguments it reads, which the plan verifier checks before
  /// anything runs: space-separated `name:type`, type one of float, int,
  /// bool, str, ints (an int or a list), scalar (int, float or bool), any; then
  /// `?` when it may be absent or None (ATen has a default), then a range
  /// for numbers, e.g. "p:float[0,1] train:bool?"; the word `rng` marks a
  /// random kernel, whose launches must carry a stream. "" reads none.
  const char *args;
  PrepareFn prepare;
  RunFn run;
  /// Writes its outputs through their strides, so an in-place output may
  /// be a view (others get contiguous outputs).
  bool stridedOutputs = false;
};

/// PyTorch's pooled size of a dimension of `in` elements for a window of
/// `span` elements (dilation included): floor or ceil, a last window
/// starting in the right padding dropped; -1 when the window does not fit
/// the padded input or the stride is not positive. Any int64 arguments.
int64_t pooledSize(int64_t in, int64_t span, int64_t stride, int64_t pad, bool ceil);

/// A dimension argument, counted from the end when negative.
int normDim(int64_t dim, int rank);
/// `t` restricted to [start, start + count) along `dim`, every `step`th.
Tensor narrowed(const Tensor &t, int dim, int64_t start, int64_t count, int64_t step = 1);
/// `t`'s slice at `index` along `dim`, with that dimension removed.
Tensor selected(const Tensor &t, int dim, int64_t index);
/// `t` with the contiguous strides of its shape.
Tensor contiguousLike(const Tensor &t);
/// The inputs a Tensor[] parameter names (its operand list), or, with
/// positional operands, all inputs in order. Returns the count.
int listInputs(const Call &c, std::string_view name, const Tensor **out);
/// slice_backward's window (start, count, step) in a dimension of `size`,
/// clamped as ATen clamps it.
struct SliceWindow {
  int64_t start, count, step;
};
SliceWindow sliceWindow(const Call &c, int64_t size);

/// cat(Tensor[] tensors, dim) and stack(tensors, dim): calls
/// copy(window, input) for each input in order, `window` the view of the
/// (contiguous) output it fills.
template <bool Stack, typename Copy> void forEachJoinPiece(const Call &c, Copy &&copy) {
  const Tensor *ins[kMaxOperands];
  int n = listInputs(c, "tensors", ins);
  Tensor out = contiguousLike(c.out(0));
  int dim = normDim(c.i("dim", 0), out.rank);
  int64_t at = 0;
  for (int k = 0; k < n; ++k) {
    const Tensor &t = *ins[k];
    if (Stack) {
      copy(selected(out, dim, at++), t);
    } else {
      copy(narrowed(out, dim, at, t.shape[dim]), t);
      at += t.shape[dim];
    }
  }
}

/// For a backward with output_mask (convolution, batch/layer/group norm):
/// out[k] is the output index of gradient k (input, weight, bias), or -1
/// where the mask leaves it out. Outputs are the masked-in ones, in order.
void maskedOutputs(const Call &c, int out[3]);

/// The kernel of an aten name: exact name first, then the name without
/// its overload ("aten.add_.Tensor" -> "aten.add_"). nullptr if none.
const KernelDef *findKernel(const std::string &name);

/// All kernel names (for docs and tests).
std::vector<std::string> kernelNames();

} // namespace coop::rt

#endif // COOP_RUNTIME_KERNEL_H
