//===- CoopOps.h - coop dialect attributes and operations --------*- C++ -*-===//

#ifndef COOP_DIALECT_COOP_IR_COOPOPS_H
#define COOP_DIALECT_COOP_IR_COOPOPS_H

#include "coop/Dialect/Coop/IR/CoopDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "coop/Dialect/Coop/IR/CoopEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "coop/Dialect/Coop/IR/CoopAttrs.h.inc"

#define GET_OP_CLASSES
#include "coop/Dialect/Coop/IR/CoopOps.h.inc"

namespace mlir::coop {

/// Bytes one element of `type` occupies, or failure for a type without a
/// fixed byte width.
FailureOr<int64_t> getElementByteSize(Type type);

/// Bytes a statically shaped tensor of `type` occupies, or failure for an
/// element type without a fixed byte width or a size above
/// coop::kMaxPlannedBytes; `why` (if given) then says which, in words that
/// complete "has type T, ...".
FailureOr<int64_t> getTensorByteSize(RankedTensorType type,
                                     std::string *why = nullptr);

/// Kernels whose results depend on a random stream and so need `rng`.
bool isRandomKernel(StringRef kernel);

/// Kernels whose in-place results are side effects that their fresh results
/// do not depend on: batch norm in training mode updates the running
/// statistics, but normalizes with the batch's own. Such a kernel can be
/// recomputed for its fresh results, the side effects written to scratch.
bool hasDiscardableInPlaceResults(StringRef kernel);

/// Whether `op` draws random numbers: it has `rng`, or its kernel is known
/// to be random.
bool isRandom(ComputeOp op);

/// Whether `op` computes fresh results from its operands alone: a view, or
/// a compute op with results, none written in place, not random.
bool computesFreshResults(Operation *op);

/// True for a func.func marked as a training step.
bool isTrainingStep(func::FuncOp func);

/// Whether `predicate` holds for a use of `value` or, transitively, of a
/// view of it: the uses that reach `value`'s storage.
bool anyUseOfStorage(Value value, function_ref<bool(OpOperand &)> predicate);

/// Whether the op that owns `use` writes that operand in place.
bool writesInPlace(OpOperand &use);

} // namespace mlir::coop

#endif // COOP_DIALECT_COOP_IR_COOPOPS_H
