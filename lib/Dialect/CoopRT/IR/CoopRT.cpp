//===- CoopRT.cpp - The runtime-facing plan dialect -----------------------===//

#include "coop/Dialect/CoopRT/IR/CoopRT.h"
#include "coop/Support/CheckedArithmetic.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::coop_rt;

#include "coop/Dialect/CoopRT/IR/CoopRTDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "coop/Dialect/CoopRT/IR/CoopRTAttrs.cpp.inc"

#define GET_OP_CLASSES
#include "coop/Dialect/CoopRT/IR/CoopRTOps.cpp.inc"

void CoopRTDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "coop/Dialect/CoopRT/IR/CoopRTOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "coop/Dialect/CoopRT/IR/CoopRTAttrs.cpp.inc"
      >();
}

LogicalResult
BufferAttr::verify(function_ref<InFlightDiagnostic()> emitError, int64_t offset,
                   int64_t size, Type elementType, DenseI64ArrayAttr shape,
                   DenseI64ArrayAttr strides, int64_t elementOffset) {
  if (offset < 0 || size < 0 || elementOffset < 0)
    return emitError() << "buffer offset, size and element offset must be "
                          "non-negative";
  if (!elementType.isIntOrFloat())
    return emitError() << "buffer element type must be an integer or float, "
                          "got "
                       << elementType;
  if (shape.size() != strides.size())
    return emitError() << "buffer has " << shape.size() << " dimensions but "
                       << strides.size() << " strides";
  // The farthest element the tensor reads must lie inside its storage;
  // no sum or product may wrap on the way there.
  for (auto [dim, stride] : llvm::zip(shape.asArrayRef(), strides.asArrayRef())) {
    if (dim < 0 || stride < 0)
      return emitError() << "buffer dimensions and strides must be "
                            "non-negative";
    if (dim == 0)
      return success();
  }
  std::optional<int64_t> last = ::coop::lastElementAddressed(
      shape.asArrayRef(), strides.asArrayRef(), elementOffset);
  int64_t elementBytes = (elementType.getIntOrFloatBitWidth() + 7) / 8;
  std::optional<int64_t> end =
      last ? ::coop::checkedAdd(*last, 1) : std::nullopt;
  if (end)
    end = ::coop::checkedMul(*end, elementBytes);
  if (!end)
    return emitError() << "buffer's last element lies past 2^63 bytes";
  if (*end > size)
    return emitError() << "buffer reads element " << *last
                       << ", past the end of its " << size << "-byte storage";
  return success();
}

LogicalResult ProgramOp::verify() {
  if (getArenaBytes() <= 0)
    return emitOpError("needs a positive arena size");
  int64_t arena = getArenaBytes();
  auto inArena = [&](Operation *op, BufferAttr buffer) -> LogicalResult {
    std::optional<int64_t> end =
        ::coop::checkedAdd(buffer.getOffset(), buffer.getSize());
    if (end && *end <= arena)
      return success();
    return op->emitOpError()
           << "uses bytes "
           << ::coop::byteRangeText(buffer.getOffset(), buffer.getSize())
           << " outside the arena of " << arena << " bytes";
  };
  auto allInArena = [&](Operation *op, ArrayAttr buffers) -> LogicalResult {
    for (Attribute buffer : buffers)
      if (failed(inArena(op, cast<BufferAttr>(buffer))))
        return failure();
    return success();
  };
  for (Operation &op : getBody().front()) {
    LogicalResult result =
        llvm::TypeSwitch<Operation *, LogicalResult>(&op)
            .Case([&](ArgumentOp argument) {
              return inArena(argument, argument.getBuffer());
            })
            .Case([&](LaunchOp launch) {
              if (failed(allInArena(launch, launch.getInputs())) ||
                  failed(allInArena(launch, launch.getOutputs())))
                return failure();
              if (BufferAttr workspace = launch.getWorkspaceAttr())
                return inArena(launch, workspace);
              return success();
            })
            .Case([&](OutputOp output) {
              return allInArena(output, output.getBuffers());
            })
            .Default([](Operation *other) {
              return other->emitOpError("is not allowed in a coop_rt.program");
            });
    if (failed(result))
      return failure();
  }
  return success();
}

LogicalResult LaunchOp::verify() {
  if (getKernel().empty())
    return emitOpError("needs a non-empty kernel name");
  std::optional<ArrayRef<int64_t>> inplace = getInplace();
  if (!inplace)
    return success();
  if (inplace->size() != getOutputs().size())
    return emitOpError() << "'inplace' has " << inplace->size()
                         << " entries for " << getOutputs().size()
                         << " outputs";
  for (int64_t input : *inplace)
    if (input < -1 || input >= static_cast<int64_t>(getInputs().size()))
      return emitOpError() << "'inplace' names input #" << input
                           << ", which does not exist";
  return success();
}
