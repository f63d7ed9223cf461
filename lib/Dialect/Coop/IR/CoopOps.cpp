//===- CoopOps.cpp - coop dialect operations ------------------------------===//

#include "coop/Dialect/Coop/IR/CoopOps.h"
#include "coop/Support/CheckedArithmetic.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::coop;

#include "coop/Dialect/Coop/IR/CoopEnums.cpp.inc"

FailureOr<int64_t> mlir::coop::getElementByteSize(Type type) {
  Type element = type;
  if (auto complex = dyn_cast<ComplexType>(type))
    element = complex.getElementType();
  int64_t bytes;
  if (element.isIndex())
    bytes = 8;
  else if (element.isIntOrFloat())
    bytes = (element.getIntOrFloatBitWidth() + 7) / 8;
  else
    return failure();
  return isa<ComplexType>(type) ? 2 * bytes : bytes;
}

FailureOr<int64_t> mlir::coop::getTensorByteSize(RankedTensorType type,
                                                 std::string *why) {
  auto fail = [&](const Twine &reason) -> FailureOr<int64_t> {
    if (why)
      *why = reason.str();
    return failure();
  };
  if (!type.hasStaticShape())
    return fail("which has no static shape");
  FailureOr<int64_t> elementBytes = getElementByteSize(type.getElementType());
  if (failed(elementBytes))
    return fail("whose element type has no fixed byte width");
  std::optional<int64_t> bytes = *elementBytes;
  for (int64_t dim : type.getShape())
    if (bytes)
      bytes = ::coop::checkedMul(*bytes, dim);
  if (!bytes || *bytes > ::coop::kMaxPlannedBytes)
    return fail("which is too large: more than " +
                Twine(::coop::kMaxPlannedBytes) +
                " bytes (2^62), the largest tensor supported");
  return *bytes;
}

/// "aten.bernoulli_.float" -> "aten.bernoulli_": the kernel without its
/// overload suffix.
static StringRef withoutOverload(StringRef kernel) {
  if (kernel.count('.') > 1)
    return kernel.substr(0, kernel.find('.', kernel.find('.') + 1));
  return kernel;
}

bool mlir::coop::hasDiscardableInPlaceResults(StringRef kernel) {
  return llvm::StringSwitch<bool>(withoutOverload(kernel))
      .Cases("aten.native_batch_norm", "aten._native_batch_norm_legit",
             "aten.cudnn_batch_norm", "aten.miopen_batch_norm", true)
      .Default(false);
}

bool mlir::coop::isRandomKernel(StringRef kernel) {
  return llvm::StringSwitch<bool>(withoutOverload(kernel))
      .Cases("aten.native_dropout", "aten.dropout", "aten.bernoulli",
             "aten.bernoulli_", "aten.rand", "aten.rand_like", true)
      .Cases("aten.randn", "aten.randn_like", "aten.randint",
             "aten.randint_like", "aten.randperm", "aten.normal", true)
      .Cases("aten.normal_", "aten.uniform_", "aten.exponential_",
             "aten.multinomial", "aten.rrelu_with_noise", true)
      .Default(false);
}

/// Every tensor the op touches needs a byte size for the planner.
static LogicalResult verifyByteSizes(Operation *op) {
  auto check = [&](Type type, StringRef kind, unsigned index) -> LogicalResult {
    std::string why;
    if (succeeded(getTensorByteSize(cast<RankedTensorType>(type), &why)))
      return success();
    return op->emitOpError()
           << kind << " #" << index << " has type " << type << ", " << why;
  };
  for (auto [index, type] : llvm::enumerate(op->getOperandTypes()))
    if (failed(check(type, "operand", index)))
      return failure();
  for (auto [index, type] : llvm::enumerate(op->getResultTypes()))
    if (failed(check(type, "result", index)))
      return failure();
  return success();
}

std::optional<unsigned> ComputeOp::getInplaceOperand(unsigned index) {
  std::optional<ArrayRef<int64_t>> inplace = getInplace();
  if (!inplace || (*inplace)[index] < 0)
    return std::nullopt;
  return static_cast<unsigned>((*inplace)[index]);
}

bool mlir::coop::isRandom(ComputeOp op) {
  return op.getRng() || isRandomKernel(op.getKernel());
}

bool mlir::coop::computesFreshResults(Operation *op) {
  if (isa<ViewOp>(op))
    return true;
  auto compute = dyn_cast<ComputeOp>(op);
  if (!compute || compute.getNumResults() == 0 || isRandom(compute))
    return false;
  for (unsigned index = 0; index < compute.getNumResults(); ++index)
    if (compute.getInplaceOperand(index))
      return false;
  return true;
}

bool mlir::coop::anyUseOfStorage(Value value,
                                 function_ref<bool(OpOperand &)> predicate) {
  for (OpOperand &use : value.getUses()) {
    if (predicate(use))
      return true;
    if (auto view = dyn_cast<ViewOp>(use.getOwner()))
      for (Value result : view.getResults())
        if (anyUseOfStorage(result, predicate))
          return true;
  }
  return false;
}

bool mlir::coop::writesInPlace(OpOperand &use) {
  auto compute = dyn_cast<ComputeOp>(use.getOwner());
  if (!compute)
    return false;
  for (unsigned index = 0; index < compute.getNumResults(); ++index)
    if (compute.getInplaceOperand(index) == use.getOperandNumber())
      return true;
  return false;
}

LogicalResult ComputeOp::verify() {
  if (getKernel().empty())
    return emitOpError("needs a non-empty 'kernel' name");
  if (failed(verifyByteSizes(*this)))
    return failure();
  if (FloatAttr cost = getCostUsAttr()) {
    double us = cost.getValueAsDouble();
    if (!std::isfinite(us) || us < 0)
      return emitOpError() << "'cost_us' must be a finite, non-negative time "
                              "in microseconds, got "
                           << us;
  }
  if (std::optional<int64_t> workspace = getWorkspaceBytes())
    if (*workspace < 0 || *workspace > ::coop::kMaxPlannedBytes)
      return emitOpError() << "'workspace_bytes' must be in [0, 2^62 = "
                           << ::coop::kMaxPlannedBytes << "], got "
                           << *workspace;
  if (isRandomKernel(getKernel()) && !getRng())
    return emitOpError() << "'" << getKernel()
                         << "' is a random kernel and needs an 'rng' attribute "
                            "(seed and offset) so that it can be recomputed";

  if (std::optional<ArrayRef<int64_t>> offsets = getOffsets()) {
    if (offsets->size() != getNumResults())
      return emitOpError() << "'offsets' has " << offsets->size()
                           << " entries but the op has " << getNumResults()
                           << " results";
    if (llvm::any_of(*offsets, [](int64_t offset) { return offset < 0; }))
      return emitOpError("'offsets' must be non-negative");
  }
  if (std::optional<int64_t> offset = getWorkspaceOffset())
    if (*offset < 0)
      return emitOpError("'workspace_offset' must be non-negative");
  if (std::optional<int64_t> original = getRecomputeOf())
    if (*original < 0)
      return emitOpError("'recompute_of' must name an op index >= 0");

  std::optional<ArrayRef<int64_t>> inplace = getInplace();
  if (!inplace)
    return success();
  if (inplace->size() != getNumResults())
    return emitOpError() << "'inplace' has " << inplace->size()
                         << " entries but the op has " << getNumResults()
                         << " results";
  llvm::SmallDenseSet<int64_t> overwritten;
  for (auto [index, operand] : llvm::enumerate(*inplace)) {
    if (operand == -1)
      continue;
    if (operand < 0 || operand >= static_cast<int64_t>(getNumOperands()))
      return emitOpError() << "result #" << index
                           << " overwrites unknown storage: operand #"
                           << operand << " does not exist (the op has "
                           << getNumOperands() << " operands)";
    if (!overwritten.insert(operand).second)
      return emitOpError() << "operand #" << operand
                           << " is overwritten in place by more than one "
                              "result";
    Type target = getOperand(operand).getType();
    Type written = getResult(index).getType();
    if (target != written)
      return emitOpError() << "result #" << index << " overwrites operand #"
                           << operand << " in place, so it must have the "
                           << "operand's type " << target << ", not "
                           << written;
  }
  return success();
}

LogicalResult ViewOp::verify() {
  if (getKernel().empty())
    return emitOpError("needs a non-empty 'kernel' name");
  if (getNumResults() == 0)
    return emitOpError("must produce at least one view");
  if (std::optional<int64_t> original = getRecomputeOf())
    if (*original < 0)
      return emitOpError("'recompute_of' must name an op index >= 0");
  return verifyByteSizes(*this);
}

#define GET_OP_CLASSES
#include "coop/Dialect/Coop/IR/CoopOps.cpp.inc"
