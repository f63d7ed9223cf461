//===- PlannedStep.h - Read a planned step back as a planner Plan -*- C++ -*-===//
//
// The inverse of coop-plan-memory's rewrite: recovers the planner's Plan
// (argument placements, runs, recomputations, evictions, frees, offsets)
// from a planned `coop.step` function, remembering which op each
// instruction came from so that verifier findings point at IR.
//
//===----------------------------------------------------------------------===//
#ifndef COOP_ANALYSIS_PLANNEDSTEP_H
#define COOP_ANALYSIS_PLANNEDSTEP_H

#include "coop/Analysis/StepGraph.h"
#include "coop/Dialect/Coop/IR/CoopOps.h"
#include "coop/Planner/Plan.h"

#include "mlir/Pass/AnalysisManager.h"

namespace mlir::coop {

class PlannedStep {
public:
  PlannedStep(Operation *op, AnalysisManager &analyses);

  /// Failure, with the reason and place, if the function is not a complete
  /// planned step (no coop.plan, an op without offsets, ...).
  bool isValid() const { return error.empty(); }
  const std::string &getError() const { return error; }
  Location getErrorLoc() const { return *errorLoc; }

  const StepGraph &getStep() const { return step; }
  const planner::Plan &getPlan() const { return plan; }
  int64_t getAlignment() const { return alignment; }
  /// The op instruction #index was read from.
  Operation *getInstructionOp(size_t index) const {
    return instructionOps[index];
  }

private:
  void read(func::FuncOp func);
  void readOp(Operation *op);
  void readCompute(ComputeOp compute);
  void readRelease(Operation *op, Value tensor, planner::InstructionKind kind);
  /// Rejects reads of SSA values whose buffer is gone: the planner's replay
  /// tracks tensors, but the lowering reads offsets off these very values.
  void checkOperands(Operation *op);
  void fail(Location loc, std::string message);
  int64_t aligned(int64_t bytes) const {
    return planner::allocationSize(bytes, alignment);
  }

  const StepGraph &step;
  planner::Plan plan;
  int64_t alignment = 1;
  SmallVector<Operation *> instructionOps;
  /// Offset of each content tensor's buffer while it is resident, else -1,
  /// and the size of that buffer.
  std::vector<int64_t> residentAt;
  std::vector<int64_t> residentSize;
  planner::OpId nextOp = 0;
  /// Values whose buffer was released or overwritten, and by which op.
  llvm::DenseMap<Value, Operation *> gone;
  std::string error;
  std::optional<Location> errorLoc;
};

} // namespace mlir::coop

#endif // COOP_ANALYSIS_PLANNEDSTEP_H
