//===- Unplanned.h - Checks for passes that run before planning -*- C++ -*-===//

#ifndef COOP_TRANSFORMS_UNPLANNED_H
#define COOP_TRANSFORMS_UNPLANNED_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::coop {

/// For a pass that adds, removes or moves ops (`passName`): runs `transform`
/// on the body of `func` if it is a training step, and does nothing to other
/// functions. Fails, naming the first sign of it, if the step was planned
/// already (`coop.plan`, an op with an arena place or a recomputation, or a
/// release): the plan's op indices and places would no longer match.
LogicalResult transformUnplannedTrainingStep(
    func::FuncOp func, StringRef passName,
    llvm::function_ref<void(Block &body)> transform);

} // namespace mlir::coop

#endif // COOP_TRANSFORMS_UNPLANNED_H
