//===- PropertyTest.cpp - Seeded random steps x budgets x policies --------===//
//
// For many generated training steps and budgets between the memory floor
// and the no-rematerialization peak: every plan verifies, every failure says
// which kind it is, and no policy fails where `none` succeeds.
// COOP_PLANNER_PROPERTY_SEEDS sets the number of graphs (default 150, about
// 3,600 plans, each a search of several simulated arenas repacked offline:
// some ten seconds).
//
//===----------------------------------------------------------------------===//

#include "PlanTestUtil.h"

#include "coop/Planner/GraphGenerator.h"

#include <cstdlib>

using namespace coop::planner;
using namespace coop::planner::testing;

namespace {

int seedCount() {
  const char *env = std::getenv("COOP_PLANNER_PROPERTY_SEEDS");
  return env ? std::max(1, std::atoi(env)) : 150;
}

TrainingGraphShape shapeFor(uint64_t seed) {
  TrainingGraphShape shape;
  shape.layers = 2 + int32_t(seed % 11);
  if (seed % 4 == 1)
    shape.batchNormProbability = 0.6;
  return shape;
}

/// Feature switches vary with the seed so every ablation is exercised.
PlanOptions optionsFor(uint64_t seed) {
  PlanOptions o;
  o.twoEndedPartitioning = seed % 2 == 0;
  o.recomputableInPlace = seed % 3 != 1;
  o.slidingWindow = seed % 5 != 2;
  if (seed % 7 == 3)
    o.smallRegionBytes = 8 * 1024;
  return o;
}

struct Tally {
  int plans = 0, failures = 0, recomputingPlans = 0;
  int discardingPlans = 0; // recompute a batch norm, discarding its updates
};

void checkSeed(uint64_t seed, Tally &tally) {
  Graph g;
  ASSERT_OK(generateTrainingGraph(seed, shapeFor(seed), &g));
  PlanOptions o = optionsFor(seed);
  StepBounds bounds;
  ASSERT_OK(stepBounds(g, o, &bounds));
  const int64_t floor = bounds.floor, peak = bounds.none;
  Plan p;
  // The floor is a lower bound: the step without rematerialization, packed
  // offline, never needs less.
  ASSERT_LE(floor, peak);

  for (double fraction : {0.0, 0.2, 0.4, 0.6, 0.8, 1.0}) {
    const int64_t budget = budgetBetween(bounds, fraction);
    o.budgetBytes = budget;
    bool noneSucceeded = false;
    for (Policy policy :
         {Policy::None, Policy::Coop, Policy::DTR, Policy::DTE,
          Policy::Lookahead}) {
      o.policy = policy;
      Status st = planAndVerify(g, o, &p);
      ++tally.plans;
      if (policy == Policy::None)
        noneSucceeded = bool(st);
      if (st) {
        tally.recomputingPlans += p.stats.recomputeCount > 0;
        tally.discardingPlans += std::any_of(
            p.instructions.begin(), p.instructions.end(),
            [](const Instruction &ins) { return !ins.discarded.empty(); });
        EXPECT_GE(p.stats.computeOverhead, 0.0);
        EXPECT_LE(p.stats.addressHighWater, budget);
        continue;
      }
      ++tally.failures;
      EXPECT_TRUE(contains(st.message(), policy == Policy::None
                                             ? "out of memory under policy none"
                                             : "out of memory at op #"))
          << "seed " << seed << " " << policyName(policy) << ": "
          << st.message();
      EXPECT_FALSE(noneSucceeded)
          << "seed " << seed << ": " << policyName(policy)
          << " failed where none succeeded at " << budget << " bytes: "
          << st.message();
    }
  }
  // The bisection's answer must itself be plannable without remat.
  o.policy = Policy::None;
  o.budgetBytes = peak;
  EXPECT_OK(planAndVerify(g, o, &p));
}

TEST(PlannerProperty, RandomTrainingSteps) {
  Tally tally;
  const int seeds = seedCount();
  for (int seed = 0; seed < seeds; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    checkSeed(uint64_t(seed), tally);
  }
  // The sweep must actually exercise rematerialization and failures.
  EXPECT_GT(tally.recomputingPlans, tally.plans / 10);
  EXPECT_GT(tally.failures, 0);
  EXPECT_GT(tally.discardingPlans, 0);
  std::printf("%d plans, %d failures, %d with recomputation, %d discarding "
              "batch-norm updates\n",
              tally.plans, tally.failures, tally.recomputingPlans,
              tally.discardingPlans);
}

TEST(PlannerProperty, GeneratorIsDeterministic) {
  Graph a, b;
  ASSERT_OK(generateTrainingGraph(7, TrainingGraphShape(), &a));
  ASSERT_OK(generateTrainingGraph(7, TrainingGraphShape(), &b));
  ASSERT_EQ(a.ops.size(), b.ops.size());
  for (size_t i = 0; i < a.ops.size(); ++i) {
    EXPECT_EQ(a.ops[i].name, b.ops[i].name);
    EXPECT_EQ(a.ops[i].inputs, b.ops[i].inputs);
  }
}

} // namespace
