//===- Unplanned.cpp - Checks for passes that run before planning ---------===//

#include "coop/Transforms/Unplanned.h"

#include "coop/Dialect/Coop/IR/CoopOps.h"

using namespace mlir;
using namespace mlir::coop;

LogicalResult mlir::coop::transformUnplannedTrainingStep(
    func::FuncOp func, StringRef passName,
    llvm::function_ref<void(Block &body)> transform) {
  if (!isTrainingStep(func))
    return success();
  if (func->hasAttr(CoopDialect::kPlanAttrName))
    return func.emitError() << "step @" << func.getSymName()
                            << " is already planned ('"
                            << CoopDialect::kPlanAttrName << "'); "
                            << passName << " runs before planning";
  WalkResult walk = func.walk([&](Operation *op) {
    StringRef trace;
    if (isa<EvictOp, FreeOp>(op))
      trace = "is a release";
    else if (auto compute = dyn_cast<ComputeOp>(op);
             compute && (compute.getOffsets() || compute.getWorkspaceOffset()))
      trace = "has arena offsets";
    else if (op->hasAttr("recompute_of"))
      trace = "is a recomputation";
    if (trace.empty())
      return WalkResult::advance();
    op->emitOpError() << trace << " of a planned step; " << passName
                      << " runs before planning";
    return WalkResult::interrupt();
  });
  if (walk.wasInterrupted())
    return failure();
  transform(func.front());
  return success();
}
