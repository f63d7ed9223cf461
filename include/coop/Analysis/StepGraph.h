//===- StepGraph.h - A coop.step function as a planner graph -----*- C++ -*-===//
//
// Adapts a verified `coop.step` function to the MLIR-free planner core. Held
// as an analysis (getAnalysis<StepGraph>) so that passes share one build.
//
//===----------------------------------------------------------------------===//
#ifndef COOP_ANALYSIS_STEPGRAPH_H
#define COOP_ANALYSIS_STEPGRAPH_H

#include "coop/Planner/Graph.h"

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"

#include <string>

namespace mlir::coop {

namespace planner = ::coop::planner;

class StepGraph {
public:
  /// `op` must be a func.func marked coop.step.
  explicit StepGraph(Operation *op);

  /// Failure, with the reason in getError(), if the planner rejected the
  /// graph; the dialect verifier should already have caught every case.
  bool isValid() const { return error.empty(); }
  const std::string &getError() const { return error; }

  const planner::Graph &getGraph() const { return graph; }
  planner::TensorId getTensorId(Value value) const {
    return tensorIds.lookup(value);
  }
  Operation *getOperation(planner::OpId id) const { return ops[id]; }

private:
  planner::Graph graph;
  llvm::DenseMap<Value, planner::TensorId> tensorIds;
  SmallVector<Operation *> ops; // indexed by planner::OpId
  std::string error;
};

} // namespace mlir::coop

#endif // COOP_ANALYSIS_STEPGRAPH_H
