//===- ReuseBuffers.cpp - Results that take over dying operands' buffers --===//
//
// Two rewrites that let a result live where an operand that dies with it
// lived, so that neither the step nor any recomputation of it needs both
// buffers at once (the difference between planning a 1 GiB input projection
// of a recurrent layer in the arena or not):
// * `aten._unsafe_view` becomes a view, as it is in ATen (an alias torch's
//   autograd does not track), when its source has no other use: then
//   aliasing and copying cannot be told apart.
// * a plain elementwise op whose first operand has its result's type and is
//   used by nothing else (a compute result, or a reshape view of one that
//   nothing else uses) writes its result in place over that operand.
//
//===----------------------------------------------------------------------===//

#include "coop/Dialect/Coop/IR/CoopOps.h"
#include "coop/Transforms/Passes.h"
#include "coop/Transforms/ViewLayout.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSwitch.h"

namespace mlir::coop {
#define GEN_PASS_DEF_COOPREUSEBUFFERS
#include "coop/Transforms/Passes.h.inc"
} // namespace mlir::coop

using namespace mlir;
using namespace mlir::coop;

namespace {

/// Kernels whose element i of the result depends on element i of `self`
/// only (the others broadcast), so the result may overwrite `self`.
bool writesElementwise(StringRef kernel) {
  return llvm::StringSwitch<bool>(kernel)
      .Cases("aten.add.Tensor", "aten.sub.Tensor", "aten.mul.Tensor",
             "aten.div.Tensor", true)
      .Default(false);
}

/// Whether `value` is a fresh compute result, or a chain of reshape views
/// of one, that nothing but its single user reads.
bool diesAtItsOnlyUse(Value value) {
  while (true) {
    if (!value.hasOneUse())
      return false;
    Operation *producer = value.getDefiningOp();
    if (!producer)
      return false; // a step argument: persistent
    if (auto compute = dyn_cast<ComputeOp>(producer))
      return !compute.getInplaceOperand(
          cast<OpResult>(value).getResultNumber());
    auto view = dyn_cast<ViewOp>(producer);
    if (!view || view.getNumResults() != 1 || !isReshapeView(view.getKernel()))
      return false;
    value = view.getSource();
  }
}

struct CoopReuseBuffersPass
    : public mlir::coop::impl::CoopReuseBuffersBase<CoopReuseBuffersPass> {
  void runOnOperation() override { reuseDyingBuffers(getOperation()); }
};

} // namespace

unsigned mlir::coop::reuseDyingBuffers(Operation *step) {
  auto func = dyn_cast<func::FuncOp>(step);
  if (!func || !isTrainingStep(func))
    return 0;
  unsigned rewritten = 0;
  SmallVector<ComputeOp> unsafeViews;
  func.walk([&](ComputeOp compute) {
    if (compute.getKernel() == "aten._unsafe_view" &&
        compute.getNumOperands() == 1 && compute.getNumResults() == 1 &&
        !compute.getInplace() && diesAtItsOnlyUse(compute.getOperand(0)))
      unsafeViews.push_back(compute);
  });
  for (ComputeOp compute : unsafeViews) {
    OpBuilder builder(compute);
    auto view = builder.create<ViewOp>(compute.getLoc(), compute.getResultTypes(),
                                       compute.getOperands(),
                                       ArrayRef<NamedAttribute>{});
    view.setKernel(compute.getKernel());
    if (DictionaryAttr args = compute.getArgsAttr())
      view.setArgsAttr(args);
    compute.getResult(0).replaceAllUsesWith(view.getResult(0));
    compute.erase();
    ++rewritten;
  }
  func.walk([&](ComputeOp compute) {
    if (!writesElementwise(compute.getKernel()) || compute.getInplace() ||
        compute.getNumResults() != 1 || compute.getNumOperands() == 0)
      return;
    Value self = compute.getOperand(0);
    if (self.getType() != compute.getResult(0).getType() ||
        llvm::is_contained(compute.getOperands().drop_front(), self) ||
        !diesAtItsOnlyUse(self))
      return;
    compute.setInplace(ArrayRef<int64_t>{0});
    ++rewritten;
  });
  return rewritten;
}
