//===- RetainedProjectionTest.cpp - A shared input kept past its last use -===//
//
// The BiLSTM's backward in miniature: one projection `p`, built through a
// transient as large as itself, is read by every time step; the per-step
// values are evicted in the forward pass and the backward reads them in
// reverse, after `p`'s last use. Freed at its last use, `p` must be rebuilt
// by each backward closure, and the rebuild does not fit; keeping the steps
// resident instead does not fit either. Retaining `p`, evictable, until the
// last op that may recompute from it plans the step, and `p` is built once.
//
//===----------------------------------------------------------------------===//

#include "PlanTestUtil.h"

using namespace coop::planner;
using namespace coop::planner::testing;

namespace {

constexpr int kSteps = 8;
constexpr int64_t kProjection = 64, kStepValue = 16, kGradient = 4;

struct ProjectedSteps {
  Graph g;
  OpId projection = kNone, lastGradient = kNone;
  TensorId p = kNone;
  ProjectedSteps() {
    TensorId x = g.addArgument("x", 8, TensorRole::Input);
    auto out = [&](OpId op) { return g.ops[op].outputs[0]; };
    TensorId m = out(g.addOp("aten.mm", {x}, {kProjection}, {}, 50.0));
    projection = g.addOp("aten._unsafe_view", {m}, {kProjection}, {}, 5.0);
    p = out(projection);
    std::vector<TensorId> steps;
    for (int i = 0; i < kSteps; ++i)
      steps.push_back(
          out(g.addOp("aten.add", {p, x}, {kStepValue}, {}, 1.0)));
    std::vector<TensorId> gradients;
    for (int i = kSteps - 1; i >= 0; --i) {
      lastGradient = g.addOp("aten.mul", {steps[i]}, {kGradient}, {}, 1.0);
      gradients.push_back(out(lastGradient));
    }
    g.markStepOutput(out(g.addOp("aten.sum", gradients, {4}, {}, 1.0)));
  }
};

TEST(RetainedProjection, BuiltOnceAndFreedAfterItsLastRecomputeUse) {
  ProjectedSteps step;
  ASSERT_OK(step.g.finalize());
  // Floor: x + the mm's output + the projection = 8 + 64 + 64. At 140 the
  // forward keeps four steps besides x and p; rebuilding p in the backward
  // needs 8 + 128 + the gradients so far (> 140); keeping every step needs
  // 8 + 64 + 128.
  const int64_t budget = 140;
  for (Policy policy : {Policy::Coop, Policy::DTR, Policy::DTE}) {
    Plan plan;
    ASSERT_OK(planAndVerify(step.g, byteOptions(policy, budget), &plan));
    EXPECT_EQ(plan.stats.memoryFloorBytes, 136);
    int projectionRebuilds = 0, stepRecomputes = 0;
    bool freedBeforeLastGradient = false, lastGradientRan = false;
    for (const Instruction &ins : plan.instructions) {
      if (ins.kind == InstructionKind::Recompute)
        ++(ins.op == step.projection ? projectionRebuilds : stepRecomputes);
      if (ins.kind == InstructionKind::Run && ins.op == step.lastGradient)
        lastGradientRan = true;
      if (ins.kind == InstructionKind::Free && ins.tensor == step.p &&
          !lastGradientRan)
        freedBeforeLastGradient = true;
    }
    EXPECT_EQ(projectionRebuilds, 0) << policyName(policy);
    EXPECT_GT(stepRecomputes, 0) << policyName(policy);
    EXPECT_FALSE(freedBeforeLastGradient) << policyName(policy);
  }
}

} // namespace
