//===- VerifyPlan.cpp - Independent check of a planned step ---------------===//

#include "coop/Analysis/PlannedStep.h"
#include "coop/Dialect/Coop/IR/CoopOps.h"
#include "coop/Transforms/Passes.h"

namespace mlir::coop {
#define GEN_PASS_DEF_COOPVERIFYPLAN
#include "coop/Transforms/Passes.h.inc"
} // namespace mlir::coop

using namespace mlir;
using namespace mlir::coop;

namespace {

struct CoopVerifyPlanPass
    : public mlir::coop::impl::CoopVerifyPlanBase<CoopVerifyPlanPass> {
  void runOnOperation() override {
    markAllAnalysesPreserved();
    func::FuncOp func = getOperation();
    if (!isTrainingStep(func))
      return;
    const PlannedStep &planned = getAnalysis<PlannedStep>();
    if (!planned.isValid()) {
      emitError(planned.getErrorLoc()) << planned.getError();
      return signalPassFailure();
    }
    const planner::Plan &plan = planned.getPlan();
    planner::PlanPosition position;
    planner::Status status = planner::verifyPlan(
        planned.getStep().getGraph(), plan, plan.budgetBytes, &position);
    if (status)
      return;
    // At an op, never at the function: a diagnostic shows its location's
    // source line, and a step's signature is one line as long as its
    // argument list. A misplaced argument is reported at its first reader.
    Location loc = func.front().getTerminator()->getLoc();
    if (!position.inArguments && position.index < plan.instructions.size()) {
      loc = planned.getInstructionOp(position.index)->getLoc();
    } else if (position.inArguments && position.index < plan.arguments.size()) {
      // The planner numbers the arguments first: the tensor is the index.
      Value argument = func.getArgument(plan.arguments[position.index].tensor);
      for (Operation &op : func.front())
        if (llvm::is_contained(op.getOperands(), argument)) {
          loc = op.getLoc();
          break;
        }
    }
    emitError(loc) << "invalid plan: " << status.message();
    signalPassFailure();
  }
};

} // namespace
