//===- KeptInputsTest.cpp - Every input of a failed op kept at once -------===//
//
// The BiLSTM's forward end in miniature: one op (a stack) reads every
// step's state at once, and a state evicted before it is rebuilt from its
// gate, which comes from a projection that is dead by then: each such
// closure rebuilds the whole projection. The replays keep the stack's
// evicted states resident until it; kept only as they are evicted, the
// states are learned a few per replay (denied those, the policy evicts the
// others instead), and the replays end with more of them rebuilt.
// PlanOptions::keepEveryInputOfFailedOp keeps them all at once.
//
//===----------------------------------------------------------------------===//

#include "PlanTestUtil.h"

using namespace coop::planner;
using namespace coop::planner::testing;

namespace {

TEST(KeptInputs, EveryInputOfTheFailedOpKeptAtOnceRebuildsLess) {
  int cheaper = 0;
  for (int steps : {16, 32}) {
    RecurrentStep step;
    ASSERT_OK(recurrentStep(steps, &step, /*stackStates=*/true));
    PlanOptions o;
    StepBounds bounds;
    ASSERT_OK(stepBounds(step.graph, o, &bounds));
    // Near the floor, where the stack's closures need the projection.
    for (int fortieth = 1; fortieth <= 16; ++fortieth) {
      o.budgetBytes = budgetBetween(bounds, fortieth / 40.0);
      for (bool retain : {false, true}) {
        SCOPED_TRACE(std::to_string(steps) + " steps, " +
                     std::to_string(o.budgetBytes) + " bytes, retained " +
                     std::to_string(retain));
        o.retainSharedInputs = retain;
        Plan learned, keptAtOnce;
        o.keepEveryInputOfFailedOp = false;
        if (!planAndVerify(step.graph, o, &learned))
          continue;
        o.keepEveryInputOfFailedOp = true;
        ASSERT_OK(planAndVerify(step.graph, o, &keptAtOnce));
        EXPECT_LE(keptAtOnce.stats.executedCostUs,
                  learned.stats.executedCostUs);
        EXPECT_LE(recomputationsOf(keptAtOnce, step.projection),
                  recomputationsOf(learned, step.projection));
        cheaper += keptAtOnce.stats.executedCostUs <
                   learned.stats.executedCostUs;
      }
    }
  }
  EXPECT_GT(cheaper, 0);
}

} // namespace
