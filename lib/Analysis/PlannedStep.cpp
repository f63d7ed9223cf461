//===- PlannedStep.cpp - Read a planned step back as a planner Plan -------===//

#include "coop/Analysis/PlannedStep.h"
#include "coop/Dialect/Coop/IR/CoopOps.h"


using namespace mlir;
using namespace mlir::coop;
using planner::InstructionKind;
using planner::kNone;
using planner::TensorId;

PlannedStep::PlannedStep(Operation *op, AnalysisManager &analyses)
    : step(analyses.getAnalysis<StepGraph>()) {
  if (step.isValid())
    read(cast<func::FuncOp>(op));
  else
    fail(step.getErrorLoc(), step.getError());
}

void PlannedStep::fail(Location loc, std::string message) {
  if (!error.empty())
    return;
  error = std::move(message);
  errorLoc = loc;
}

void PlannedStep::read(func::FuncOp func) {
  auto summary =
      func->getAttrOfType<DictionaryAttr>(CoopDialect::kPlanAttrName);
  if (!summary)
    return fail(func.getLoc(), "@" + func.getSymName().str() +
                                   " is not planned (no 'coop.plan'); run "
                                   "--coop-plan-memory first");
  const planner::Graph &graph = step.getGraph();
  plan.budgetBytes = summary.getAs<IntegerAttr>("budget").getInt();
  if (!planner::policyFromName(
          summary.getAs<StringAttr>("policy").getValue().str(), &plan.policy))
    plan.policy = planner::Policy::Coop;
  if (auto align = summary.getAs<IntegerAttr>("alignment")) {
    alignment = align.getInt();
    if (alignment < 1 || alignment > planner::kMaxAlignment)
      return fail(func.getLoc(), "'coop.plan' alignment must be in [1, " +
                                     std::to_string(planner::kMaxAlignment) +
                                     "] bytes, got " +
                                     std::to_string(alignment));
  }
  residentAt.assign(graph.tensors.size(), -1);
  residentSize.assign(graph.tensors.size(), 0);

  for (BlockArgument arg : func.getArguments()) {
    auto offset = func.getArgAttrOfType<IntegerAttr>(
        arg.getArgNumber(), CoopDialect::kOffsetAttrName);
    if (!offset)
      return fail(func.getLoc(), "argument #" +
                                     std::to_string(arg.getArgNumber()) +
                                     " of a planned step has no 'coop.offset'");
    TensorId tensor = step.getTensorId(arg);
    plan.arguments.push_back(
        {tensor, offset.getInt(), aligned(graph.tensors[tensor].bytes), false});
    residentAt[tensor] = offset.getInt();
    residentSize[tensor] = plan.arguments.back().size;
  }
  for (Operation &op : func.front()) {
    checkOperands(&op);
    if (!isa<func::ReturnOp>(op))
      readOp(&op);
    if (!error.empty())
      return;
  }
}

void PlannedStep::checkOperands(Operation *op) {
  for (OpOperand &use : op->getOpOperands()) {
    // A view is as good as the buffer it reads.
    for (Value value = use.get(); value;) {
      if (Operation *killer = gone.lookup(value)) {
        std::string what = isa<EvictOp>(killer) ? "evicted"
                           : isa<FreeOp>(killer)
                               ? "freed"
                               : "overwritten in place (a stale version)";
        return fail(op->getLoc(), "operand #" +
                                      std::to_string(use.getOperandNumber()) +
                                      " reads a value whose buffer was " +
                                      what + " earlier in the schedule");
      }
      auto view = value.getDefiningOp<ViewOp>();
      value = view ? view.getSource() : Value();
    }
  }
}

void PlannedStep::readOp(Operation *op) {
  if (auto evict = dyn_cast<EvictOp>(op))
    return readRelease(op, evict.getTensor(), InstructionKind::Evict);
  if (auto free = dyn_cast<FreeOp>(op))
    return readRelease(op, free.getTensor(), InstructionKind::Free);
  if (auto view = dyn_cast<ViewOp>(op)) {
    // Re-creating a view over a recomputed source is free and no
    // instruction of the plan; the first run of a view is one.
    if (!view.getRecomputeOf()) {
      planner::Instruction ins;
      ins.op = nextOp++;
      plan.instructions.push_back(std::move(ins));
      instructionOps.push_back(op);
    }
    return;
  }
  readCompute(cast<ComputeOp>(op));
}

void PlannedStep::readCompute(ComputeOp compute) {
  const planner::Graph &graph = step.getGraph();
  std::optional<ArrayRef<int64_t>> offsets = compute.getOffsets();
  if (!offsets)
    return fail(compute.getLoc(), "op in a planned step has no 'offsets'");
  planner::Instruction ins;
  std::optional<int64_t> original = compute.getRecomputeOf();
  ins.kind = original ? InstructionKind::Recompute : InstructionKind::Run;
  ins.op = original ? static_cast<planner::OpId>(*original) : nextOp++;
  const planner::Op &op = graph.ops[ins.op];
  for (auto [index, tensor] : llvm::enumerate(op.outputs)) {
    int64_t offset = (*offsets)[index];
    // A recomputation rewrites outputs that are still resident in place;
    // only the others are allocations.
    if (residentAt[tensor] == offset)
      continue;
    // A side effect that is still resident elsewhere is recomputed into
    // scratch and dropped.
    if (ins.kind == InstructionKind::Recompute && op.discardableInPlace &&
        residentAt[tensor] != -1 && compute.getInplaceOperand(index)) {
      ins.discarded.push_back(
          {tensor, offset, aligned(graph.tensors[tensor].bytes), false});
      continue;
    }
    bool inPlace = false;
    // An in-place result takes over its operand's whole buffer, which is
    // larger than the result when the write goes through a view.
    int64_t size = aligned(graph.tensors[tensor].bytes);
    if (std::optional<unsigned> operand = compute.getInplaceOperand(index)) {
      TensorId overwritten = graph.contentOf(op.inputs[*operand]);
      inPlace = residentAt[overwritten] == offset;
      if (inPlace) {
        size = residentSize[overwritten];
        residentAt[overwritten] = -1;
        Value old = compute.getOperand(*operand);
        while (auto view = old.getDefiningOp<ViewOp>())
          old = view.getSource();
        gone[old] = compute;
      }
    }
    ins.outputs.push_back({tensor, offset, size, inPlace});
    residentAt[tensor] = offset;
    residentSize[tensor] = size;
  }
  if (op.workspaceBytes > 0) {
    std::optional<int64_t> workspace = compute.getWorkspaceOffset();
    if (!workspace)
      return fail(compute.getLoc(),
                  "op with a workspace in a planned step has no "
                  "'workspace_offset'");
    ins.workspaceOffset = *workspace;
    ins.workspaceBytes = aligned(op.workspaceBytes);
  }
  plan.instructions.push_back(std::move(ins));
  instructionOps.push_back(compute);
}

void PlannedStep::readRelease(Operation *op, Value tensor,
                              InstructionKind kind) {
  TensorId id = step.getTensorId(tensor);
  if (step.getGraph().tensors[id].viewOf != kNone)
    return fail(op->getLoc(), "releases a view; release the tensor it views");
  planner::Instruction ins;
  ins.kind = kind;
  ins.tensor = id;
  residentAt[id] = -1;
  gone[tensor] = op;
  plan.instructions.push_back(std::move(ins));
  instructionOps.push_back(op);
}
