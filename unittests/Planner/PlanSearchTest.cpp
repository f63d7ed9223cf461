//===- PlanSearchTest.cpp - Offline packing of fixed schedules ------------===//
//
// plan() against simulate(): the same schedules with offline addresses, the
// schedule without evictions wherever it fits, and never a worse plan.
//
//===----------------------------------------------------------------------===//

#include "PlanTestUtil.h"

#include "coop/Planner/GraphGenerator.h"

using namespace coop::planner;
using namespace coop::planner::testing;

namespace {

/// The online allocator's classic trap, byte-exact: a and c die on either
/// side of b, leaving two 30-byte holes where d needs 60 contiguous bytes.
/// Offline, b goes to one end and the holes are one. Live bytes peak at
/// x + b + s + d + the final add's result = 112.
struct SplitHoles {
  Graph g;
  SplitHoles() {
    TensorId x = g.addArgument("x", 10, TensorRole::Input);
    TensorId a = g.ops[g.addOp("aten.exp", {x}, {30}, {}, 1.0)].outputs[0];
    TensorId b = g.ops[g.addOp("aten.mm", {x}, {40}, {}, 1.0)].outputs[0];
    TensorId c = g.ops[g.addOp("aten.sin", {a}, {30}, {}, 1.0)].outputs[0];
    TensorId s = g.ops[g.addOp("aten.sum", {c}, {1}, {}, 1.0)].outputs[0];
    TensorId d = g.ops[g.addOp("aten.cos", {x}, {60}, {}, 1.0)].outputs[0];
    g.markStepOutput(g.ops[g.addOp("aten.add", {b, d, s}, {1}, {}, 1.0)]
                         .outputs[0]);
    EXPECT_TRUE(g.finalize());
  }
};

TEST(PlanSearch, OfflinePackingPlansWhatTheOnlineAllocatorCannot) {
  SplitHoles step;
  Plan p;
  Status online = simulate(step.g, byteOptions(Policy::None, 112), &p);
  ASSERT_FALSE(online);
  EXPECT_TRUE(contains(online.message(), "out of memory at op #4 'aten.cos'"))
      << online.message();
  ASSERT_OK(planAndVerify(step.g, byteOptions(Policy::None, 112), &p));
  EXPECT_EQ(p.stats.addressHighWater, 112);
  EXPECT_EQ(p.stats.packingLowerBoundBytes, 112);
  EXPECT_TRUE(p.stats.packingProvedOptimal);
  int64_t none = 0;
  ASSERT_OK(minimumBudget(step.g, byteOptions(Policy::None, 0), &none));
  EXPECT_EQ(none, 112);
  PlanOptions online112 = byteOptions(Policy::None, 0);
  online112.offlinePacking = false;
  ASSERT_OK(minimumBudget(step.g, online112, &none));
  EXPECT_GT(none, 112);
}

TEST(PlanSearch, ScheduleWithoutEvictionsWinsWhereItFits) {
  // At 112 the simulator alone must evict for d; the schedule without
  // evictions fits once packed, so every policy plans it at no cost.
  SplitHoles step;
  for (Policy policy : {Policy::Coop, Policy::DTR, Policy::DTE}) {
    Plan online, packed;
    Status st = simulate(step.g, byteOptions(policy, 112), &online);
    EXPECT_TRUE(!st || online.stats.recomputeCount > 0) << policyName(policy);
    ASSERT_OK(planAndVerify(step.g, byteOptions(policy, 112), &packed));
    EXPECT_EQ(packed.stats.recomputeCount, 0) << policyName(policy);
    EXPECT_EQ(packed.stats.evictionCount, 0) << policyName(policy);
    EXPECT_GT(packed.stats.simulatedBudgetBytes, 112) << policyName(policy);
  }
}

TEST(PlanSearch, PackingOffKeepsTheSimulatorsPlan) {
  SplitHoles step;
  PlanOptions o = byteOptions(Policy::Coop, 200);
  Plan a, b;
  ASSERT_OK(simulate(step.g, o, &a));
  o.offlinePacking = false;
  ASSERT_OK(plan(step.g, o, &b));
  ASSERT_EQ(a.instructions.size(), b.instructions.size());
  for (size_t i = 0; i < a.instructions.size(); ++i)
    for (size_t j = 0; j < a.instructions[i].outputs.size(); ++j)
      EXPECT_EQ(a.instructions[i].outputs[j].offset,
                b.instructions[i].outputs[j].offset);
  EXPECT_EQ(b.stats.simulatedBudgetBytes, 0);
}

/// Over generated steps and budgets: repacking changes offsets only, never
/// raises the high-water mark, and plan() never recomputes more than
/// simulate() where simulate() plans, nor fails where it plans.
TEST(PlanSearch, NeverWorseThanTheSimulator) {
  int compared = 0, improved = 0, rescued = 0, stepped = 0;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Graph g;
    ASSERT_OK(sweepStep(seed, 9, &g));
    PlanOptions o;
    StepBounds bounds;
    ASSERT_OK(stepBounds(g, o, &bounds));
    for (double fraction : {0.1, 0.4, 0.7}) {
      o.budgetBytes = budgetBetween(bounds, fraction);
      for (Policy policy : {Policy::Coop, Policy::DTR}) {
        o.policy = policy;
        Plan online, packed;
        Status a = simulate(g, o, &online);
        Status b = planAndVerify(g, o, &packed);
        if (a) {
          ASSERT_TRUE(b) << b.message();
          EXPECT_LE(packed.stats.executedCostUs, online.stats.executedCostUs);
          ++compared;
          improved += packed.stats.executedCostUs < online.stats.executedCostUs;
          // The simulator's own schedule, repacked: same instructions.
          Plan repacked = online;
          PackResult packing;
          PackOptions packOptions;
          packOptions.alignment = o.alignment;
          // Its work reaches the search's meter: per buffer, per packing
          // step (what the greedy orders looked at), per search node.
          WorkMeter meter;
          ASSERT_OK(repackPlan(g, packOptions, &repacked, &packing,
                               Deadline().withWorkLimit(&meter, 1 << 30)));
          stepped += packing.packingSteps > 0;
          EXPECT_EQ(meter.done(),
                    kWorkPerPackedBuffer * int64_t(packing.offsets.size()) +
                        packing.packingSteps / kPackingStepsPerWork +
                        kWorkPerPackingNode * packing.searchNodes);
          ASSERT_EQ(repacked.instructions.size(), online.instructions.size());
          for (size_t i = 0; i < online.instructions.size(); ++i) {
            EXPECT_EQ(repacked.instructions[i].kind,
                      online.instructions[i].kind);
            EXPECT_EQ(repacked.instructions[i].op, online.instructions[i].op);
          }
          EXPECT_LE(packing.peak, online.stats.addressHighWater);
          EXPECT_OK(verifyPlan(g, repacked, packing.peak));
        } else {
          rescued += bool(b);
        }
      }
    }
  }
  // The sweep must compare something and the search must pay off somewhere;
  // some repackings must have run a greedy order (not only the dropped
  // initial packing) for their steps to be counted.
  EXPECT_GT(compared, 100);
  EXPECT_GT(stepped, 0);
  EXPECT_GT(improved + rescued, 0);
  std::printf("%d plans compared, %d recompute less, %d plan only with "
              "offline packing\n",
              compared, improved, rescued);
}

TEST(PlanSearch, CappedArenaPlansWhereTheBudgetsOwnRunsShort) {
  // ArenaSearch::Capped: an arena a quarter larger than the budget, its
  // live bytes capped at the budget, the plan repacked into the budget.
  // Each plan verifies there, and some plan where the budget's own arena,
  // replays and all, runs out of contiguous runs.
  int planned = 0, onlyCapped = 0;
  for (uint64_t seed = 0; seed < 16; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Graph g;
    ASSERT_OK(sweepStep(seed, 9, &g));
    PlanOptions o;
    o.policy = Policy::Lookahead;
    StepBounds bounds;
    ASSERT_OK(stepBounds(g, o, &bounds));
    for (double fraction : {0.05, 0.2, 0.4}) {
      const int64_t budget = budgetBetween(bounds, fraction);
      o.budgetBytes = budget;
      o.simulatedArenas = PlanOptions::ArenaSearch::BudgetOnly;
      Plan own;
      const bool ownFits = bool(plan(g, o, &own));
      o.simulatedArenas = PlanOptions::ArenaSearch::Capped;
      Plan p;
      if (!plan(g, o, &p))
        continue;
      ++planned;
      onlyCapped += !ownFits;
      EXPECT_EQ(p.stats.simulatedBudgetBytes,
                cappedArenaBytes(budget, o.alignment));
      EXPECT_EQ(p.stats.simulatedBytesCap, budget);
      EXPECT_LE(p.stats.peakAllocatedBytes, budget);
      EXPECT_OK(verifyPlan(g, p, budget));
    }
  }
  EXPECT_GT(planned, 15);
  EXPECT_GT(onlyCapped, 0);
  std::printf("%d capped plans, %d where the budget's own arena fails\n",
              planned, onlyCapped);
}

TEST(PlanSearch, MinimumBudgetKeepsThePlanThatFitsIt) {
  // A plan fits every budget from its high-water mark up, so the bisection
  // answers a budget with any plan found so far that fits it: its minimum
  // comes with a plan that verifies there, even where plan() at that very
  // budget runs out of memory (the simulator is not monotone).
  int checked = 0, keptFromElsewhere = 0;
  for (uint64_t seed = 0; seed < 12; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Graph g;
    ASSERT_OK(sweepStep(seed, 6, &g));
    for (Policy policy : {Policy::Coop, Policy::DTR}) {
      PlanOptions o;
      o.policy = policy;
      int64_t minimum = 0;
      Plan atMinimum;
      ASSERT_OK(minimumBudget(g, o, &minimum, &atMinimum));
      EXPECT_EQ(atMinimum.budgetBytes, minimum);
      EXPECT_OK(verifyPlan(g, atMinimum, minimum));
      o.budgetBytes = minimum - o.alignment;
      Plan below;
      EXPECT_FALSE(plan(g, o, &below)) << "one alignment below the minimum";
      o.budgetBytes = minimum;
      Plan replanned;
      keptFromElsewhere += !plan(g, o, &replanned);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 24);
  std::printf("%d minimum budgets answered by a plan found at a larger "
              "budget\n",
              keptFromElsewhere);
}

} // namespace
