//===- PlanImprovementTest.cpp - Local search on the search's winner ------===//
//
// improvePlan() (internal to the planner core) on hand-built steps whose
// plan, following a schedule chosen badly on purpose, is improvable: the
// improved plan verifies, costs less, and is the same on every run.
//
//===----------------------------------------------------------------------===//

#include "PlanTestUtil.h"

#include "PlanImprovement.h"

using namespace coop::planner;
using namespace coop::planner::testing;

namespace {

/// A hand-built step: an input x, values made from it, and reads of two
/// values into a one-byte step output.
struct Step {
  Graph g;
  TensorId x = g.addArgument("x", 10, TensorRole::Input);
  TensorId make(int64_t bytes, double cost) {
    return g.ops[g.addOp("aten.exp", {x}, {bytes}, {}, cost)].outputs[0];
  }
  void read(TensorId a, TensorId b) {
    g.markStepOutput(
        g.ops[g.addOp("aten.add", {a, b}, {1}, {}, 1.0)].outputs[0]);
  }
};

/// `g` planned by lookahead in `budget`, evicting `value` after op `at`:
/// the incumbent improvePlan() starts from, and the options it was
/// simulated with.
Plan followSchedule(const Graph &g, const StepAnalysis &analysis,
                    PlanOptions *options, OpId at, TensorId value) {
  EvictionSchedule schedule(g.ops.size());
  schedule[at].push_back(value);
  options->scheduledEvictions =
      std::make_shared<const EvictionSchedule>(schedule);
  Plan plan;
  EXPECT_OK(simulate(g, *options, analysis, &plan));
  plan.stats.simulatedBudgetBytes = options->budgetBytes;
  return plan;
}

/// improvePlan() on `plan` with no deadline, in the budget of `options`.
PlanImprovement improve(const Graph &g, const StepAnalysis &analysis,
                        const PlanOptions &options, Plan *plan,
                        int maxNeighbours = kMaxImprovementNeighbours) {
  return improvePlan(g, analysis, options, options.budgetBytes, Deadline(),
                     plan, maxNeighbours);
}

/// v (100 bytes, recomputed in `cost` us) idle over the run of a (150
/// bytes), read before it.
struct IdleOverARun : Step {
  explicit IdleOverARun(double cost) : v(make(100, cost)) { // op 0
    const TensorId a = make(150, 1);                        // op 1
    read(a, x);                                             // op 2
    read(v, x);                                             // op 3
  }
  TensorId v;
};

TEST(PlanImprovement, DropsAnEvictionTheBudgetDoesNotNeed) {
  IdleOverARun step(50);
  ASSERT_TRUE(step.g.finalize());
  PlanOptions o = byteOptions(Policy::Lookahead, 400);
  const StepAnalysis analysis = analyse(step.g, o);
  Plan plan = followSchedule(step.g, analysis, &o, 0, step.v);
  ASSERT_EQ(plan.stats.recomputeCount, 1);
  const double before = plan.stats.executedCostUs;

  const PlanImprovement done =
      improve(step.g, analysis, o, &plan);
  EXPECT_EQ(done.improvements, 1);
  EXPECT_EQ(plan.stats.recomputeCount, 0);
  EXPECT_DOUBLE_EQ(plan.stats.executedCostUs, before - 50);
  EXPECT_OK(verifyPlan(step.g, plan, o.budgetBytes));
}

TEST(PlanImprovement, EvictsACheaperValueInstead) {
  // v and w are both idle over a's run, one of them must go: the schedule
  // drops v, whose recomputation costs 50 times w's.
  Step step;
  const TensorId v = step.make(100, 50); // op 0
  const TensorId w = step.make(100, 1);  // op 1
  const TensorId a = step.make(150, 1);  // op 2
  step.read(a, step.x);                  // op 3
  step.read(v, w);                       // op 4
  ASSERT_TRUE(step.g.finalize());
  PlanOptions o = byteOptions(Policy::Lookahead, 280);
  const StepAnalysis analysis = analyse(step.g, o);
  const Plan original = followSchedule(step.g, analysis, &o, 0, v);
  ASSERT_EQ(original.stats.recomputeCount, 1);

  Plan plan = original;
  const PlanImprovement done =
      improve(step.g, analysis, o, &plan);
  EXPECT_GE(done.improvements, 1);
  EXPECT_EQ(plan.stats.recomputeCount, 1);
  EXPECT_DOUBLE_EQ(plan.stats.executedCostUs,
                   original.stats.executedCostUs - 49);
  EXPECT_OK(verifyPlan(step.g, plan, o.budgetBytes));

  // The same on every run; nothing without a neighbour to try.
  Plan again = original;
  improve(step.g, analysis, o, &again);
  EXPECT_EQ(again.stats.executedCostUs, plan.stats.executedCostUs);
  EXPECT_EQ(again.instructions.size(), plan.instructions.size());
  Plan capped = original;
  const PlanImprovement none =
      improve(step.g, analysis, o, &capped, /*maxNeighbours=*/0);
  EXPECT_EQ(none.neighboursTried, 0);
  EXPECT_EQ(capped.stats.executedCostUs, original.stats.executedCostUs);
}

TEST(PlanImprovement, KeepsAPlanNoNeighbourImproves) {
  // The only eviction that lets a fit: dropping it does not fit, and
  // nothing cheaper is idle over a's run.
  IdleOverARun step(5);
  ASSERT_TRUE(step.g.finalize());
  PlanOptions o = byteOptions(Policy::Lookahead, 200);
  const StepAnalysis analysis = analyse(step.g, o);
  Plan plan = followSchedule(step.g, analysis, &o, 0, step.v);
  const double before = plan.stats.executedCostUs;
  const PlanImprovement done =
      improve(step.g, analysis, o, &plan);
  EXPECT_EQ(done.improvements, 0);
  EXPECT_GE(done.neighboursTried, 1);
  EXPECT_EQ(plan.stats.executedCostUs, before);
  EXPECT_OK(verifyPlan(step.g, plan, o.budgetBytes));
}

TEST(PlanImprovement, KeepsAValueThePolicyEvicted) {
  // Where a is made, v or w must go. Lookahead evicts v, dear but read
  // last (10 us over 26 ops), rather than w, read two ops later (1 us over
  // 2): its plan recomputes v. Kept until its read, v stays and w goes,
  // for 9 us less. There is no scheduled eviction to drop, and moving the
  // policy's up changes nothing.
  Step step;
  const TensorId v = step.make(100, 10); // op 0
  const TensorId w = step.make(80, 1);   // op 1
  const TensorId a = step.make(100, 1);  // op 2
  step.read(a, step.x);                  // op 3
  step.read(w, step.x);                  // op 4
  for (int i = 0; i < 24; ++i)
    step.read(step.x, step.x); // ops 5-28
  step.read(v, step.x);        // op 29
  ASSERT_TRUE(step.g.finalize());
  PlanOptions o = byteOptions(Policy::Lookahead, 280);
  const StepAnalysis analysis = analyse(step.g, o);
  Plan plan;
  ASSERT_OK(simulate(step.g, o, analysis, &plan));
  plan.stats.simulatedBudgetBytes = o.budgetBytes;
  auto recomputed = [](const Plan &p) {
    std::vector<OpId> ops;
    for (const Instruction &ins : p.instructions)
      if (ins.kind == InstructionKind::Recompute)
        ops.push_back(ins.op);
    return ops;
  };
  ASSERT_EQ(recomputed(plan), std::vector<OpId>{step.g.tensors[v].producer});
  const double before = plan.stats.executedCostUs;

  const PlanImprovement done = improve(step.g, analysis, o, &plan);
  EXPECT_EQ(done.improvements, 1);
  EXPECT_EQ(recomputed(plan), std::vector<OpId>{step.g.tensors[w].producer});
  EXPECT_DOUBLE_EQ(plan.stats.executedCostUs, before - 9);
  EXPECT_OK(verifyPlan(step.g, plan, o.budgetBytes));
}

} // namespace
