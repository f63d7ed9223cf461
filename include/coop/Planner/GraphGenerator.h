//===- GraphGenerator.h - Seeded training-like step graphs ------*- C++ -*-===//
//
// Builds random but training-shaped steps for property tests and benchmarks:
// a forward chain with skip connections, in-place activations (some whose
// old value backward still reads), dropout (a random op), views, training
// batch norms (running statistics updated in place, Op::discardableInPlace),
// a loss, a mirrored backward, in-place gradient accumulation and optimizer
// updates.
//
//===----------------------------------------------------------------------===//
#ifndef COOP_PLANNER_GRAPHGENERATOR_H
#define COOP_PLANNER_GRAPHGENERATOR_H

#include "coop/Planner/Graph.h"

#include <cstdint>

namespace coop::planner {

struct TrainingGraphShape {
  int32_t layers = 8;
  int64_t minActivationBytes = 2048;
  int64_t maxActivationBytes = 64 * 1024;
  int64_t minParameterBytes = 512;
  int64_t maxParameterBytes = 8 * 1024;
  double skipProbability = 0.2;     // add an earlier activation (DAG)
  double inPlaceProbability = 0.4;  // relu_ instead of relu
  double oldValueProbability = 0.3; // of those, backward reads the old value
  double dropoutProbability = 0.2;  // random op with a saved mask
  double viewProbability = 0.2;
  double workspaceProbability = 0.2; // expensive op with scratch space
  /// Batch norm after the expensive op. At zero no draw is made, so graphs
  /// of other shapes do not change.
  double batchNormProbability = 0.0;
};

/// Builds and finalizes a graph; the same seed and shape give the same graph.
Status generateTrainingGraph(uint64_t seed, const TrainingGraphShape &shape,
                             Graph *out);

} // namespace coop::planner

#endif // COOP_PLANNER_GRAPHGENERATOR_H
