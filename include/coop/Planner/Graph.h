//===- Graph.h - The training step as the planner sees it -------*- C++ -*-===//
//
// A training step in execution order: ops that read and write tensors.
// Tensors are SSA-like values; several values may share one *storage*:
//  - a view's result aliases the storage of the tensor it views;
//  - an in-place op's result is a new *version* of the storage it overwrote.
// The storage root of a value is found by following `viewOf` and
// `previousVersion` to a tensor that owns its bytes.
//
// This header has no MLIR dependency: passes build a Graph from IR.
//
//===----------------------------------------------------------------------===//
#ifndef COOP_PLANNER_GRAPH_H
#define COOP_PLANNER_GRAPH_H

#include "coop/Planner/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace coop::planner {

using TensorId = int32_t;
using OpId = int32_t;
constexpr int32_t kNone = -1;
/// Marks a reference that could not be resolved; finalize() reports it.
constexpr int32_t kInvalidId = -2;

/// What a tensor is for. Everything but Activation is persistent: it lives
/// for the whole step and is never evicted.
enum class TensorRole {
  Activation,
  Parameter,
  Gradient,
  OptimizerState,
  Buffer, // non-trainable persistent state, e.g. batch-norm running stats
  Input,  // per-step data: images, labels, token ids
};

const char *roleName(TensorRole role);
bool isPersistentRole(TensorRole role);

struct Tensor {
  std::string name; // for diagnostics only
  int64_t bytes = 0;
  TensorRole role = TensorRole::Activation;
  /// Op that produces this value; kNone for step arguments.
  OpId producer = kNone;
  /// Set on view results: the value whose storage this one aliases.
  TensorId viewOf = kNone;
  /// Set on in-place results: the version of the storage this one overwrote.
  TensorId previousVersion = kNone;
  /// Ops reading this value, in execution order (filled by Graph::finalize).
  std::vector<OpId> consumers;
  /// Returned by the step: must be resident when the step ends.
  bool isStepOutput = false;
};

struct Op {
  std::string name; // kernel name, e.g. "aten.convolution"
  double costUs = 0.0;
  int64_t workspaceBytes = 0;
  std::vector<TensorId> inputs;
  std::vector<TensorId> outputs;
  /// Views compute nothing and allocate nothing: every output aliases
  /// inputs[0].
  bool isView = false;
  /// Random ops draw from a counter-based generator keyed by (seed, offset),
  /// so re-running them reproduces the same values.
  bool isRandom = false;
  uint64_t seed = 0;
  uint64_t offset = 0;
  /// The in-place outputs are side effects that the fresh outputs do not
  /// depend on (batch norm in training mode: the normalized output depends
  /// on the batch statistics, not on the running statistics it updates).
  /// Such an op may be recomputed for its fresh outputs: the recomputation
  /// writes each in-place output into scratch that is dropped right after
  /// the instruction (the real version is left untouched), and does not
  /// really read the operands those outputs overwrite, so they may be stale
  /// by then. A Run still writes the in-place outputs in place.
  bool discardableInPlace = false;
};

class Graph {
public:
  /// Adds a step argument (no producer).
  TensorId addArgument(std::string name, int64_t bytes, TensorRole role);
  /// Adds an op; its outputs are created with the given sizes. For an
  /// in-place output, `inplaceInput[i]` is the index into `inputs` of the
  /// operand it overwrites (kNone for a fresh output). Returns the op id.
  OpId addOp(std::string name, std::vector<TensorId> inputs,
             const std::vector<int64_t> &outputBytes,
             const std::vector<int32_t> &inplaceInput = {},
             double costUs = 0.0, int64_t workspaceBytes = 0);
  /// Adds a view op: every output aliases `source`.
  OpId addView(std::string name, TensorId source,
               const std::vector<int64_t> &outputBytes);
  void markStepOutput(TensorId tensor);

  /// Checks ids, execution order and aliasing, then fills consumer lists.
  /// Must succeed before the graph is analysed or planned.
  Status finalize();

  /// The tensor that owns the bytes `tensor` lives in.
  TensorId storageOf(TensorId tensor) const;
  /// The non-view value whose buffer holds `tensor`'s elements: `tensor`
  /// itself, or the version a view (of a view ...) reads.
  TensorId contentOf(TensorId tensor) const;
  bool isPersistent(TensorId tensor) const;

  std::vector<Tensor> tensors;
  std::vector<Op> ops;

private:
  std::string describe(TensorId tensor) const;
  std::string describeOp(OpId op) const;
};

/// Memory figures of a step run in program order with no rematerialization.
struct MemoryStats {
  int64_t opCount = 0;
  int64_t tensorCount = 0;  // values, views and versions included
  int64_t storageCount = 0; // distinct buffers
  int64_t persistentBytes = 0;
  /// Most bytes live at once (persistent included), with exact liveness and
  /// no fragmentation or alignment.
  int64_t peakLiveBytes = 0;
  OpId peakOp = kNone;
  /// Persistent bytes plus the largest single-op working set (distinct
  /// non-persistent storages an op reads or writes, plus its workspace).
  /// No schedule can run the step in less.
  int64_t floorBytes = 0;
  OpId floorOp = kNone;
};

/// Requires a finalized graph.
MemoryStats computeMemoryStats(const Graph &graph);

} // namespace coop::planner

#endif // COOP_PLANNER_GRAPH_H
