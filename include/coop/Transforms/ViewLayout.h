//===- ViewLayout.h - Where a view's elements live ---------------*- C++ -*-===//
//
// Views own no memory; the runtime reads them through strides. The lowering
// computes each view's strides and element offset from its source's, with
// the semantics of the aten view kernels.
//
//===----------------------------------------------------------------------===//
#ifndef COOP_TRANSFORMS_VIEWLAYOUT_H
#define COOP_TRANSFORMS_VIEWLAYOUT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/TypeRange.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace mlir::coop {

/// Strides and element offset of a tensor over its storage.
struct Layout {
  SmallVector<int64_t> shape;
  SmallVector<int64_t> strides; // in elements
  int64_t elementOffset = 0;

  static Layout contiguous(ArrayRef<int64_t> shape);
  bool isContiguous() const;
};

/// The layouts of the results of view kernel `kernel` (with or without an
/// overload suffix) applied to `source`, given the aten arguments and the
/// result types. Fails with a reason in `error` for unknown view kernels and
/// arguments that do not fit the shapes.
FailureOr<SmallVector<Layout>> applyView(StringRef kernel, DictionaryAttr args,
                                         const Layout &source,
                                         TypeRange resultTypes,
                                         std::string &error);

/// Whether `kernel` is a reshape (view, _unsafe_view, reshape, view_as,
/// _reshape_alias): one that may also be computed as a copy.
bool isReshapeView(StringRef kernel);

/// In a training step, replaces each reshape view that the layouts of this
/// compiler cannot express (compute results are contiguous, where torch's
/// may keep an input's strides) with a copy, `coop.compute "aten.reshape"`,
/// unless something writes in place through it. Returns how many.
unsigned materializeUnviewableReshapes(Operation *step);

/// In a training step, lets results take over the buffers of operands that
/// die with them (coop-reuse-buffers): `aten._unsafe_view` of a value used
/// by nothing else becomes a view, and add/sub/mul/div whose first operand
/// has the result's type and no other use write in place over it. Returns
/// how many ops changed.
unsigned reuseDyingBuffers(Operation *step);

} // namespace mlir::coop

#endif // COOP_TRANSFORMS_VIEWLAYOUT_H
