//===- ViewLayout.cpp - Where a view's elements live ----------------------===//

#include "coop/Transforms/ViewLayout.h"
#include "coop/Support/CheckedArithmetic.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::coop;
using ::coop::checkedMul;
using ::coop::checkedMulAdd;

Layout Layout::contiguous(ArrayRef<int64_t> shape) {
  Layout layout;
  layout.shape.assign(shape.begin(), shape.end());
  layout.strides.assign(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    layout.strides[i] = layout.strides[i + 1] * std::max<int64_t>(shape[i + 1], 1);
  return layout;
}

bool Layout::isContiguous() const {
  Layout dense = contiguous(shape);
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] != 1 && strides[i] != dense.strides[i])
      return false;
  return true;
}

namespace {

enum class ViewKind {
  Unknown,
  Alias,     // same layout: alias, detach, lift_fresh
  Reshape,   // view, _unsafe_view, reshape, view_as
  Strided,   // _reshape_alias, as_strided: explicit strides
  Transpose, // t, transpose, swapaxes
  Permute,
  Expand,
  Unsqueeze,
  Squeeze,
  Slice,
  Narrow,
  Select,
  Split, // split, split_with_sizes, chunk, unbind (several results)
};

ViewKind classify(StringRef kernel) {
  // "aten.transpose.int" -> "aten.transpose"
  StringRef base = kernel;
  if (base.count('.') > 1)
    base = base.substr(0, base.find('.', base.find('.') + 1));
  return llvm::StringSwitch<ViewKind>(base)
      .Cases("aten.alias", "aten.detach", "aten.lift_fresh", ViewKind::Alias)
      // _reshape_alias's strides are what torch computed for its own layout
      // of the source; computing them for ours is right even if they differ.
      .Cases("aten.view", "aten._unsafe_view", "aten.reshape",
             "aten.view_as", ViewKind::Reshape)
      .Case("aten._reshape_alias", ViewKind::Reshape)
      .Case("aten.as_strided", ViewKind::Strided)
      .Cases("aten.t", "aten.transpose", "aten.swapaxes", ViewKind::Transpose)
      .Case("aten.permute", ViewKind::Permute)
      .Cases("aten.expand", "aten.expand_as", ViewKind::Expand)
      .Case("aten.unsqueeze", ViewKind::Unsqueeze)
      .Case("aten.squeeze", ViewKind::Squeeze)
      .Case("aten.slice", ViewKind::Slice)
      .Case("aten.narrow", ViewKind::Narrow)
      .Case("aten.select", ViewKind::Select)
      .Cases("aten.split", "aten.split_with_sizes", "aten.chunk",
             "aten.unbind", ViewKind::Split)
      .Default(ViewKind::Unknown);
}

/// Reads the aten arguments of a view by schema name.
class ViewArgs {
public:
  explicit ViewArgs(DictionaryAttr args) : args(args) {}

  std::optional<int64_t> integer(StringRef name) const {
    if (!args)
      return std::nullopt;
    if (auto value = args.getAs<IntegerAttr>(name))
      return value.getInt();
    return std::nullopt;
  }
  std::optional<SmallVector<int64_t>> integers(StringRef name) const {
    if (!args)
      return std::nullopt;
    Attribute value = args.get(name);
    if (auto dense = dyn_cast_or_null<DenseI64ArrayAttr>(value))
      return SmallVector<int64_t>(dense.asArrayRef());
    auto list = dyn_cast_or_null<ArrayAttr>(value);
    if (!list)
      return std::nullopt;
    SmallVector<int64_t> result;
    for (Attribute item : list) {
      auto integer = dyn_cast<IntegerAttr>(item);
      if (!integer)
        return std::nullopt;
      result.push_back(integer.getInt());
    }
    return result;
  }

private:
  DictionaryAttr args;
};

/// PyTorch's rule for viewing a strided tensor with another shape without a
/// copy (computeStride in ATen): dimensions are merged and split only
/// within chunks of the source that are contiguous among themselves.
std::optional<SmallVector<int64_t>> reshapeStrides(const Layout &source,
                                                   ArrayRef<int64_t> shape) {
  if (source.isContiguous())
    return Layout::contiguous(shape).strides;
  SmallVector<int64_t> strides(shape.size(), 0);
  int64_t viewDim = static_cast<int64_t>(shape.size()) - 1;
  // The stride of the innermost dimension of the current chunk.
  int64_t chunkBaseStride = source.strides.empty() ? 1 : source.strides.back();
  int64_t tensorElements = 1;
  int64_t viewElements = 1;
  for (int64_t dim = static_cast<int64_t>(source.shape.size()) - 1; dim >= 0;
       --dim) {
    tensorElements *= source.shape[dim];
    bool chunkEnds = dim == 0 || (source.shape[dim - 1] != 1 &&
                                  source.strides[dim - 1] !=
                                      tensorElements * chunkBaseStride);
    if (!chunkEnds)
      continue;
    while (viewDim >= 0 &&
           (viewElements < tensorElements || shape[viewDim] == 1)) {
      strides[viewDim] = viewElements * chunkBaseStride;
      viewElements *= shape[viewDim];
      --viewDim;
    }
    if (viewElements != tensorElements)
      return std::nullopt;
    if (dim > 0) {
      chunkBaseStride = source.strides[dim - 1];
      tensorElements = 1;
      viewElements = 1;
    }
  }
  if (viewDim != -1)
    return std::nullopt;
  return strides;
}

int64_t wrapDim(int64_t dim, int64_t rank) {
  return dim < 0 ? dim + std::max<int64_t>(rank, 1) : dim;
}

} // namespace

bool mlir::coop::isReshapeView(StringRef kernel) {
  return classify(kernel) == ViewKind::Reshape;
}

FailureOr<SmallVector<Layout>>
mlir::coop::applyView(StringRef kernel, DictionaryAttr attrs,
                      const Layout &source, TypeRange resultTypes,
                      std::string &error) {
  ViewArgs args(attrs);
  const int64_t rank = static_cast<int64_t>(source.shape.size());
  SmallVector<Layout> results;
  for (Type type : resultTypes) {
    Layout layout;
    layout.shape.assign(cast<RankedTensorType>(type).getShape().begin(),
                        cast<RankedTensorType>(type).getShape().end());
    layout.elementOffset = source.elementOffset;
    results.push_back(std::move(layout));
  }
  Layout &out = results.front();
  auto fail = [&](const Twine &why) -> FailureOr<SmallVector<Layout>> {
    error = ("cannot lay out view '" + kernel + "': " + why).str();
    return failure();
  };
  auto dimArg = [&](StringRef name, int64_t fallback) {
    return wrapDim(args.integer(name).value_or(fallback), rank);
  };

  switch (classify(kernel)) {
  case ViewKind::Unknown:
    return fail("unknown view kernel");
  case ViewKind::Alias:
    out.strides = source.strides;
    break;
  case ViewKind::Reshape: {
    std::optional<SmallVector<int64_t>> strides =
        reshapeStrides(source, out.shape);
    if (!strides)
      return fail("the source's strides do not allow this shape without a "
                  "copy");
    out.strides = *strides;
    break;
  }
  case ViewKind::Strided: {
    std::optional<SmallVector<int64_t>> strides = args.integers("stride");
    if (!strides || strides->size() != out.shape.size())
      return fail("needs a 'stride' list with one entry per dimension");
    out.strides = *strides;
    if (std::optional<int64_t> offset = args.integer("storage_offset"))
      out.elementOffset = *offset;
    break;
  }
  case ViewKind::Transpose: {
    out.strides = source.strides;
    if (rank >= 2) {
      int64_t a = dimArg("dim0", 0), b = dimArg("dim1", 1);
      if (a < 0 || b < 0 || a >= rank || b >= rank)
        return fail("dimension out of range");
      std::swap(out.strides[a], out.strides[b]);
    }
    break;
  }
  case ViewKind::Permute: {
    std::optional<SmallVector<int64_t>> dims = args.integers("dims");
    if (!dims || static_cast<int64_t>(dims->size()) != rank)
      return fail("needs 'dims' with one entry per dimension");
    for (int64_t dim : *dims) {
      dim = wrapDim(dim, rank);
      if (dim < 0 || dim >= rank)
        return fail("dimension out of range");
      out.strides.push_back(source.strides[dim]);
    }
    break;
  }
  case ViewKind::Expand: {
    // New leading dimensions and broadcast size-1 dimensions read the same
    // element again: stride 0.
    int64_t leading = static_cast<int64_t>(out.shape.size()) - rank;
    if (leading < 0)
      return fail("expands to fewer dimensions than the source has");
    out.strides.assign(leading, 0);
    for (int64_t dim = 0; dim < rank; ++dim)
      out.strides.push_back(source.shape[dim] == out.shape[leading + dim]
                                ? source.strides[dim]
                                : 0);
    break;
  }
  case ViewKind::Unsqueeze: {
    int64_t dim = args.integer("dim").value_or(0);
    dim = dim < 0 ? dim + rank + 1 : dim;
    if (dim < 0 || dim > rank)
      return fail("dimension out of range");
    out.strides = source.strides;
    std::optional<int64_t> stride =
        dim < rank ? checkedMul(source.strides[dim], source.shape[dim]) : 1;
    if (!stride)
      return fail("its stride overflows");
    out.strides.insert(out.strides.begin() + dim, *stride);
    break;
  }
  case ViewKind::Squeeze: {
    // Keep the strides of the dimensions that survive, matched in order.
    SmallVector<int64_t> keep;
    std::optional<int64_t> only = args.integer("dim");
    std::optional<SmallVector<int64_t>> several = args.integers("dim");
    for (int64_t dim = 0; dim < rank; ++dim) {
      bool named = (!only && !several) ||
                   (only && wrapDim(*only, rank) == dim) ||
                   (several && llvm::any_of(*several, [&](int64_t d) {
                      return wrapDim(d, rank) == dim;
                    }));
      if (!(named && source.shape[dim] == 1))
        keep.push_back(source.strides[dim]);
    }
    if (keep.size() != out.shape.size())
      return fail("result rank does not match the squeezed dimensions");
    out.strides = keep;
    break;
  }
  case ViewKind::Slice:
  case ViewKind::Narrow:
  case ViewKind::Select: {
    ViewKind kind = classify(kernel);
    int64_t dim = dimArg("dim", 0);
    if (dim < 0 || dim >= rank)
      return fail("dimension out of range");
    const int64_t extent = source.shape[dim];
    int64_t start = kind == ViewKind::Select
                        ? args.integer("index").value_or(0)
                        : args.integer("start").value_or(0);
    if (start < 0)
      start += extent;
    const int64_t step =
        kind == ViewKind::Slice ? args.integer("step").value_or(1) : 1;
    if (step < 1)
      return fail("step " + Twine(step) + " is not positive");
    // Select reads one element along `dim`; slice and narrow the result's
    // extent, every `step`-th from `start`. Torch clamps a slice's start.
    int64_t count = 1;
    if (kind == ViewKind::Slice)
      start = std::clamp<int64_t>(start, 0, extent);
    if (kind != ViewKind::Select)
      count = dim < static_cast<int64_t>(out.shape.size()) ? out.shape[dim] : 0;
    std::optional<int64_t> last = checkedMulAdd(start, count - 1, step);
    if (start < 0 || (count > 0 && (!last || *last >= extent)))
      return fail("elements from " + Twine(start) + " (" + Twine(count) +
                  ", step " + Twine(step) +
                  ") are out of range for a dimension of size " +
                  Twine(extent));
    std::optional<int64_t> offset =
        checkedMulAdd(out.elementOffset, start, source.strides[dim]);
    std::optional<int64_t> stride = checkedMul(source.strides[dim], step);
    if (!offset || !stride)
      return fail("its element offset or stride overflows");
    out.elementOffset = *offset;
    out.strides = source.strides;
    if (kind == ViewKind::Select)
      out.strides.erase(out.strides.begin() + dim);
    else
      out.strides[dim] = *stride;
    break;
  }
  case ViewKind::Split: {
    // Consecutive pieces along `dim`; unbind drops that dimension.
    int64_t dim = dimArg("dim", 0);
    if (dim < 0 || dim >= rank)
      return fail("dimension out of range");
    int64_t start = 0;
    for (Layout &piece : results) {
      std::optional<int64_t> offset =
          checkedMulAdd(source.elementOffset, start, source.strides[dim]);
      if (!offset)
        return fail("its element offset overflows");
      piece.elementOffset = *offset;
      piece.strides = source.strides;
      if (piece.shape.size() + 1 == source.shape.size()) {
        piece.strides.erase(piece.strides.begin() + dim);
        start += 1;
      } else if (piece.shape.size() == source.shape.size()) {
        start += piece.shape[dim];
      } else {
        return fail("result rank does not match the view's arguments");
      }
      if (start > source.shape[dim])
        return fail("the pieces span more than the " +
                    Twine(source.shape[dim]) + " elements of the dimension");
    }
    break;
  }
  }
  for (const Layout &layout : results)
    if (layout.strides.size() != layout.shape.size())
      return fail("result rank does not match the view's arguments");
  return results;
}
