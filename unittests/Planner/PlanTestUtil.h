//===- PlanTestUtil.h - Shared helpers for planner tests --------*- C++ -*-===//
#ifndef COOP_UNITTESTS_PLANNER_PLANTESTUTIL_H
#define COOP_UNITTESTS_PLANNER_PLANTESTUTIL_H

#include "coop/Planner/GraphGenerator.h"
#include "coop/Planner/Plan.h"

#include <gtest/gtest.h>

#include <algorithm>

/// Like ASSERT_TRUE / EXPECT_TRUE on a Status, but print its message.
#define ASSERT_OK(expr)                                                        \
  do {                                                                         \
    ::coop::planner::Status status_ = (expr);                                  \
    ASSERT_TRUE(status_) << status_.message();                                 \
  } while (0)
#define EXPECT_OK(expr)                                                        \
  do {                                                                         \
    ::coop::planner::Status status_ = (expr);                                  \
    EXPECT_TRUE(status_) << status_.message();                                 \
  } while (0)

namespace coop::planner::testing {

/// Options for hand-built layouts: byte-exact (alignment 1) and one-ended,
/// so that the expected pictures are easy to derive.
inline PlanOptions byteOptions(Policy policy, int64_t budget) {
  PlanOptions o;
  o.policy = policy;
  o.budgetBytes = budget;
  o.alignment = 1;
  o.twoEndedPartitioning = false;
  return o;
}

using PlanFunction = Status (*)(const Graph &, const PlanOptions &, Plan *);

/// Plans (with plan(), or simulate() for tests of the simulator's own
/// placements) and, when planning succeeds, requires the independent
/// verifier to accept the plan. Returns the planner's status (gtest prints
/// its message).
inline Status planAndVerify(const Graph &graph, const PlanOptions &options,
                            Plan *out, PlanFunction planner = plan) {
  Status st = planner(graph, options, out);
  if (st) {
    Status verified = verifyPlan(graph, *out, options.budgetBytes);
    EXPECT_TRUE(verified) << policyName(options.policy) << " at "
                          << options.budgetBytes
                          << " bytes: " << verified.message();
  }
  return st;
}

/// The memory floor of `graph` and the arena `none` needs (its minimum
/// budget), under `options` but for the policy.
struct StepBounds {
  int64_t floor = 0;
  int64_t none = 0;
};
inline Status stepBounds(const Graph &graph, PlanOptions options,
                         StepBounds *out) {
  options.policy = Policy::None;
  if (Status st = minimumBudget(graph, options, &out->none); !st)
    return st;
  Plan probe;
  options.budgetBytes = 0; // fails at the floor check, after recording it
  static_cast<void>(plan(graph, options, &probe));
  out->floor = probe.stats.memoryFloorBytes;
  return Status::ok();
}

/// A budget `fraction` of the way from the floor to `none`'s arena.
inline int64_t budgetBetween(const StepBounds &bounds, double fraction) {
  return bounds.floor +
         int64_t(fraction * double(bounds.none - bounds.floor));
}

/// The generated training steps the plan sweeps run over: 2 to
/// 1 + `layerSpread` layers as the seed goes, batch norm on every third.
inline Status sweepStep(uint64_t seed, int32_t layerSpread, Graph *out) {
  TrainingGraphShape shape;
  shape.layers = 2 + int32_t(seed % uint64_t(layerSpread));
  shape.batchNormProbability = seed % 3 == 0 ? 0.5 : 0.0;
  return generateTrainingGraph(seed, shape, out);
}

/// The values evicted, in order, between the start of the plan and the
/// instruction that runs `op`.
inline std::vector<TensorId> evictedBeforeRun(const Plan &plan, OpId op) {
  std::vector<TensorId> evicted;
  for (const Instruction &ins : plan.instructions) {
    if (ins.kind == InstructionKind::Run && ins.op == op)
      break;
    if (ins.kind == InstructionKind::Evict)
      evicted.push_back(ins.tensor);
  }
  return evicted;
}

inline const Instruction *findRun(const Plan &plan, OpId op) {
  auto it = std::find_if(plan.instructions.begin(), plan.instructions.end(),
                         [&](const Instruction &ins) {
                           return ins.kind == InstructionKind::Run &&
                                  ins.op == op;
                         });
  return it == plan.instructions.end() ? nullptr : &*it;
}

inline bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

} // namespace coop::planner::testing

#endif // COOP_UNITTESTS_PLANNER_PLANTESTUTIL_H
