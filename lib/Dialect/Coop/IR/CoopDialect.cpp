//===- CoopDialect.cpp - coop dialect and its step-level verifier ---------===//

#include "coop/Dialect/Coop/IR/CoopDialect.h"
#include "coop/Dialect/Coop/IR/CoopOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::coop;

#include "coop/Dialect/Coop/IR/CoopOpsDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "coop/Dialect/Coop/IR/CoopAttrs.cpp.inc"

void CoopDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "coop/Dialect/Coop/IR/CoopOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "coop/Dialect/Coop/IR/CoopAttrs.cpp.inc"
      >();
}

bool mlir::coop::isTrainingStep(func::FuncOp func) {
  return func->hasAttr(CoopDialect::kStepAttrName);
}

/// True if `from` reads, directly or through other ops of its block, a
/// result of `target`.
static bool readsResultOf(Operation *from, Operation *target) {
  SmallVector<Operation *> worklist{from};
  llvm::SmallPtrSet<Operation *, 16> visited;
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!visited.insert(op).second)
      continue;
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (def == target)
        return true;
      if (def && def->getBlock() == from->getBlock())
        worklist.push_back(def);
    }
  }
  return false;
}

/// Checks that every operand is defined earlier in the step. MLIR's own
/// dominance check would catch this too, but only after this verifier and
/// without telling a cycle apart from a mere ordering mistake.
static LogicalResult verifyExecutionOrder(Operation &op) {
  for (OpOperand &use : op.getOpOperands()) {
    Operation *def = use.get().getDefiningOp();
    if (!def || def->getBlock() != op.getBlock())
      continue;
    if (def != &op && def->isBeforeInBlock(&op))
      continue;
    bool cycle = def == &op || readsResultOf(def, &op);
    InFlightDiagnostic diag = op.emitOpError()
                              << "operand #" << use.getOperandNumber();
    if (cycle)
      diag << " closes a dependence cycle: its producer reads, directly or "
              "transitively, a result of this op";
    else
      diag << " is used before its definition in the step's execution order";
    diag.attachNote(def->getLoc()) << "operand defined here";
    return diag;
  }
  return success();
}

static LogicalResult verifyRoleAttr(Operation *op, unsigned argIndex,
                                    Attribute role) {
  if (isa<RoleAttr>(role))
    return success();
  return op->emitError() << "'" << CoopDialect::kRoleAttrName
                         << "' of argument #" << argIndex
                         << " must be a #coop.role, got " << role;
}

static LogicalResult verifyStep(func::FuncOp func) {
  if (func.isExternal())
    return func.emitOpError("marked 'coop.step' must have a body");
  if (!func.getBody().hasOneBlock())
    return func.emitOpError("marked 'coop.step' must have exactly one block, "
                            "the ops in execution order");
  for (auto [index, type] : llvm::enumerate(func.getArgumentTypes())) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape())
      return func.emitOpError() << "argument #" << index
                                << " must be a statically shaped tensor, got "
                                << type;
    Attribute role = func.getArgAttr(index, CoopDialect::kRoleAttrName);
    if (!role)
      return func.emitOpError()
             << "argument #" << index
             << " needs a 'coop.role' (parameter, gradient, "
                "optimizer_state, buffer or input)";
    if (failed(verifyRoleAttr(func, index, role)))
      return failure();
    std::string why;
    if (failed(getTensorByteSize(tensor, &why)))
      return func.emitOpError()
             << "argument #" << index << " has type " << tensor << ", " << why;
  }
  for (Operation &op : func.front()) {
    if (!isa<CoopDialect>(op.getDialect()) && !isa<func::ReturnOp>(op))
      return op.emitOpError(
          "is not allowed in a coop step; only coop ops and func.return are");
    if (failed(verifyExecutionOrder(op)))
      return failure();
  }
  return success();
}

/// The plan summary must at least say which budget and policy it was made
/// for: the verifier and the lowering read them back.
static LogicalResult verifyPlanAttr(Operation *op, Attribute value) {
  auto plan = dyn_cast<DictionaryAttr>(value);
  if (!plan || !op->hasAttr(CoopDialect::kStepAttrName))
    return op->emitError() << "'" << CoopDialect::kPlanAttrName
                           << "' must be a dictionary on a coop.step function";
  auto budget = plan.getAs<IntegerAttr>("budget");
  if (!budget || budget.getInt() <= 0)
    return op->emitError() << "'" << CoopDialect::kPlanAttrName
                           << "' needs a positive integer 'budget'";
  if (!plan.getAs<StringAttr>("policy"))
    return op->emitError() << "'" << CoopDialect::kPlanAttrName
                           << "' needs a string 'policy'";
  return success();
}

LogicalResult CoopDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  if (attr.getName() == kPlanAttrName)
    return verifyPlanAttr(op, attr.getValue());
  if (attr.getName() == kCostsAttrName) {
    if (!isa<DictionaryAttr>(attr.getValue()) || !op->hasAttr(kStepAttrName))
      return op->emitError() << "'" << kCostsAttrName
                             << "' must be a dictionary on a coop.step function";
    return success();
  }
  if (attr.getName() != kStepAttrName)
    return op->emitError() << "unknown coop attribute '"
                           << attr.getName().getValue() << "'";
  auto func = dyn_cast<func::FuncOp>(op);
  if (!func || !isa<UnitAttr>(attr.getValue()))
    return op->emitError() << "'" << kStepAttrName
                           << "' must be a unit attribute on a func.func";
  return verifyStep(func);
}

LogicalResult CoopDialect::verifyRegionArgAttribute(Operation *op,
                                                    unsigned regionIndex,
                                                    unsigned argIndex,
                                                    NamedAttribute attr) {
  if (attr.getName() == kNameAttrName) {
    if (!isa<StringAttr>(attr.getValue()))
      return op->emitError() << "'" << kNameAttrName << "' of argument #"
                             << argIndex << " must be a string";
    return success();
  }
  if (attr.getName() == kOffsetAttrName) {
    auto offset = dyn_cast<IntegerAttr>(attr.getValue());
    if (!offset || offset.getInt() < 0)
      return op->emitError() << "'" << kOffsetAttrName << "' of argument #"
                             << argIndex
                             << " must be a non-negative integer offset";
    return success();
  }
  if (attr.getName() != kRoleAttrName)
    return op->emitError() << "unknown coop argument attribute '"
                           << attr.getName().getValue() << "'";
  return verifyRoleAttr(op, argIndex, attr.getValue());
}

LogicalResult CoopDialect::verifyRegionResultAttribute(Operation *op,
                                                       unsigned regionIndex,
                                                       unsigned resultIndex,
                                                       NamedAttribute attr) {
  return op->emitError() << "coop attribute '" << attr.getName().getValue()
                         << "' is not allowed on result #" << resultIndex
                         << "; roles belong to step arguments";
}
