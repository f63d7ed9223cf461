//===- MemoryStats.cpp - Print a step's memory figures --------------------===//

#include "coop/Analysis/StepGraph.h"
#include "coop/Dialect/Coop/IR/CoopOps.h"
#include "coop/Transforms/Passes.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::coop {
#define GEN_PASS_DEF_COOPMEMORYSTATS
#include "coop/Transforms/Passes.h.inc"
} // namespace mlir::coop

using namespace mlir;
using namespace mlir::coop;

namespace {

/// "1536 (1.50 KiB)": exact bytes for tests and scripts, a readable unit
/// for people.
void printBytes(raw_ostream &os, int64_t bytes) {
  static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  unsigned unit = 0;
  while (value >= 1024.0 && unit + 1 < std::size(units)) {
    value /= 1024.0;
    ++unit;
  }
  os << bytes << " (";
  if (unit == 0)
    os << bytes << " B)";
  else
    os << llvm::format("%.2f", value) << " " << units[unit] << ")";
}

struct CoopMemoryStatsPass
    : public mlir::coop::impl::CoopMemoryStatsBase<CoopMemoryStatsPass> {
  void runOnOperation() override {
    raw_ostream &os = llvm::outs();
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!isTrainingStep(func))
        continue;
      const StepGraph &step = getChildAnalysis<StepGraph>(func);
      if (!step.isValid()) {
        func.emitError() << "cannot analyse step: " << step.getError();
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
      os << "  persistent bytes:  ";
      printBytes(os, stats.persistentBytes);
      os << "\n  peak live bytes:   ";
      printBytes(os, stats.peakLiveBytes);
      printAt(stats.peakOp);
      os << "  memory floor:      ";
      printBytes(os, stats.floorBytes);
      printAt(stats.floorOp);
    }
    markAllAnalysesPreserved();
  }
};

} // namespace
