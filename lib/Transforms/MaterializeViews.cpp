//===- MaterializeViews.cpp - Copies for reshapes no layout can view ------===//
//
// torch keeps an input's strides through some kernels (a `mul` of a
// permuted tensor is permuted too) and then reshapes the result as a view;
// here every compute result is contiguous, so the same reshape may need a
// copy. This finds such reshapes before planning, from the layouts the
// lowering will compute, and makes them compute ops, which the planner then
// places like any other result.
//
//===----------------------------------------------------------------------===//

#include "coop/Dialect/Coop/IR/CoopOps.h"
#include "coop/Transforms/Passes.h"
#include "coop/Transforms/ViewLayout.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::coop {
#define GEN_PASS_DEF_COOPMATERIALIZEVIEWS
#include "coop/Transforms/Passes.h.inc"
} // namespace mlir::coop

using namespace mlir;
using namespace mlir::coop;

namespace {

Layout contiguousOf(Type type) {
  return Layout::contiguous(cast<RankedTensorType>(type).getShape());
}

struct CoopMaterializeViewsPass
    : public mlir::coop::impl::CoopMaterializeViewsBase<
          CoopMaterializeViewsPass> {
  void runOnOperation() override {
    materializeUnviewableReshapes(getOperation());
  }
};

} // namespace

unsigned mlir::coop::materializeUnviewableReshapes(Operation *step) {
  auto func = dyn_cast<func::FuncOp>(step);
  if (!func || !isTrainingStep(func))
    return 0;
  // The lowering's layouts: arguments and fresh results contiguous, an
  // in-place result where its operand lives (a copy-on-write result is
  // contiguous, which allows every reshape this allows).
  DenseMap<Value, Layout> layouts;
  for (BlockArgument arg : func.getArguments())
    layouts[arg] = contiguousOf(arg.getType());
  SmallVector<ViewOp> unviewable;
  func.walk([&](Operation *op) {
    if (auto compute = dyn_cast<ComputeOp>(op)) {
      for (auto [index, result] : llvm::enumerate(compute.getResults())) {
        std::optional<unsigned> input = compute.getInplaceOperand(index);
        layouts[result] = input ? layouts.lookup(compute.getOperand(*input))
                                : contiguousOf(result.getType());
      }
      return;
    }
    auto view = dyn_cast<ViewOp>(op);
    if (!view)
      return;
    std::string error;
    FailureOr<SmallVector<Layout>> viewed =
        applyView(view.getKernel(), view.getArgsAttr(),
                  layouts.lookup(view.getSource()), view.getResultTypes(), error);
    if (succeeded(viewed)) {
      for (auto [result, layout] : llvm::zip(view.getResults(), *viewed))
        layouts[result] = layout;
      return;
    }
    // Anything else that cannot be laid out is the lowering's to report, as
    // is a reshape written through: a copy would not see the write.
    if (isReshapeView(view.getKernel()) && view.getNumResults() == 1 &&
        !anyUseOfStorage(view.getResult(0), writesInPlace)) {
      unviewable.push_back(view);
      layouts[view.getResult(0)] = contiguousOf(view.getResult(0).getType());
    }
  });
  for (ViewOp view : unviewable) {
    OpBuilder builder(view);
    auto copy = builder.create<ComputeOp>(view.getLoc(), view.getResultTypes(),
                                          ValueRange{view.getSource()},
                                          ArrayRef<NamedAttribute>{});
    copy.setKernel("aten.reshape");
    if (DictionaryAttr args = view.getArgsAttr())
      copy.setArgsAttr(args);
    view.getResult(0).replaceAllUsesWith(copy.getResult(0));
    view.erase();
  }
  return unviewable.size();
}
