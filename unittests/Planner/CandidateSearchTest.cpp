//===- CandidateSearchTest.cpp - The default planner's search -------------===//
//
// searchPlan() against every policy's own plan(): never worse, never failing
// where one plans, deterministic; and the lookahead policy it adds pays off.
//
//===----------------------------------------------------------------------===//

#include "PlanTestUtil.h"

#include "coop/Planner/GraphGenerator.h"

using namespace coop::planner;
using namespace coop::planner::testing;

namespace {

PlanOptions unlimited(PlanOptions options) {
  options.searchTimeLimitSeconds = 0;
  return options;
}

TEST(CandidateSearch, NeverWorseThanAnyPolicy) {
  int compared = 0, lookaheadBeatsCoop = 0, coopBeatsLookahead = 0;
  for (uint64_t seed = 0; seed < 24; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Graph g;
    TrainingGraphShape shape;
    shape.layers = 2 + int32_t(seed % 7);
    shape.batchNormProbability = seed % 3 == 0 ? 0.5 : 0.0;
    ASSERT_OK(generateTrainingGraph(seed, shape, &g));
    PlanOptions o = unlimited(PlanOptions());
    StepBounds bounds;
    ASSERT_OK(stepBounds(g, o, &bounds));
    for (double fraction : {0.1, 0.4, 0.7}) {
      o.budgetBytes =
          bounds.floor + int64_t(fraction * double(bounds.none - bounds.floor));
      Plan searched;
      Status found = planAndVerify(g, o, &searched, searchPlan);
      double coopCost = -1, lookaheadCost = -1;
      for (Policy policy :
           {Policy::Lookahead, Policy::Coop, Policy::DTR, Policy::DTE}) {
        PlanOptions single = o;
        single.policy = policy;
        Plan p;
        if (!plan(g, single, &p))
          continue;
        ASSERT_TRUE(found) << policyName(policy) << " plans: "
                           << found.message();
        EXPECT_LE(searched.stats.executedCostUs, p.stats.executedCostUs)
            << policyName(policy);
        ++compared;
        if (policy == Policy::Coop)
          coopCost = p.stats.executedCostUs;
        if (policy == Policy::Lookahead)
          lookaheadCost = p.stats.executedCostUs;
      }
      if (coopCost >= 0 && lookaheadCost >= 0) {
        lookaheadBeatsCoop += lookaheadCost < coopCost;
        coopBeatsLookahead += coopCost < lookaheadCost;
      }
      if (found) {
        EXPECT_FALSE(searched.stats.winningCandidate.empty());
        // Only a plan that recomputes nothing ends the search early.
        if (searched.stats.recomputeCount > 0)
          EXPECT_GE(searched.stats.candidates.size(), 5u);
        EXPECT_FALSE(searched.stats.searchTimeLimitReached);
      }
    }
  }
  EXPECT_GT(compared, 100);
  // Knowing the future must pay off somewhere.
  EXPECT_GT(lookaheadBeatsCoop, 0);
  std::printf("%d plans compared; lookahead recomputes less than coop on %d "
              "budgets, more on %d\n",
              compared, lookaheadBeatsCoop, coopBeatsLookahead);
}

TEST(CandidateSearch, IsDeterministic) {
  Graph g;
  TrainingGraphShape shape;
  shape.layers = 6;
  ASSERT_OK(generateTrainingGraph(7, shape, &g));
  PlanOptions o = unlimited(PlanOptions());
  StepBounds bounds;
  ASSERT_OK(stepBounds(g, o, &bounds));
  o.budgetBytes = (bounds.floor + bounds.none) / 2;
  Plan a, b;
  ASSERT_OK(planAndVerify(g, o, &a, searchPlan));
  ASSERT_OK(planAndVerify(g, o, &b, searchPlan));
  EXPECT_EQ(a.stats.winningCandidate, b.stats.winningCandidate);
  ASSERT_EQ(a.instructions.size(), b.instructions.size());
  for (size_t i = 0; i < a.instructions.size(); ++i) {
    EXPECT_EQ(a.instructions[i].kind, b.instructions[i].kind);
    EXPECT_EQ(a.instructions[i].op, b.instructions[i].op);
    EXPECT_EQ(a.instructions[i].tensor, b.instructions[i].tensor);
    ASSERT_EQ(a.instructions[i].outputs.size(), b.instructions[i].outputs.size());
    for (size_t j = 0; j < a.instructions[i].outputs.size(); ++j)
      EXPECT_EQ(a.instructions[i].outputs[j].offset,
                b.instructions[i].outputs[j].offset);
  }
}

TEST(CandidateSearch, BelowTheFloorNamesIt) {
  Graph g;
  ASSERT_OK(generateTrainingGraph(3, TrainingGraphShape(), &g));
  PlanOptions o;
  StepBounds bounds;
  ASSERT_OK(stepBounds(g, o, &bounds));
  o.budgetBytes = bounds.floor - o.alignment;
  Plan p;
  Status st = searchPlan(g, o, &p);
  ASSERT_FALSE(st);
  EXPECT_TRUE(contains(st.message(), "below the memory floor")) << st.message();
}

} // namespace
