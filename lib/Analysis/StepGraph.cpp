//===- StepGraph.cpp - A coop.step function as a planner graph ------------===//

#include "coop/Analysis/StepGraph.h"
#include "coop/Dialect/Coop/IR/CoopOps.h"

using namespace mlir;
using namespace mlir::coop;

static planner::TensorRole toPlannerRole(Role role) {
  switch (role) {
  case Role::Parameter:
    return planner::TensorRole::Parameter;
  case Role::Gradient:
    return planner::TensorRole::Gradient;
  case Role::OptimizerState:
    return planner::TensorRole::OptimizerState;
  case Role::Buffer:
    return planner::TensorRole::Buffer;
  case Role::Input:
    return planner::TensorRole::Input;
  }
  llvm_unreachable("unknown coop role");
}

static int64_t byteSize(Value value) {
  // The dialect verifier guarantees a fixed-width, statically shaped type.
  return *getTensorByteSize(cast<RankedTensorType>(value.getType()));
}

static std::vector<int64_t> resultBytes(Operation *op) {
  std::vector<int64_t> bytes;
  for (Value result : op->getResults())
    bytes.push_back(byteSize(result));
  return bytes;
}

StepGraph::StepGraph(Operation *op) {
  auto func = cast<func::FuncOp>(op);
  for (BlockArgument arg : func.getArguments()) {
    auto role = func.getArgAttrOfType<RoleAttr>(arg.getArgNumber(),
                                                CoopDialect::kRoleAttrName);
    planner::TensorRole plannerRole =
        role ? toPlannerRole(role.getValue()) : planner::TensorRole::Activation;
    tensorIds[arg] = graph.addArgument(
        "arg" + std::to_string(arg.getArgNumber()), byteSize(arg), plannerRole);
  }

  auto idsOf = [&](ValueRange values) {
    std::vector<planner::TensorId> ids;
    for (Value value : values)
      ids.push_back(tensorIds.lookup(value));
    return ids;
  };
  for (Operation &nested : func.front()) {
    // A planned step also holds what the plan added; the graph is the
    // original step, so re-executions only alias the tensors they rebuild.
    if (isa<EvictOp, FreeOp>(nested))
      continue;
    if (std::optional<int64_t> original = getRecomputeOf(&nested)) {
      if (failed(mapRecomputation(&nested, *original)))
        return;
      continue;
    }
    planner::OpId id;
    if (auto compute = dyn_cast<ComputeOp>(nested)) {
      std::vector<int32_t> inplace;
      for (unsigned i = 0, e = compute.getNumResults(); i < e; ++i) {
        std::optional<unsigned> operand = compute.getInplaceOperand(i);
        inplace.push_back(operand ? static_cast<int32_t>(*operand)
                                  : planner::kNone);
      }
      id = graph.addOp(compute.getKernel().str(), idsOf(compute.getInputs()),
                       resultBytes(compute), inplace,
                       compute.getCostUsAttr()
                           ? compute.getCostUsAttr().getValueAsDouble()
                           : 0.0,
                       compute.getWorkspaceBytes().value_or(0));
      planner::Op &plannerOp = graph.ops[id];
      plannerOp.discardableInPlace =
          hasDiscardableInPlaceResults(compute.getKernel());
      if (std::optional<RngAttr> rng = compute.getRng()) {
        plannerOp.isRandom = true;
        plannerOp.seed = rng->getSeed();
        plannerOp.offset = rng->getOffset();
      }
    } else if (auto view = dyn_cast<ViewOp>(nested)) {
      id = graph.addView(view.getKernel().str(),
                         tensorIds.lookup(view.getSource()), resultBytes(view));
    } else if (auto ret = dyn_cast<func::ReturnOp>(nested)) {
      for (Value value : ret.getOperands())
        graph.markStepOutput(tensorIds.lookup(value));
      continue;
    } else {
      fail(&nested, "unsupported op '" +
                        nested.getName().getStringRef().str() +
                        "' in a coop step");
      return;
    }
    ops.push_back(&nested);
    for (auto [result, tensor] :
         llvm::zip(nested.getResults(), graph.ops[id].outputs))
      tensorIds[result] = tensor;
  }
  if (planner::Status status = graph.finalize(); !status)
    fail(op, status.message());
}

std::optional<int64_t> StepGraph::getRecomputeOf(Operation *op) {
  if (auto compute = dyn_cast<ComputeOp>(op))
    return compute.getRecomputeOf();
  if (auto view = dyn_cast<ViewOp>(op))
    return view.getRecomputeOf();
  return std::nullopt;
}

LogicalResult StepGraph::mapRecomputation(Operation *op, int64_t original) {
  if (original >= static_cast<int64_t>(ops.size())) {
    fail(op, "'recompute_of' names op #" + std::to_string(original) +
                 ", which has not run yet (" + std::to_string(ops.size()) +
                 " ops ran before this one)");
    return failure();
  }
  Operation *source = ops[original];
  if (source->getName() != op->getName() ||
      source->getAttr("kernel") != op->getAttr("kernel") ||
      source->getResultTypes() != op->getResultTypes()) {
    fail(op, "'recompute_of' names op #" + std::to_string(original) +
                 ", which is a different kernel or has other result types");
    return failure();
  }
  for (auto [result, tensor] :
       llvm::zip(op->getResults(), graph.ops[original].outputs))
    tensorIds[result] = tensor;
  return success();
}

void StepGraph::fail(Operation *op, std::string message) {
  error = std::move(message);
  errorLoc = op->getLoc();
}
