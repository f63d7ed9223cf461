//===- StepGraph.h - A coop.step function as a planner graph -----*- C++ -*-===//
//
// Adapts a verified `coop.step` function to the MLIR-free planner core. Held
// as an analysis (getAnalysis<StepGraph>) so that passes share one build.
// On a planned step it recovers the original graph: evictions and frees are
// skipped, and re-executions (`recompute_of`) map their results to the
// tensors they rebuild.
//
//===----------------------------------------------------------------------===//
#ifndef COOP_ANALYSIS_STEPGRAPH_H
#define COOP_ANALYSIS_STEPGRAPH_H

#include "coop/Planner/Graph.h"

#include "mlir/IR/Location.h"
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

  /// Failure, with the reason in getError() and the place in getErrorLoc(),
  /// if the step cannot be read as a planner graph.
  bool isValid() const { return error.empty(); }
  const std::string &getError() const { return error; }
  Location getErrorLoc() const { return *errorLoc; }

  /// Set on ops a plan inserted to re-run original op #N.
  static std::optional<int64_t> getRecomputeOf(Operation *op);

  const planner::Graph &getGraph() const { return graph; }
  planner::TensorId getTensorId(Value value) const {
    return tensorIds.lookup(value);
  }
  Operation *getOperation(planner::OpId id) const { return ops[id]; }

private:
  LogicalResult mapRecomputation(Operation *op, int64_t original);
  void fail(Operation *op, std::string message);

  planner::Graph graph;
  llvm::DenseMap<Value, planner::TensorId> tensorIds;
  SmallVector<Operation *> ops; // indexed by planner::OpId
  std::string error;
  std::optional<Location> errorLoc;
};

} // namespace mlir::coop

#endif // COOP_ANALYSIS_STEPGRAPH_H
