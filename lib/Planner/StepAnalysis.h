//===- StepAnalysis.h - What the planner knows before simulating -*- C++ -*-===//
//
// Internal to the planner core: lifetimes, recomputability and the memory
// floor of a finalized step, shared by the simulator and by the eviction
// schedule that the plan search computes ahead of time.
//
//===----------------------------------------------------------------------===//
#ifndef COOP_LIB_PLANNER_STEPANALYSIS_H
#define COOP_LIB_PLANNER_STEPANALYSIS_H

#include "coop/Planner/Plan.h"

#include <limits>

namespace coop::planner {

/// Last use of values that must outlive the step.
constexpr int32_t kForever = std::numeric_limits<int32_t>::max();

/// What the planner knows about the step before simulating it. Values are
/// indexed by TensorId; only "contents" (non-view values) own buffers.
struct StepAnalysis {
  std::vector<TensorId> content;  // follows viewOf to the buffer-owning value
  std::vector<int32_t> lastUse;   // last op reading the content; kForever
  std::vector<char> persistent;
  std::vector<char> recomputable; // its producer can be re-run
  std::vector<char> evictable;    // may be dropped while it still has uses
  std::vector<char> expensive;    // two-ended class
  std::vector<std::vector<TensorId>> dieAt; // contents whose lastUse is op k
  /// Per content: the ops that read it (or a view of it), ascending.
  std::vector<std::vector<OpId>> readers;
  /// Per content: the ops that read or write it (or a view of it),
  /// ascending: their outputs' e* neighbourhoods include it.
  std::vector<std::vector<OpId>> neighbourOps;
  /// Per value: the contents of its producer's inputs, then outputs, in
  /// order and with repeats (none for an argument), at
  /// [producerNeighbourStart[t], producerNeighbourStart[t + 1]) of
  /// producerNeighbours: what its e* neighbourhood cost reads, in one
  /// place instead of behind the producer and its operand lists.
  std::vector<int64_t> producerNeighbourStart;
  std::vector<TensorId> producerNeighbours;
  /// Per op: a recomputation writes its in-place outputs to discarded
  /// scratch (Op::discardableInPlace, every in-place output persistent).
  std::vector<char> discardsInPlace;
  /// Per non-view op: the inputs a recomputation reads (contents, with
  /// repeats): all but those overwritten by discarded outputs.
  std::vector<std::vector<TensorId>> recomputeReads;
  /// Per non-view op: of its recomputeReads, in order, those a lookahead
  /// chain walk may follow (recomputable, with a producer), each with its
  /// producer and that producer's cost, at [chainReadStart[k],
  /// chainReadStart[k + 1]) of chainReads: the walk scores every victim
  /// candidate, and the graph's records it would read otherwise are wide.
  struct ChainRead {
    TensorId value;
    OpId producer;
    double producerCostUs;
  };
  std::vector<int64_t> chainReadStart;
  std::vector<ChainRead> chainReads;
  /// Per content: the last op that may read it, directly or by recomputing
  /// a value derived from it (>= lastUse).
  std::vector<int32_t> lastRecomputeUse;
  /// Per content: read by more than one op, so more than one recomputation
  /// may need it again after its last use.
  std::vector<char> sharedInput;
  int64_t persistentBytes = 0;
  int64_t floorBytes = 0;
  OpId floorOp = kNone;
  /// Of the floor: values that cannot be recomputed, alive across floorOp.
  int64_t floorHeldBytes = 0;
};

StepAnalysis analyse(const Graph &g, const PlanOptions &options);
/// analyse() divides by the alignment: simulate(), plan() and searchPlan()
/// check it with this before they make one.
Status checkAlignment(const PlanOptions &options);

/// simulate() with the step's analysis for `options` already made: plan()
/// simulates one step in many arenas, and the analysis depends on none of
/// the budget, the replays or the schedule (6.5 % of the BiLSTM's search
/// when each simulation made its own).
Status simulate(const Graph &graph, const PlanOptions &options,
                const StepAnalysis &analysis, Plan *out);
/// plan() with the step's analysis for `options` already made: the plan
/// search's candidates differ in nothing the analysis depends on but
/// whether the policy is `none` (5.6 % of the BiLSTM's search when each
/// made its own).
Status plan(const Graph &graph, const PlanOptions &options,
            const StepAnalysis &analysis, Plan *out);

/// Recomputable contents that more than one op reads and that a
/// recomputation may read after their last use: what
/// PlanOptions::retainSharedInputs keeps resident past that use.
std::vector<TensorId> retainableSharedInputs(const Graph &g,
                                             const StepAnalysis &a);

} // namespace coop::planner

#endif // COOP_LIB_PLANNER_STEPANALYSIS_H
