//===- MemoryStats.cpp - Print a step's memory figures --------------------===//

#include "coop/Analysis/StepGraph.h"
#include "coop/Dialect/Coop/IR/CoopOps.h"
#include "coop/Planner/ByteSize.h"
#include "coop/Transforms/Passes.h"

#include "llvm/Support/raw_ostream.h"

namespace mlir::coop {
#define GEN_PASS_DEF_COOPMEMORYSTATS
#include "coop/Transforms/Passes.h.inc"
} // namespace mlir::coop

using namespace mlir;
using namespace mlir::coop;

namespace {

struct CoopMemoryStatsPass
    : public mlir::coop::impl::CoopMemoryStatsBase<CoopMemoryStatsPass> {
  void runOnOperation() override {
    raw_ostream &os = llvm::outs();
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!isTrainingStep(func))
        continue;
      const StepGraph &step = getChildAnalysis<StepGraph>(func);
      if (!step.isValid()) {
        emitError(step.getErrorLoc())
            << "cannot analyse step: " << step.getError();
        return signalPassFailure();
      }
      const planner::Graph &graph = step.getGraph();
      planner::MemoryStats stats = planner::computeMemoryStats(graph);
      auto printAt = [&](planner::OpId op) {
        if (op != planner::kNone)
          os << " at op #" << op << " '" << graph.ops[op].name << "'";
        os << "\n";
      };
      os << "coop-memory-stats @" << func.getSymName() << "\n";
      os << "  ops:               " << stats.opCount << "\n";
      os << "  tensors:           " << stats.tensorCount << "\n";
      os << "  storages:          " << stats.storageCount << "\n";
      os << "  persistent bytes:  "
         << planner::formatByteSize(stats.persistentBytes) << "\n";
      os << "  peak live bytes:   "
         << planner::formatByteSize(stats.peakLiveBytes);
      printAt(stats.peakOp);
      os << "  memory floor:      " << planner::formatByteSize(stats.floorBytes);
      printAt(stats.floorOp);
    }
    markAllAnalysesPreserved();
  }
};

} // namespace
