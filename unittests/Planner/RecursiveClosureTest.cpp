//===- RecursiveClosureTest.cpp - Closures run depth first, DTR's way -----===//
//
// A closure listed in advance holds every value it reads until its last
// reader in the closure has run; for a deep recomputation those held
// values are scattered through the arena and cut every window short.
// When every other series of replays fails, the planner runs closures
// recursively instead: each producer's inputs are brought back in turn and
// held only until that producer has run, so at most one path of the
// closure is held. These generated steps (the property test's generator)
// plan at these budgets only that way: with the recursive series removed
// from plan(), each of them fails (checked when the series was added).
//
//===----------------------------------------------------------------------===//

#include "PlanTestUtil.h"

#include "coop/Planner/GraphGenerator.h"

using namespace coop::planner;
using namespace coop::planner::testing;

namespace {

struct Case {
  uint64_t seed;
  Policy policy;
  int64_t budget;
};

TEST(RecursiveClosures, PlanWhereListedClosuresCannot) {
  for (const Case &c : {Case{5, Policy::Coop, 373555}, Case{5, Policy::DTR, 381644},
                        Case{5, Policy::DTE, 365465}, Case{7, Policy::Coop, 370944},
                        Case{7, Policy::DTR, 356864}}) {
    TrainingGraphShape shape;
    shape.layers = 2 + int32_t(c.seed % 11);
    Graph g;
    ASSERT_OK(generateTrainingGraph(c.seed, shape, &g));
    PlanOptions options;
    options.policy = c.policy;
    options.budgetBytes = c.budget;
    Plan p;
    EXPECT_OK(planAndVerify(g, options, &p));
    EXPECT_GT(p.stats.recomputeCount, 0) << c.seed << " " << policyName(c.policy);
  }
}

} // namespace
