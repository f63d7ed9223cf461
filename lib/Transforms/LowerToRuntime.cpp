//===- LowerToRuntime.cpp - Planned steps to coop_rt programs -------------===//

#include "coop/Dialect/Coop/IR/CoopOps.h"
#include "coop/Dialect/CoopRT/IR/CoopRT.h"
#include "coop/Transforms/Passes.h"
#include "coop/Transforms/ViewLayout.h"

#include "mlir/IR/Builders.h"

namespace mlir::coop {
#define GEN_PASS_DEF_COOPLOWERTORUNTIME
#include "coop/Transforms/Passes.h.inc"
} // namespace mlir::coop

using namespace mlir;
using namespace mlir::coop;

namespace {

/// Where a tensor value's elements are: its storage's byte range in the
/// arena and its layout over that storage.
struct Placement {
  int64_t offset = 0;
  int64_t size = 0;
  Layout layout;
};

class ProgramBuilder {
public:
  ProgramBuilder(func::FuncOp func, OpBuilder &builder)
      : func(func), builder(builder) {}

  /// Emits the program before `func`; the caller erases `func`.
  LogicalResult build();

private:
  LogicalResult placeArguments();
  LogicalResult lowerCompute(ComputeOp compute);
  LogicalResult lowerView(ViewOp view);
  LogicalResult moveFinalVersionsHome();
  coop_rt::BufferAttr bufferOf(Value value, Location at);
  ArrayAttr buffersOf(ValueRange values, Location at);
  void placeContiguous(Value value, int64_t offset);

  func::FuncOp func;
  OpBuilder &builder;
  DenseMap<Value, Placement> placements;
  /// The value that owns the storage a value lives in (itself, the source
  /// of a view, the first version of an in-place chain).
  DenseMap<Value, Value> storageOf;
  /// The newest version written into each storage.
  DenseMap<Value, Value> latestVersion;
};

void ProgramBuilder::placeContiguous(Value value, int64_t offset) {
  auto type = cast<RankedTensorType>(value.getType());
  placements[value] = {offset, *getTensorByteSize(type),
                       Layout::contiguous(type.getShape())};
}

/// The buffer of `value`, or null after an error at `at` when coop_rt's
/// verifier would refuse it (and so the printed program not parse): a
/// view past its storage, an element type the runtime has no dtype for.
coop_rt::BufferAttr ProgramBuilder::bufferOf(Value value, Location at) {
  const Placement &place = placements.lookup(value);
  auto type = cast<RankedTensorType>(value.getType());
  return coop_rt::BufferAttr::getChecked(
      [&] {
        return emitError(at) << "cannot lower a value of type " << type << ": ";
      },
      builder.getContext(), place.offset, place.size, type.getElementType(),
      builder.getDenseI64ArrayAttr(place.layout.shape),
      builder.getDenseI64ArrayAttr(place.layout.strides),
      place.layout.elementOffset);
}

ArrayAttr ProgramBuilder::buffersOf(ValueRange values, Location at) {
  SmallVector<Attribute> buffers;
  for (Value value : values) {
    coop_rt::BufferAttr buffer = bufferOf(value, at);
    if (!buffer)
      return nullptr;
    buffers.push_back(buffer);
  }
  return builder.getArrayAttr(buffers);
}

/// The name the runtime binds an argument by: the exporter's
/// ("layer1.0.conv1.weight"), else its position.
static std::string argumentName(func::FuncOp func, BlockArgument arg) {
  if (auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                    CoopDialect::kNameAttrName))
    return name.str();
  return "arg" + std::to_string(arg.getArgNumber());
}

LogicalResult ProgramBuilder::placeArguments() {
  for (BlockArgument arg : func.getArguments()) {
    unsigned index = arg.getArgNumber();
    auto offset = func.getArgAttrOfType<IntegerAttr>(
        index, CoopDialect::kOffsetAttrName);
    if (!offset)
      return emitError(func.getLoc())
             << "argument #" << index << " of a planned step has no '"
             << CoopDialect::kOffsetAttrName << "'";
    placeContiguous(arg, offset.getInt());
    storageOf[arg] = arg;
    auto role = func.getArgAttrOfType<RoleAttr>(index,
                                                CoopDialect::kRoleAttrName);
    coop_rt::BufferAttr buffer = bufferOf(arg, func.getLoc());
    if (!buffer)
      return failure();
    builder.create<coop_rt::ArgumentOp>(
        arg.getLoc(), builder.getI64IntegerAttr(index),
        builder.getStringAttr(argumentName(func, arg)), role, buffer);
  }
  return success();
}

LogicalResult ProgramBuilder::lowerView(ViewOp view) {
  const Placement &source = placements.lookup(view.getSource());
  std::string error;
  FailureOr<SmallVector<Layout>> layouts =
      applyView(view.getKernel(), view.getArgsAttr(), source.layout,
                view.getResultTypes(), error);
  if (failed(layouts))
    return view.emitOpError() << error;
  for (auto [result, layout] : llvm::zip(view.getResults(), *layouts)) {
    placements[result] = {source.offset, source.size, layout};
    storageOf[result] = storageOf.lookup(view.getSource());
    // Checked here, where the view is, not where a launch reads it.
    if (!bufferOf(result, view.getLoc()))
      return failure();
  }
  return success();
}

LogicalResult ProgramBuilder::lowerCompute(ComputeOp compute) {
  std::optional<ArrayRef<int64_t>> offsets = compute.getOffsets();
  if (!offsets)
    return compute.emitOpError("has no 'offsets'; run --coop-plan-memory "
                               "first");
  for (auto [index, result] : llvm::enumerate(compute.getResults())) {
    int64_t offset = (*offsets)[index];
    Value storage = result;
    if (std::optional<unsigned> input = compute.getInplaceOperand(index)) {
      Value overwritten = compute.getOperand(*input);
      storage = storageOf.lookup(overwritten);
      // Written where the operand lives: the operand's own layout, a view's
      // strides included. Elsewhere the plan copies on write.
      if (placements.lookup(overwritten).offset == offset) {
        placements[result] = placements.lookup(overwritten);
        storageOf[result] = storage;
        latestVersion[storage] = result;
        continue;
      }
    }
    placeContiguous(result, offset);
    storageOf[result] = storage;
    // A recomputation rewrites values that exist, or side effects into
    // scratch: never a newer version of persistent state.
    if (!compute.getRecomputeOf())
      latestVersion[storage] = result;
  }
  ArrayAttr inputs = buffersOf(compute.getInputs(), compute.getLoc());
  ArrayAttr outputs = buffersOf(compute.getResults(), compute.getLoc());
  if (!inputs || !outputs)
    return failure();
  auto launch = builder.create<coop_rt::LaunchOp>(
      compute.getLoc(), compute.getKernelAttr(), inputs, outputs,
      compute.getArgsAttr(), compute.getInplaceAttr(), compute.getRngAttr(),
      /*workspace=*/nullptr, compute.getRecomputeOfAttr(),
      compute.getCostUsAttr());
  if (std::optional<int64_t> bytes = compute.getWorkspaceBytes();
      bytes && *bytes > 0) {
    std::optional<int64_t> offset = compute.getWorkspaceOffset();
    if (!offset)
      return compute.emitOpError("has a workspace but no 'workspace_offset'");
    launch.setWorkspaceAttr(coop_rt::BufferAttr::get(
        builder.getContext(), *offset, *bytes, builder.getI8Type(),
        builder.getDenseI64ArrayAttr({*bytes}),
        builder.getDenseI64ArrayAttr({1}), 0));
  }
  return success();
}

/// A persistent tensor's final version must be where the next step expects
/// the tensor: copy it home when the plan wrote it elsewhere (copy on
/// write of a parameter still read after its update).
LogicalResult ProgramBuilder::moveFinalVersionsHome() {
  for (BlockArgument arg : func.getArguments()) {
    Value last = latestVersion.lookup(arg);
    if (!last || placements.lookup(last).offset == placements.lookup(arg).offset)
      continue;
    if (last.getType() != arg.getType())
      return emitError(func.getLoc())
             << "cannot move the final version of argument #"
             << arg.getArgNumber() << " home: it was last written through a "
             << "view of type " << last.getType() << " at another place";
    ArrayAttr from = buffersOf(ValueRange{last}, last.getLoc());
    ArrayAttr to = buffersOf(ValueRange{arg}, last.getLoc());
    if (!from || !to)
      return failure();
    builder.create<coop_rt::LaunchOp>(
        last.getLoc(), builder.getStringAttr("coop.copy"), from, to,
        /*args=*/nullptr, /*inplace=*/nullptr, /*rng=*/nullptr,
        /*workspace=*/nullptr, /*recompute_of=*/nullptr, /*cost_us=*/nullptr);
  }
  return success();
}

LogicalResult ProgramBuilder::build() {
  auto plan = func->getAttrOfType<DictionaryAttr>(CoopDialect::kPlanAttrName);
  if (!plan)
    return emitError(func.getLoc())
           << "cannot lower @" << func.getSymName()
           << ": it is not planned; run --coop-plan-memory first";
  builder.setInsertionPoint(func);
  auto program = builder.create<coop_rt::ProgramOp>(
      func.getLoc(), func.getSymNameAttr(), plan.getAs<IntegerAttr>("budget"),
      plan);
  builder.setInsertionPointToStart(&program.getBody().emplaceBlock());
  if (failed(placeArguments()))
    return failure();
  for (Operation &op : func.front()) {
    LogicalResult lowered = success();
    if (auto compute = dyn_cast<ComputeOp>(op))
      lowered = lowerCompute(compute);
    else if (auto view = dyn_cast<ViewOp>(op))
      lowered = lowerView(view);
    else if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      ArrayAttr outputs = buffersOf(ret.getOperands(), ret.getLoc());
      if (failed(moveFinalVersionsHome()) || !outputs)
        return failure();
      builder.create<coop_rt::OutputOp>(ret.getLoc(), outputs);
    }
    // Evictions and frees need no runtime action: addresses are fixed.
    if (failed(lowered))
      return failure();
  }
  return success();
}

struct CoopLowerToRuntimePass
    : public mlir::coop::impl::CoopLowerToRuntimeBase<CoopLowerToRuntimePass> {
  void runOnOperation() override {
    OpBuilder builder(&getContext());
    SmallVector<func::FuncOp> steps;
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (isTrainingStep(func))
        steps.push_back(func);
    for (func::FuncOp func : steps) {
      if (failed(ProgramBuilder(func, builder).build()))
        return signalPassFailure();
      func.erase();
    }
  }
};

} // namespace
