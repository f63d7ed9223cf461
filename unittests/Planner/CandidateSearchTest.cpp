//===- CandidateSearchTest.cpp - The default planner's search -------------===//
//
// searchPlan() against every policy's own plan(): never worse, never failing
// where one plans, deterministic; and the lookahead policy it adds pays off.
//
//===----------------------------------------------------------------------===//

#include "PlanTestUtil.h"

#include "coop/Planner/GraphGenerator.h"

#include "EvictionSchedule.h"

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>

using namespace coop::planner;
using namespace coop::planner::testing;

namespace {

PlanOptions unlimited(PlanOptions options) {
  options.searchWorkLimit = 0;
  return options;
}

/// A generated step, the search's options with no work limit,
/// and the step's floor and `none` arena.
struct SweptStep {
  Graph graph;
  PlanOptions options = unlimited(PlanOptions());
  StepBounds bounds;
};
Status sweptStep(uint64_t seed, int32_t layerSpread, SweptStep *out) {
  if (Status st = sweepStep(seed, layerSpread, &out->graph); !st)
    return st;
  return stepBounds(out->graph, out->options, &out->bounds);
}

/// A generated step of another shape than the sweep's: deeper, with batch
/// norms, skips, workspaces, two-ended placement and in-place
/// recomputation varied by the seed.
Status otherShapeStep(uint64_t seed, SweptStep *out) {
  TrainingGraphShape shape;
  shape.layers = 2 + int32_t(seed % 23);
  shape.batchNormProbability = seed % 3 == 0 ? 0.5 : 0.0;
  shape.skipProbability = double(seed % 5) / 10;
  shape.workspaceProbability = double(seed % 4) * 0.15;
  if (Status st = generateTrainingGraph(seed, shape, &out->graph); !st)
    return st;
  out->options.twoEndedPartitioning = seed % 2 == 0;
  out->options.recomputableInPlace = seed % 3 != 1;
  return stepBounds(out->graph, out->options, &out->bounds);
}

/// searchPlan() on otherShapeStep(seed) at `fraction` of the way from its
/// floor to `none`'s arena, the plan checked by the verifier.
Status searchOtherShapeStep(uint64_t seed, double fraction, Plan *plan,
                            int64_t workLimit = PlanOptions().searchWorkLimit) {
  SweptStep step;
  if (Status st = otherShapeStep(seed, &step); !st)
    return st;
  step.options.budgetBytes = budgetBetween(step.bounds, fraction);
  step.options.searchWorkLimit = workLimit;
  return planAndVerify(step.graph, step.options, plan, searchPlan);
}

/// A generated step's shape with `layers` and these probabilities: skip,
/// in place, old value, dropout, view, workspace, batch norm.
TrainingGraphShape shapeWith(int32_t layers,
                             const std::array<double, 7> &probabilities) {
  TrainingGraphShape shape;
  shape.layers = layers;
  shape.skipProbability = probabilities[0];
  shape.inPlaceProbability = probabilities[1];
  shape.oldValueProbability = probabilities[2];
  shape.dropoutProbability = probabilities[3];
  shape.viewProbability = probabilities[4];
  shape.workspaceProbability = probabilities[5];
  shape.batchNormProbability = probabilities[6];
  return shape;
}

/// A report line's candidate, without its run (", quick", ", capped", ...).
std::string candidateOf(const std::string &name) {
  return name.substr(0, name.rfind(", "));
}

/// Where the search tried the candidate `name` (-1: nowhere).
int indexOf(const std::vector<SearchCandidate> &tried,
            const std::string &name) {
  for (size_t i = 0; i < tried.size(); ++i)
    if (tried[i].name == name)
      return int(i);
  return -1;
}

/// The first instruction of `kind` that runs `op` (-1: none).
int indexOfOp(const Plan &plan, InstructionKind kind, OpId op) {
  for (size_t i = 0; i < plan.instructions.size(); ++i)
    if (plan.instructions[i].kind == kind && plan.instructions[i].op == op)
      return int(i);
  return -1;
}

/// The first eviction of `value` after instruction `after` (-1: none).
int indexOfEviction(const Plan &plan, TensorId value, int after = -1) {
  for (size_t i = after + 1; i < plan.instructions.size(); ++i)
    if (plan.instructions[i].kind == InstructionKind::Evict &&
        plan.instructions[i].tensor == value)
      return int(i);
  return -1;
}

/// Whether the search's `i`th run is a thorough one of a candidate whose
/// rescue did not plan.
bool thoroughAfterAFailedRescue(const std::vector<SearchCandidate> &tried,
                                size_t i) {
  const std::string suffix = ", thorough";
  const std::string &name = tried[i].name;
  if (name.size() < suffix.size() ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return false;
  const int rescue = indexOf(
      tried, name.substr(0, name.size() - suffix.size()) + ", rescue");
  return rescue >= 0 && !tried[rescue].planned;
}

/// Runs `body` on the first `seeds` swept steps at each budget `fractions`
/// of the way from the floor to `none`'s arena (step.options.budgetBytes).
template <typename Body>
void forSweptBudgets(uint64_t seeds, std::initializer_list<double> fractions,
                     Body body) {
  for (uint64_t seed = 0; seed < seeds; ++seed) {
    SweptStep step;
    ASSERT_OK(sweptStep(seed, 7, &step));
    for (double fraction : fractions) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " at " +
                   std::to_string(fraction));
      step.options.budgetBytes = budgetBetween(step.bounds, fraction);
      body(step);
    }
  }
}

TEST(CandidateSearch, NeverWorseThanAnyPolicy) {
  int compared = 0, lookaheadBeatsCoop = 0, coopBeatsLookahead = 0;
  int scheduleWins = 0;
  for (uint64_t seed = 0; seed < 24; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    SweptStep step;
    ASSERT_OK(sweptStep(seed, 7, &step));
    const Graph &g = step.graph;
    PlanOptions &o = step.options;
    const StepBounds &bounds = step.bounds;
    for (double fraction : {0.1, 0.4, 0.7}) {
      o.budgetBytes = budgetBetween(bounds, fraction);
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
        scheduleWins += contains(searched.stats.winningCandidate,
                                 "evictions scheduled");
        // Only a plan that recomputes nothing ends the search early.
        if (searched.stats.recomputeCount > 0)
          EXPECT_GE(searched.stats.candidates.size(), 5u);
        EXPECT_FALSE(searched.stats.timeLimitReached);
      }
    }
  }
  EXPECT_GT(compared, 100);
  // Knowing the future must pay off somewhere.
  EXPECT_GT(lookaheadBeatsCoop, 0);
  EXPECT_GT(scheduleWins, 0);
  std::printf("%d plans compared; lookahead recomputes less than coop on %d "
              "budgets, more on %d; a scheduled eviction plan won on %d\n",
              compared, lookaheadBeatsCoop, coopBeatsLookahead, scheduleWins);
}

/// x -> a -> b -> c, and a is read again by the last op: a schedule that
/// evicts a after b has read it frees its bytes over c's production and
/// brings it back, recomputed, for the last op.
/// x -> a -> b -> c, then a + c; the ops making a, b and c.
struct ChainStep {
  Graph graph;
  OpId makeA, makeB, makeC;
  TensorId a, b;
};
ChainStep chainStep() {
  ChainStep step;
  Graph &g = step.graph;
  TensorId x = g.addArgument("x", 10, TensorRole::Input);
  step.makeA = g.addOp("aten.exp", {x}, {40}, {}, 1.0);
  step.a = g.ops[step.makeA].outputs[0];
  step.makeB = g.addOp("aten.sin", {step.a}, {40}, {}, 1.0);
  step.b = g.ops[step.makeB].outputs[0];
  step.makeC = g.addOp("aten.cos", {step.b}, {40}, {}, 1.0);
  TensorId c = g.ops[step.makeC].outputs[0];
  g.markStepOutput(
      g.ops[g.addOp("aten.add", {step.a, c}, {1}, {}, 1.0)].outputs[0]);
  EXPECT_TRUE(g.finalize());
  return step;
}

/// Lookahead in an arena of 1000 bytes, evicting `values` after op `after`.
PlanOptions scheduledOptions(const ChainStep &step, OpId after,
                             std::vector<TensorId> values) {
  PlanOptions o = byteOptions(Policy::Lookahead, 1000);
  auto schedule = std::make_shared<EvictionSchedule>(step.graph.ops.size());
  (*schedule)[after] = std::move(values);
  o.scheduledEvictions = schedule;
  return o;
}

TEST(CandidateSearch, SimulatorFollowsAScheduleOfEvictions) {
  const ChainStep step = chainStep();
  const OpId makeA = step.makeA, makeB = step.makeB;
  const TensorId a = step.a;
  Plan p;
  ASSERT_OK(planAndVerify(step.graph, scheduledOptions(step, makeB, {a}), &p,
                          simulate));
  // Nothing forced it (the arena holds everything): only the schedule did.
  EXPECT_EQ(p.stats.evictionEvents, 0);
  EXPECT_EQ(p.stats.evictionCount, 1);
  EXPECT_EQ(p.stats.recomputeCount, 1);
  const int runB = indexOfOp(p, InstructionKind::Run, makeB);
  const int evictA = indexOfEviction(p, a);
  EXPECT_LT(runB, evictA);
  EXPECT_LT(evictA, indexOfOp(p, InstructionKind::Recompute, makeA));
}

/// The schedule's plan costs 5 us (four ops, a recomputed once): a bound of
/// 5 us keeps it, one below stops the simulation once the cost so far plus
/// every later op's and the re-run of every evicted value's producer that a
/// later op reads passes it (here right after b's op, which evicts a, before
/// anything is recomputed), and flags why.
TEST(CandidateSearch, CostBoundStopsASimulationThatCannotWin) {
  const ChainStep step = chainStep();
  PlanOptions o = scheduledOptions(step, step.makeB, {step.a});
  o.costBoundUs = 5;
  Plan p;
  ASSERT_OK(planAndVerify(step.graph, o, &p, simulate));
  EXPECT_EQ(p.stats.executedCostUs, 5);
  EXPECT_FALSE(p.stats.costBoundReached);
  o.costBoundUs = 4.5;
  Status st = simulate(step.graph, o, &p);
  ASSERT_FALSE(st);
  EXPECT_TRUE(p.stats.costBoundReached) << st.message();
  EXPECT_TRUE(contains(st.message(), "cost bound")) << st.message();
  EXPECT_TRUE(contains(st.message(), "aten.sin")) << st.message();
  EXPECT_EQ(p.stats.recomputeCount, 0);
  // A bound stop is not a failure to learn from: no replays.
  o.learnFromFailures = true;
  ASSERT_FALSE(simulate(step.graph, o, &p));
  EXPECT_TRUE(p.stats.costBoundReached);
}

/// x -> a -> b -> c, then b + c, every op 1 us: a schedule that evicts b
/// after c's op commits to rebuilding b, and, since a is freed after its
/// last read (b's op), a too: 6 us in all. A bound of 5.5 us stops it right
/// after c's op, before anything is recomputed (counting b's re-run alone,
/// 5 us, it ran to the add).
TEST(CandidateSearch, CostBoundCountsTheRerunsAnEvictionCommitsTo) {
  Graph g;
  const TensorId x = g.addArgument("x", 10, TensorRole::Input);
  const OpId makeA = g.addOp("aten.exp", {x}, {40}, {}, 1.0);
  const OpId makeB =
      g.addOp("aten.sin", {g.ops[makeA].outputs[0]}, {40}, {}, 1.0);
  const TensorId b = g.ops[makeB].outputs[0];
  const OpId makeC = g.addOp("aten.cos", {b}, {40}, {}, 1.0);
  g.markStepOutput(
      g.ops[g.addOp("aten.add", {b, g.ops[makeC].outputs[0]}, {1}, {}, 1.0)]
          .outputs[0]);
  ASSERT_TRUE(g.finalize());
  PlanOptions o = byteOptions(Policy::Lookahead, 1000);
  auto schedule = std::make_shared<EvictionSchedule>(g.ops.size());
  (*schedule)[makeC] = {b};
  o.scheduledEvictions = schedule;
  Plan p;
  ASSERT_OK(planAndVerify(g, o, &p, simulate));
  EXPECT_EQ(p.stats.executedCostUs, 6);
  EXPECT_EQ(p.stats.recomputeCount, 2);
  o.costBoundUs = 5.5;
  Status st = simulate(g, o, &p);
  ASSERT_FALSE(st);
  EXPECT_TRUE(p.stats.costBoundReached) << st.message();
  EXPECT_TRUE(contains(st.message(), "aten.cos")) << st.message();
  EXPECT_EQ(p.stats.recomputeCount, 0);
}

/// A bound of the chain's own peak of bytes allocated at once plans; one
/// byte less stops the simulation, and flags why.
TEST(CandidateSearch, AllocatedBytesBoundStopsASimulation) {
  const ChainStep step = chainStep();
  PlanOptions o = byteOptions(Policy::Lookahead, 1000);
  Plan p;
  ASSERT_OK(simulate(step.graph, o, &p));
  const int64_t peak = p.stats.peakAllocatedBytes;
  o.allocatedBytesBound = peak;
  ASSERT_OK(simulate(step.graph, o, &p));
  o.allocatedBytesBound = peak - 1;
  ASSERT_FALSE(simulate(step.graph, o, &p));
  EXPECT_TRUE(p.stats.allocatedBytesBoundReached);
}

/// plan() under a cost bound, each policy on swept steps: at its own plan's
/// cost, or just below, a plan found is within the bound, and no plan says
/// that the bound stopped it. At its own cost it mostly plans at that cost
/// again; not always: the arenas the bound stopped are not known to fit,
/// so the arena search walks other arenas (docs/planner.md, "Branch and
/// bound").
TEST(CandidateSearch, PlanKeepsWithinTheCostBound) {
  int bounded = 0, again = 0, stopped = 0;
  forSweptBudgets(6, {0.1, 0.4, 0.7}, [&](SweptStep &step) {
    for (Policy policy :
         {Policy::Lookahead, Policy::Coop, Policy::DTR, Policy::DTE}) {
      SCOPED_TRACE(policyName(policy));
      PlanOptions o = step.options;
      o.policy = policy;
      Plan free;
      if (!plan(step.graph, o, &free) || free.stats.recomputeCount == 0)
        continue;
      o.boundArenaWalk = true; // as the search plans its candidates
      for (double below : {0.0, 1e-3}) {
        o.costBoundUs = free.stats.executedCostUs - below;
        ++bounded;
        Plan p;
        Status st = planAndVerify(step.graph, o, &p, plan);
        if (st) {
          EXPECT_LE(p.stats.executedCostUs, o.costBoundUs);
          again += below == 0 &&
                   p.stats.executedCostUs == free.stats.executedCostUs;
        } else {
          EXPECT_TRUE(p.stats.costBoundReached) << st.message();
          ++stopped;
        }
      }
    }
  });
  EXPECT_GT(again, bounded / 4);
  EXPECT_GT(stopped, 0);
  std::printf("%d bounded plans: %d at their own cost again, %d stopped\n",
              bounded, again, stopped);
}

/// A single policy walks every simulated arena to its end, as the
/// reproductions of the published policies always have: no simulation of
/// its walk stops on a bound, and its plans are those of the walk the
/// search bounds only where the bound changed the walk.
TEST(CandidateSearch, ArenaWalkIsBoundedOnlyWhenAsked) {
  int walks = 0, shorter = 0;
  forSweptBudgets(6, {0.1, 0.4, 0.7}, [&](SweptStep &step) {
    for (Policy policy : {Policy::Coop, Policy::DTR, Policy::DTE}) {
      SCOPED_TRACE(policyName(policy));
      PlanOptions o = step.options;
      o.policy = policy;
      Plan walked, bounded;
      const Status st = plan(step.graph, o, &walked);
      EXPECT_FALSE(walked.stats.costBoundReached);
      EXPECT_FALSE(walked.stats.allocatedBytesBoundReached);
      o.boundArenaWalk = true;
      if (!st || !plan(step.graph, o, &bounded))
        continue;
      ++walks;
      shorter += bounded.stats.simulatedBudgetsTried <
                 walked.stats.simulatedBudgetsTried;
      if (bounded.stats.simulatedBudgetsTried ==
          walked.stats.simulatedBudgetsTried)
        EXPECT_EQ(bounded.stats.executedCostUs, walked.stats.executedCostUs);
    }
  });
  EXPECT_GT(shorter, 0);
  std::printf("%d walks, %d shorter where bounded\n", walks, shorter);
}

/// c (100 bytes, 1 us) concatenates f1 and f2 (10 bytes, 50 us each),
/// which ops 3 and 4 read again, and is read again after the peak (ops
/// 5-6): only c can go. Every policy rebuilds f1 and f2 with it (101 us);
/// the schedule that keeps them from their last use to c's read, handed
/// to the simulator through the search, re-runs the concatenation only.
TEST(CandidateSearch, KeptInputsReachTheSimulator) {
  Graph g;
  const TensorId x = g.addArgument("x", 10, TensorRole::Input);
  auto make = [&](std::vector<TensorId> inputs, int64_t bytes, double cost) {
    return g.ops[g.addOp("aten.exp", std::move(inputs), {bytes}, {}, cost)]
        .outputs[0];
  };
  auto read = [&](TensorId a, TensorId b) {
    g.markStepOutput(
        g.ops[g.addOp("aten.add", {a, b}, {1}, {}, 1.0)].outputs[0]);
  };
  const TensorId f1 = make({x}, 10, 50.0);      // op 0
  const TensorId f2 = make({x}, 10, 50.0);      // op 1
  const TensorId c = make({f1, f2}, 100, 1.0); // op 2
  read(c, f1);                                  // op 3
  read(f2, x);                                  // op 4
  read(make({x}, 150, 100.0), x);               // ops 5, 6
  read(c, x);                                   // op 7
  ASSERT_TRUE(g.finalize());

  Plan p;
  ASSERT_OK(planAndVerify(g, unlimited(byteOptions(Policy::Lookahead, 210)), &p,
                          searchPlan));
  EXPECT_NEAR(p.stats.executedCostUs - p.stats.baselineCostUs, 1.0, 1e-9);
  EXPECT_NE(p.stats.winningCandidate.find("(dead inputs retained)"),
            std::string::npos)
      << p.stats.winningCandidate;
}

/// The order the search's limit cuts: where the schedule for the budget
/// stopped above it, schedules (counting every rebuilt value) for targets
/// below where it stopped run their quick round only after the thorough
/// round of the rest, and those at or above it before; the single-victim
/// candidate is the last probe of the quick round, and its rescue comes
/// after that of every window candidate that failed too.
TEST(CandidateSearch, LeastPromisingCandidatesComeLast) {
  const std::pair<int, const char *> targets[] = {
      {970, "97.0"}, {940, "94.0"}, {1030, "103.0"}};
  int missed = 0, deferred = 0, singleVictimRescues = 0;
  for (uint64_t seed = 0; seed < 12; ++seed) {
    SweptStep step;
    ASSERT_OK(sweptStep(seed, 7, &step));
    PlanOptions &o = step.options;
    for (double fraction : {0.02, 0.1, 0.3}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " at " +
                   std::to_string(fraction));
      o.budgetBytes = budgetBetween(step.bounds, fraction);
      Plan p;
      static_cast<void>(searchPlan(step.graph, o, &p));
      const std::vector<SearchCandidate> &tried = p.stats.candidates;
      auto at = [&](const std::string &name) { return indexOf(tried, name); };
      const int single = at("lookahead (single victims), quick");
      // Coop retaining shared inputs is rescued within the quick round
      // where a schedule missed its target, by design.
      int firstThorough = -1;
      for (int i = 0; i < int(tried.size()) && firstThorough < 0; ++i)
        if ((contains(tried[i].name, ", thorough") ||
             contains(tried[i].name, ", rescue")) &&
            !(i < single && contains(tried[i].name, "(shared inputs retained)")))
          firstThorough = i;
      if (firstThorough < 0)
        continue; // ended early: nothing recomputes less than its plan
      ASSERT_GE(single, 0);
      EXPECT_EQ(single + 1, firstThorough);
      const int singleRescue = at("lookahead (single victims), rescue");
      if (singleRescue >= 0) {
        ++singleVictimRescues;
        for (const char *window : {"lookahead", "coop", "dtr", "dte"}) {
          const int quick = at(std::string(window) + ", quick");
          if (quick >= 0 && !tried[quick].planned)
            EXPECT_LT(at(std::string(window) + ", rescue"), singleRescue)
                << window;
        }
      }
      const ScheduledEvictions forBudget =
          scheduleEvictions(step.graph, analyse(step.graph, o), o.alignment,
                            o.budgetBytes, RebuiltBytes::EveryValue,
                            RecomputeChains::Short);
      if (forBudget.peakLiveBytes <= o.budgetBytes)
        continue;
      ++missed;
      for (auto [perMille, percent] : targets) {
        const int quick = at(std::string("lookahead after evictions "
                                         "scheduled for ") +
                             percent + " % of the budget, quick");
        if (quick < 0)
          continue; // its schedule repeated another's peak
        const int64_t target =
            o.budgetBytes / 1000 * perMille + o.budgetBytes % 1000 * perMille / 1000;
        if (target < forBudget.peakLiveBytes) {
          ++deferred;
          EXPECT_GT(quick, firstThorough) << percent;
        } else {
          EXPECT_LT(quick, firstThorough) << percent;
        }
      }
    }
  }
  EXPECT_GT(missed, 0);
  EXPECT_GT(deferred, 0);
  EXPECT_GT(singleVictimRescues, 0);
  std::printf("schedule for the budget missed at %d points; %d later "
              "schedules deferred; %d single-victim rescues\n",
              missed, deferred, singleVictimRescues);
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

/// The search with the default options, `workLimit` and `limitSeconds`, at
/// the floor of a 400-layer generated step (a working set alone, nothing
/// else fits): its status, its plan and how long it took.
void searchAtTheFloor(int64_t workLimit, double limitSeconds, Status *st,
                      Plan *p, double *seconds) {
  Graph g;
  TrainingGraphShape shape;
  shape.layers = 400;
  ASSERT_OK(generateTrainingGraph(11, shape, &g));
  PlanOptions o;
  StepBounds bounds;
  ASSERT_OK(stepBounds(g, o, &bounds));
  o.budgetBytes = bounds.floor;
  o.searchWorkLimit = workLimit;
  o.searchTimeLimitSeconds = limitSeconds;
  const auto start = std::chrono::steady_clock::now();
  *st = searchPlan(g, o, p);
  *seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
}

/// A failing search stops at the time limit, whatever it had left: with
/// no limit the same search runs every candidate's replay series (3.2 s on
/// the busy 2-core machine; it used to run them whatever the limit).
TEST(CandidateSearch, TimeLimitBoundsAFailingSearch) {
  Status st = Status::ok();
  Plan p;
  double seconds = 0;
  searchAtTheFloor(/*workLimit=*/0, 0.05, &st, &p, &seconds);
  ASSERT_FALSE(st);
  EXPECT_TRUE(p.stats.timeLimitReached);
  EXPECT_TRUE(p.stats.clockLimitReached);
  EXPECT_TRUE(contains(st.message(), "no plan found within the time limit "
                                     "of 0.05 s"))
      << st.message();
  // 20 times the limit: it stops every replay and simulation but the
  // first candidate's (one, quick), not a schedule being computed (40 ms
  // here) nor the final repacking.
  EXPECT_LT(seconds, 1.0);
}

/// The work limit stops the same search too, at the same point every time
/// whatever the machine's load: the same candidates, the same work.
TEST(CandidateSearch, WorkLimitStopsAFailingSearchDeterministically) {
  constexpr int64_t kLimit = 200000;
  Status first = Status::ok(), second = Status::ok();
  Plan p, q;
  double seconds = 0;
  searchAtTheFloor(kLimit, 0, &first, &p, &seconds);
  searchAtTheFloor(kLimit, 0, &second, &q, &seconds);
  ASSERT_FALSE(first);
  EXPECT_TRUE(p.stats.timeLimitReached);
  EXPECT_FALSE(p.stats.clockLimitReached);
  EXPECT_TRUE(contains(first.message(), "no plan found within the work limit "
                                        "of 200000 units"))
      << first.message();
  EXPECT_EQ(first.message(), second.message());
  EXPECT_EQ(p.stats.searchWork, q.stats.searchWork);
  ASSERT_EQ(p.stats.candidates.size(), q.stats.candidates.size());
  int64_t work = 0;
  for (size_t i = 0; i < p.stats.candidates.size(); ++i) {
    EXPECT_EQ(p.stats.candidates[i].name, q.stats.candidates[i].name);
    EXPECT_EQ(p.stats.candidates[i].work, q.stats.candidates[i].work);
    work += p.stats.candidates[i].work;
  }
  // Past the limit only the first candidate (which runs whatever the
  // limit) and the op each later simulation had begun.
  EXPECT_LE(work, p.stats.searchWork);
  EXPECT_LT(p.stats.searchWork,
            kLimit + p.stats.candidates.front().work + 1000);
}

/// Without a limit a failure says why, not that time ran out.
TEST(CandidateSearch, UnlimitedFailureNamesTheOp) {
  int failures = 0;
  for (uint64_t seed = 0; seed < 12; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    SweptStep step;
    ASSERT_OK(sweptStep(seed, 3, &step));
    step.options.budgetBytes = step.bounds.floor;
    Plan p;
    Status st = searchPlan(step.graph, step.options, &p);
    if (st)
      continue; // the floor itself planned
    ++failures;
    EXPECT_FALSE(p.stats.timeLimitReached);
    EXPECT_TRUE(contains(st.message(), "out of memory at op"))
        << st.message();
  }
  EXPECT_GT(failures, 0);
}

/// Runs `body` with `options` at each budget a tenth, ..., nine tenths of
/// the way from `graph`'s floor to `none`'s arena.
template <typename Body>
void forTenthsOfTheWay(const Graph &graph, PlanOptions &options, Body body) {
  StepBounds bounds;
  ASSERT_OK(stepBounds(graph, options, &bounds));
  for (int tenth = 1; tenth < 10; ++tenth) {
    options.budgetBytes = budgetBetween(bounds, tenth / 10.0);
    SCOPED_TRACE(std::to_string(options.budgetBytes) + " bytes");
    body();
  }
}

/// Retaining shared inputs, coop rebuilds a recurrent step's projection at
/// most once and costs no more than freeing them, at budgets from the floor
/// to `none`'s arena; the search has that candidate.
TEST(CandidateSearch, RetainedProjectionIsRebuiltOnce) {
  RecurrentStep step;
  ASSERT_OK(recurrentStep(16, &step));
  PlanOptions o = unlimited(PlanOptions());
  o.policy = Policy::Coop;
  int rebuiltOften = 0;
  forTenthsOfTheWay(step.graph, o, [&] {
    Plan freed, retained, searched;
    o.retainSharedInputs = false;
    if (!planAndVerify(step.graph, o, &freed))
      return;
    o.retainSharedInputs = true;
    ASSERT_OK(planAndVerify(step.graph, o, &retained));
    // Once rebuilt for a gate, the projection stays for the others.
    EXPECT_LE(recomputationsOf(retained, step.projection), 1);
    EXPECT_LE(retained.stats.executedCostUs, freed.stats.executedCostUs);
    rebuiltOften += recomputationsOf(freed, step.projection) > 1;
    // The search has the candidate.
    ASSERT_OK(planAndVerify(step.graph, o, &searched, searchPlan));
    EXPECT_LE(searched.stats.executedCostUs, retained.stats.executedCostUs);
  });
  // Where each closure frees it again, it is rebuilt for gate after gate.
  EXPECT_GT(rebuiltOften, 0);
}

/// A self-attention block's shape: one fused projection (expensive) split
/// through views into queries, keys and values, each copied out; the
/// scores (large) from queries and keys, the output from scores and
/// values. The backward reduces the scores' gradient (as the softmax
/// backward does), then reads the keys for the queries' gradient and the
/// queries for the keys' gradient: with both dropped after the scores,
/// each is rebuilt from the projection.
struct AttentionStep {
  Graph graph;
  OpId projection = kNone, scores = kNone;
  TensorId queries = kNone, keys = kNone;
};
Status attentionStep(AttentionStep *out) {
  Graph &g = out->graph;
  constexpr int64_t kHead = 1024, kScores = 8 * kHead;
  auto op = [&](const char *name, std::vector<TensorId> inputs, int64_t bytes,
                double costUs) {
    return g.ops[g.addOp(name, std::move(inputs), {bytes}, {}, costUs)]
        .outputs[0];
  };
  const TensorId x = g.addArgument("x", 512, TensorRole::Input);
  const TensorId w = g.addArgument("w", 512, TensorRole::Parameter);
  out->projection = g.addOp("aten.mm", {x, w}, {3 * kHead}, {}, 200.0);
  const OpId split =
      g.addView("aten.split.Tensor", g.ops[out->projection].outputs[0],
                {kHead, kHead, kHead});
  out->queries = op("aten.clone", {g.ops[split].outputs[0]}, kHead, 1.0);
  out->keys = op("aten.clone", {g.ops[split].outputs[1]}, kHead, 1.0);
  const TensorId values =
      op("aten.clone", {g.ops[split].outputs[2]}, kHead, 1.0);
  const TensorId scores =
      op("aten.bmm", {out->queries, out->keys}, kScores, 4.0);
  out->scores = g.tensors[scores].producer;
  const TensorId attended = op("aten.bmm", {scores, values}, 2 * kHead, 4.0);
  const TensorId loss = op("aten.sum", {attended}, 512, 1.0);
  const TensorId gradAttended = op("aten.expand", {loss}, 2 * kHead, 1.0);
  const TensorId gradScores =
      op("aten._softmax_backward_data",
         {op("aten.bmm", {gradAttended, values}, kScores, 4.0)}, kHead, 4.0);
  const TensorId gradQueries =
      op("aten.bmm", {gradScores, out->keys}, kHead, 4.0);
  const TensorId gradKeys =
      op("aten.bmm", {gradScores, out->queries}, kHead, 4.0);
  g.markStepOutput(op("aten.mm", {gradQueries, gradKeys, x}, 512, 2.0));
  return g.finalize();
}

/// Following a schedule that drops the queries and keys, the lookahead
/// keeping the projection once rebuilt (shared inputs retained) runs it
/// once for both, where freeing it after each closure runs it twice; and
/// the search has that candidate, the first schedule's twin.
TEST(CandidateSearch, ScheduleRetainingSharedInputsRebuildsOnce) {
  AttentionStep step;
  ASSERT_OK(attentionStep(&step));
  PlanOptions o = byteOptions(Policy::Lookahead, int64_t(1) << 30);
  auto schedule = std::make_shared<EvictionSchedule>(step.graph.ops.size());
  (*schedule)[step.scores] = {step.queries, step.keys};
  o.scheduledEvictions = schedule;
  Plan freed, retained;
  ASSERT_OK(planAndVerify(step.graph, o, &freed, simulate));
  o.retainSharedInputs = true;
  ASSERT_OK(planAndVerify(step.graph, o, &retained, simulate));
  EXPECT_EQ(recomputationsOf(freed, step.projection), 2);
  EXPECT_EQ(recomputationsOf(retained, step.projection), 1);
  EXPECT_LT(retained.stats.executedCostUs, freed.stats.executedCostUs);

  const std::string original =
      "lookahead after evictions scheduled for 100.0 % of the budget";
  const std::string twin = original + " (shared inputs retained), quick";
  PlanOptions searched = unlimited(PlanOptions());
  int ahead = 0;
  forTenthsOfTheWay(step.graph, searched, [&] {
    Plan p;
    if (!planAndVerify(step.graph, searched, &p, searchPlan))
      return;
    const std::vector<SearchCandidate> &tried = p.stats.candidates;
    const int first = indexOf(tried, original + ", quick");
    const int second = indexOf(tried, twin);
    if (first < 0 || second < 0)
      return; // the search stopped before them, or nothing is dropped
    // Right after coop retaining shared inputs, which follows the schedule.
    EXPECT_EQ(second, first + 2);
    EXPECT_EQ(tried[first + 1].name, "coop (shared inputs retained), quick");
    if (tried[second].planned &&
        (!tried[first].planned ||
         tried[second].computeOverhead < tried[first].computeOverhead)) {
      ++ahead;
      EXPECT_LE(p.stats.computeOverhead, tried[second].computeOverhead);
    }
  });
  // Somewhere the twin plans with less overhead than its original.
  EXPECT_GT(ahead, 0);
}

/// a and b are dropped after b's producer; rebuilding b for c's op
/// rebuilds a, which the add reads later. Kept, a holds its bytes through
/// c's allocation; evicted again once the closure has read it (what a
/// schedule counting rebuilt bytes HeldAtOnce assumes), it is rebuilt a
/// second time for the add, and the peak is lower.
TEST(CandidateSearch, EvictsClosureValuesAgain) {
  const ChainStep step = chainStep();
  const OpId makeA = step.makeA, makeB = step.makeB;
  const TensorId a = step.a;
  PlanOptions o = scheduledOptions(step, makeB, {a, step.b});
  Plan kept, evicted;
  ASSERT_OK(planAndVerify(step.graph, o, &kept, simulate));
  o.evictClosureValues = true;
  ASSERT_OK(planAndVerify(step.graph, o, &evicted, simulate));
  EXPECT_EQ(recomputationsOf(kept, makeA), 1);
  EXPECT_EQ(recomputationsOf(evicted, makeA), 2);
  // x, a, b and c at c's op; x, a, c and the sum at the add.
  EXPECT_EQ(kept.stats.peakAllocatedBytes, 130);
  EXPECT_EQ(evicted.stats.peakAllocatedBytes, 91);
  // Evicted right after b's recomputation read it, before c's op runs.
  const int recomputeB = indexOfOp(evicted, InstructionKind::Recompute, makeB);
  const int evictA = indexOfEviction(evicted, a, recomputeB);
  EXPECT_LT(recomputeB, evictA);
  EXPECT_LT(evictA, indexOfOp(evicted, InstructionKind::Run, step.makeC));
}

/// Two residual branches off x: h1 with the first block's sum s1, then h2.
/// The last op reads h2 first, then s1, both dropped after the forward
/// read them. Listed depth first, its closure rebuilds h2 before h1 and s1
/// and holds both branch outputs at once; evicting closure values again,
/// it runs in the step's order, h1 gone once s1 is rebuilt, before h2.
TEST(CandidateSearch, ClosureValuesEvictedAgainRunInStepOrder) {
  Graph g;
  const TensorId x = g.addArgument("x", 10, TensorRole::Input);
  const OpId makeH1 = g.addOp("aten.exp", {x}, {40}, {}, 1.0);
  const TensorId h1 = g.ops[makeH1].outputs[0];
  const OpId makeS1 = g.addOp("aten.add", {h1, x}, {40}, {}, 1.0);
  const TensorId s1 = g.ops[makeS1].outputs[0];
  const OpId makeH2 = g.addOp("aten.sin", {x}, {40}, {}, 1.0);
  const TensorId h2 = g.ops[makeH2].outputs[0];
  const OpId forward = g.addOp("aten.mul", {h2, s1}, {1}, {}, 1.0);
  const TensorId y = g.ops[forward].outputs[0];
  const TensorId z = g.ops[g.addOp("aten.cos", {y}, {1}, {}, 1.0)].outputs[0];
  g.markStepOutput(
      g.ops[g.addOp("aten.mul", {h2, s1, z}, {1}, {}, 1.0)].outputs[0]);
  ASSERT_OK(g.finalize());
  PlanOptions o = byteOptions(Policy::Lookahead, 1000);
  auto schedule = std::make_shared<EvictionSchedule>(g.ops.size());
  (*schedule)[forward] = {h2, s1};
  o.scheduledEvictions = schedule;
  Plan depthFirst, stepOrder;
  ASSERT_OK(planAndVerify(g, o, &depthFirst, simulate));
  o.evictClosureValues = true;
  ASSERT_OK(planAndVerify(g, o, &stepOrder, simulate));
  EXPECT_LT(indexOfOp(depthFirst, InstructionKind::Recompute, makeH2),
            indexOfOp(depthFirst, InstructionKind::Recompute, makeH1));
  EXPECT_LT(indexOfOp(stepOrder, InstructionKind::Recompute, makeS1),
            indexOfOp(stepOrder, InstructionKind::Recompute, makeH2));
  // x, z, h2, h1 and s1 while s1 is rebuilt; at most x, z, s1, h2 and the
  // last op's output in the step's order (x, s1, h2 and y in the forward).
  EXPECT_EQ(depthFirst.stats.peakAllocatedBytes, 131);
  EXPECT_EQ(stepOrder.stats.peakAllocatedBytes, 92);
}

/// Each schedule counting what is held has a twin that evicts closure
/// values again: it follows the same schedule, right after it in the quick
/// round, and never runs where its original did not.
TEST(CandidateSearch, ClosureTwinFollowsItsSchedule) {
  const std::string twin = " (closure values evicted again)";
  const std::string quick = ", quick";
  int twins = 0;
  forSweptBudgets(6, {0.02, 0.1, 0.2}, [&](SweptStep &step) {
    Plan p;
    static_cast<void>(searchPlan(step.graph, step.options, &p));
    const std::vector<SearchCandidate> &tried = p.stats.candidates;
    for (size_t i = 0; i < tried.size(); ++i) {
      const std::string &name = tried[i].name;
      const size_t at = name.find(twin);
      if (at == std::string::npos || name.find(quick) == std::string::npos)
        continue;
      ++twins;
      const std::string original =
          name.substr(0, at) + name.substr(at + twin.size());
      EXPECT_EQ(indexOf(tried, original), int(i) - 1) << name;
    }
  });
  EXPECT_GT(twins, 0);
}

/// Schedules counting what each recomputation holds in turn run only for
/// targets that those counting it at once missed, which those run only for
/// targets that counting every rebuilt value missed: near the floor, not
/// at light budgets.
TEST(CandidateSearch, CountsInTurnOnlyNearTheFloor) {
  auto countedInTurn = [](SweptStep &step) {
    Plan p;
    static_cast<void>(searchPlan(step.graph, step.options, &p));
    return std::count_if(p.stats.candidates.begin(), p.stats.candidates.end(),
                         [](const SearchCandidate &c) {
                           return contains(c.name,
                                           "(recomputations counted in turn)");
                         });
  };
  int64_t near = 0;
  forSweptBudgets(6, {0.02, 0.1, 0.2},
                  [&](SweptStep &step) { near += countedInTurn(step); });
  EXPECT_GT(near, 0);
  forSweptBudgets(6, {0.6, 0.9},
                  [&](SweptStep &step) { EXPECT_EQ(countedInTurn(step), 0); });
}

/// Over a grid of budgets from the floor to `none`'s arena: nothing fails
/// above a budget that plans, and a budget costs no more than one at most
/// 7/8 of it (the search also plans for 3/4 and 7/8 of its budget). Closer
/// budgets are only counted (5 of these 132 cost more than one 1-7 %
/// below): the simulator is not monotone in its arena.
TEST(CandidateSearch, MonotoneInTheBudget) {
  int budgets = 0, closerViolations = 0;
  for (uint64_t seed = 0; seed < 12; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    SweptStep swept;
    ASSERT_OK(sweptStep(seed, 7, &swept));
    PlanOptions &o = swept.options;
    struct Planned {
      int64_t budget;
      double cost;
      std::string winner;
    };
    std::vector<Planned> smaller;
    for (int tenth = 0; tenth <= 10; ++tenth) {
      o.budgetBytes = budgetBetween(swept.bounds, tenth / 10.0);
      Plan p;
      Status st = planAndVerify(swept.graph, o, &p, searchPlan);
      ++budgets;
      if (!st) {
        EXPECT_TRUE(smaller.empty())
            << "fails at " << o.budgetBytes
            << " bytes, above a budget that plans: " << st.message();
        continue;
      }
      bool closerViolation = false;
      for (const Planned &below : smaller) {
        if (p.stats.executedCostUs <= below.cost)
          continue;
        if (below.budget > o.budgetBytes / 8 * 7) {
          closerViolation = true;
          continue;
        }
        ADD_FAILURE() << "at " << o.budgetBytes << " bytes: "
                      << p.stats.executedCostUs << " us (won: "
                      << p.stats.winningCandidate << ") > " << below.cost
                      << " us at " << below.budget << " bytes (won: "
                      << below.winner << ")";
      }
      closerViolations += closerViolation;
      smaller.push_back(
          {o.budgetBytes, p.stats.executedCostUs, p.stats.winningCandidate});
    }
  }
  std::printf("%d budgets; %d cost more than a budget above 7/8 of theirs\n",
              budgets, closerViolations);
}

} // namespace

/// Where a candidate planned thoroughly within the quick round (coop
/// retaining shared inputs, rescued) with less overhead than every quick
/// plan, the same candidate is tried for 96, 92 and 88 % of the budget,
/// while those plan: such plans jump with the budget. Where no quick
/// candidate planned before it, right after it, as rescues, before the
/// rest of the quick round; otherwise thoroughly, right after the quick
/// round.
TEST(CandidateSearch, ThoroughPlanAheadOfTheQuickOnesTriesBudgetsJustBelow) {
  int early = 0, afterQuickRound = 0;
  for (int steps : {8, 16}) {
    RecurrentStep step;
    ASSERT_OK(recurrentStep(steps, &step));
    PlanOptions o = unlimited(PlanOptions());
    StepBounds bounds;
    ASSERT_OK(stepBounds(step.graph, o, &bounds));
    for (int twentieth = 1; twentieth < 20; ++twentieth) {
      o.budgetBytes = budgetBetween(bounds, twentieth / 20.0);
      SCOPED_TRACE(std::to_string(steps) + " steps, " +
                   std::to_string(o.budgetBytes) + " bytes");
      Plan p;
      static_cast<void>(searchPlan(step.graph, o, &p));
      const std::vector<SearchCandidate> &tried = p.stats.candidates;
      const std::string retained = "coop (shared inputs retained)";
      // The quick round ends with the single-victim probe.
      int thorough = -1, lastQuick = -1;
      bool quickPlanBefore = false;
      double bestQuick = std::numeric_limits<double>::infinity();
      for (int i = 0; i < int(tried.size()) && lastQuick < 0; ++i) {
        if (tried[i].name == retained + ", rescue")
          thorough = i;
        if (contains(tried[i].name, ", quick") && tried[i].planned) {
          bestQuick = std::min(bestQuick, tried[i].computeOverhead);
          quickPlanBefore |= thorough < 0;
        }
        if (tried[i].name == "lookahead (single victims), quick")
          lastQuick = i;
      }
      if (thorough < 0 || thorough > lastQuick || !tried[thorough].planned)
        continue;
      int first = 0;
      std::string run;
      if (!quickPlanBefore) {
        ++early;
        first = thorough + 1;
        run = ", rescue";
      } else if (tried[thorough].computeOverhead < bestQuick) {
        ++afterQuickRound;
        first = lastQuick + 1;
        run = ", thorough";
      } else {
        continue;
      }
      const char *below[] = {"96.0", "92.0", "88.0"};
      for (int k = 0; k < 3; ++k) {
        ASSERT_LT(first + k, int(tried.size()));
        const SearchCandidate &c = tried[first + k];
        EXPECT_EQ(c.name, retained + ", planned for " + below[k] +
                              " % of the budget" + run);
        if (!c.planned)
          break;
      }
    }
  }
  std::printf("%d searches tried budgets just below at once, %d after the "
              "quick round\n",
              early, afterQuickRound);
  EXPECT_GT(early + afterQuickRound, 0);
}

/// Unlimited, the search tries every candidate again with one-ended
/// placement after all the others (where the options allow two ends) but
/// the thorough runs of those the rescues did not plan, which come after
/// them, and the policies planned again without the search's bounds and
/// the capped round, last of all; the plan says how the winner placed its
/// values.
TEST(CandidateSearch, OneEndedPlacementComesLast) {
  int oneEndedWins = 0, searches = 0;
  forSweptBudgets(6, {0.1, 0.4}, [&](SweptStep &step) {
    PlanOptions &o = step.options;
    for (bool twoEnded : {true, false}) {
      o.twoEndedPartitioning = twoEnded;
      Plan p;
      if (!searchPlan(step.graph, o, &p))
        continue;
      const std::vector<SearchCandidate> &tried = p.stats.candidates;
      if (p.stats.recomputeCount == 0)
        continue; // ended early: nothing recomputes less
      ++searches;
      size_t end = tried.size();
      while (end > 0 && contains(tried[end - 1].name, ", capped"))
        --end;
      while (end > 0 && contains(tried[end - 1].name, ", unbounded"))
        --end;
      size_t firstOneEnded = end, firstUnrescued = end;
      for (size_t i = 0; i < end; ++i) {
        const bool oneEnded = contains(tried[i].name, "(one-ended placement)");
        if (oneEnded && firstOneEnded == end)
          firstOneEnded = i;
        const std::string &name = tried[i].name;
        EXPECT_FALSE(contains(name, ", unbounded")) << name;
        const bool afterFailedRescue = thoroughAfterAFailedRescue(tried, i);
        if (i > firstOneEnded && afterFailedRescue && firstUnrescued == end)
          firstUnrescued = i;
        if (i < firstUnrescued)
          EXPECT_EQ(oneEnded, i >= firstOneEnded) << name;
        else
          EXPECT_TRUE(afterFailedRescue) << name;
      }
      EXPECT_EQ(firstOneEnded < end, twoEnded);
      const bool wonOneEnded =
          contains(p.stats.winningCandidate, "(one-ended placement)");
      EXPECT_EQ(p.twoEndedPartitioning, twoEnded && !wonOneEnded);
      oneEndedWins += wonOneEnded;
    }
  });
  EXPECT_GT(searches, 0);
  std::printf("%d searches; %d won by one-ended placement\n", searches,
              oneEndedWins);
}

/// The policies' quick runs (one simulation each) come before anything
/// that can cost seconds (a schedule's greedy, a rescue's replays), so
/// whatever coop, dtr or dte plans at once is found whatever the limit.
TEST(CandidateSearch, QuickPoliciesComeFirst) {
  const std::string policies[] = {"lookahead, quick", "coop, quick",
                                  "dtr, quick", "dte, quick"};
  int searches = 0, baselinePlansAtOnce = 0;
  forSweptBudgets(6, {0.02, 0.3}, [&](SweptStep &step) {
    Plan p;
    const Status found = searchPlan(step.graph, step.options, &p);
    const std::vector<SearchCandidate> &tried = p.stats.candidates;
    if (found && p.stats.recomputeCount == 0)
      return; // ended early: nothing recomputes less
    ++searches;
    const size_t first =
        !tried.empty() && tried[0].name == "no recomputation" ? 1 : 0;
    ASSERT_GE(tried.size(), first + 4);
    bool baselinePlanned = false;
    for (size_t k = 0; k < 4; ++k) {
      EXPECT_EQ(tried[first + k].name, policies[k]);
      baselinePlanned |= k > 0 && tried[first + k].planned;
    }
    baselinePlansAtOnce += baselinePlanned;
    if (baselinePlanned)
      EXPECT_TRUE(found) << found.message();
  });
  EXPECT_GT(searches, 0);
  EXPECT_GT(baselinePlansAtOnce, 0);
}

/// A policy whose quick run failed is rescued first (the replays in the
/// budget's arena only), and thoroughly (arenas around the budget too) only
/// after every rescue of its round, the rescued before the others: near
/// the floor a rescue that plans costs a fraction of the arena search.
TEST(CandidateSearch, RescuesComeBeforeThoroughRuns) {
  const char *policies[] = {"lookahead", "coop", "dtr", "dte"};
  int rescued = 0, orderedPairs = 0;
  forSweptBudgets(12, {0.02, 0.1}, [&](SweptStep &step) {
    Plan p;
    static_cast<void>(searchPlan(step.graph, step.options, &p));
    const std::vector<SearchCandidate> &tried = p.stats.candidates;
    auto at = [&](const std::string &name) { return indexOf(tried, name); };
    int lastRescue = -1;
    for (const char *policy : policies) {
      const int quick = at(std::string(policy) + ", quick");
      // (A quick run that the cost bound stopped did not fail.)
      if (quick < 0 || tried[quick].planned || tried[quick].costBoundReached)
        continue;
      const int rescue = at(std::string(policy) + ", rescue");
      ASSERT_GE(rescue, 0) << policy;
      lastRescue = std::max(lastRescue, rescue);
      rescued += tried[rescue].planned;
    }
    for (const char *a : policies)
      for (const char *b : policies) {
        const int rescueA = at(std::string(a) + ", rescue");
        const int rescueB = at(std::string(b) + ", rescue");
        if (rescueA < 0 || rescueB < 0 || !tried[rescueA].planned ||
            tried[rescueB].planned)
          continue;
        ++orderedPairs;
        EXPECT_LT(at(std::string(a) + ", thorough"),
                  at(std::string(b) + ", thorough"))
            << a << " was rescued, " << b << " was not";
      }
    for (const char *policy : policies) {
      const int thorough = at(std::string(policy) + ", thorough");
      if (at(std::string(policy) + ", rescue") >= 0)
        EXPECT_GT(thorough, lastRescue) << policy;
    }
  });
  EXPECT_GT(rescued, 0);
  EXPECT_GT(orderedPairs, 0);
  std::printf("%d policies rescued; %d pairs ordered\n", rescued,
              orderedPairs);
}

/// The plans for 3/4 and 7/8 of the budget follow only quick runs that
/// planned: one the cost bound stopped would cost at least as much as the
/// best plan, or fail, and planning it below the budget, thoroughly and
/// with no share of the limit, spent what the rescues needed (the e2e
/// LSTM at r = 0.375: 38 M units, 561.84 % where 113.86 % is found).
TEST(CandidateSearch, OnlyQuickPlansArePlannedBelowTheBudget) {
  const std::string below[] = {", planned for 75.0 % of the budget",
                               ", planned for 87.5 % of the budget"};
  int plannedBelow = 0, stoppedQuickRuns = 0;
  forSweptBudgets(12, {0.05, 0.2, 0.4, 0.6}, [&](SweptStep &step) {
    Plan p;
    static_cast<void>(searchPlan(step.graph, step.options, &p));
    const std::vector<SearchCandidate> &tried = p.stats.candidates;
    for (const SearchCandidate &c : tried) {
      stoppedQuickRuns += contains(c.name, ", quick") && c.costBoundReached;
      for (const std::string &fraction : below) {
        const size_t at = c.name.find(fraction);
        if (at == std::string::npos)
          continue;
        ++plannedBelow;
        const int quick = indexOf(tried, c.name.substr(0, at) + ", quick");
        ASSERT_GE(quick, 0) << c.name;
        EXPECT_TRUE(tried[quick].planned) << c.name;
      }
    }
  });
  std::printf("%d plans below the budget; %d quick runs stopped by the cost "
              "bound\n",
              plannedBelow, stoppedQuickRuns);
  EXPECT_GT(plannedBelow, 0);
  EXPECT_GT(stoppedQuickRuns, 0);
}

/// Steps of other shapes where the search once lost a policy's own plan.
/// At seed 2049 the allocated-bytes bound stopped the replays of each arena
/// above the budget before they learned to keep fewer bytes at once (the
/// search failed where lookahead planned at 30.80 %); at seed 2055 every
/// arena walked above the budget cost more than the best plan, so none
/// between them and the one too large was tried (15.49 % where lookahead
/// planned at 12.87 %). In the others, found by 300 seeds of the property
/// below, a bound stopped a replay or an arena that a later replay would
/// have turned into the cheaper plan: the cost bound (seed 2191: 28.35 %
/// where lookahead planned at 25.22 %; 2522: 35.81 %, lookahead 33.71 %) or
/// the allocated-bytes bound once a plan existed (2510: coop 29.86 %, the
/// search 32.06 %; 2532: coop 59.22 %, the search 65.58 %). The search now
/// plans those policies again without its bounds, last.
TEST(CandidateSearch, NeverWorseThanAPolicyOnOtherShapes) {
  struct Case {
    uint64_t seed;
    double fraction;
    Policy policy;
  };
  for (const Case &c :
       {Case{2049, 0.01, Policy::Lookahead}, Case{2055, 0.3, Policy::Lookahead},
        Case{2191, 0.15, Policy::Lookahead},
        Case{2522, 0.15, Policy::Lookahead}, Case{2510, 0.01, Policy::Coop},
        Case{2532, 0.05, Policy::Coop}}) {
    SCOPED_TRACE("seed " + std::to_string(c.seed));
    SweptStep step;
    ASSERT_OK(otherShapeStep(c.seed, &step));
    PlanOptions &o = step.options;
    o.budgetBytes = budgetBetween(step.bounds, c.fraction);
    o.policy = c.policy;
    Plan own, searched;
    ASSERT_OK(planAndVerify(step.graph, o, &own));
    ASSERT_OK(planAndVerify(step.graph, o, &searched, searchPlan));
    EXPECT_LE(searched.stats.executedCostUs, own.stats.executedCostUs)
        << "won: " << searched.stats.winningCandidate;
  }
}

/// A twin that evicts closure values again evicts a scheduled value a
/// second time after recomputing it, before the next op runs: the
/// improvement phase's neighbour that drops it from the schedule lists it
/// once (listed twice, the second removal erased past the end of the
/// schedule's list: a crash at seed 2083, found under AddressSanitizer).
TEST(CandidateSearch, ImprovementDropsAValueEvictedTwiceOnce) {
  Plan p;
  ASSERT_OK(searchOtherShapeStep(2083, 0.05, &p));
  EXPECT_TRUE(
      contains(p.stats.winningCandidate, "(closure values evicted again)"))
      << p.stats.winningCandidate;
  EXPECT_TRUE(contains(p.stats.winningCandidate, ", improved"))
      << p.stats.winningCandidate;
}

/// Where the rounds spend their share of a work limit, the improvement
/// phase after them still has a tenth of the limit, taken from the capped
/// round's: on this generated step (1,000,000 units) the rounds' best, a
/// quick plan at 15.24 %, was left as it was; with the reserve it is
/// improved, to 12.65 %.
TEST(CandidateSearch, ImprovementHasAReserveWhereTheRoundsSpendTheirShare) {
  Plan p;
  ASSERT_OK(searchOtherShapeStep(2005, 0.3, &p, 1000000));
  EXPECT_TRUE(p.stats.timeLimitReached);
  EXPECT_TRUE(contains(p.stats.winningCandidate, ", quick, improved"))
      << p.stats.winningCandidate;
}

/// The property the cases above broke, on generated steps of other
/// shapes (COOP_PLANNER_SEARCH_SEEDS of them from seed
/// COOP_PLANNER_SEARCH_FIRST_SEED, default 6 from 2000; 120 took 165 s):
/// with no limit the search plans wherever a policy plans, never for more,
/// and every plan verifies. Seeds 2000-2899 pass (the cases above were
/// found among 2000-2599).
TEST(CandidateSearch, NeverWorseThanAnyPolicyOnGeneratedShapes) {
  const char *count = std::getenv("COOP_PLANNER_SEARCH_SEEDS");
  const char *from = std::getenv("COOP_PLANNER_SEARCH_FIRST_SEED");
  const int seeds = count ? std::max(1, std::atoi(count)) : 6;
  const uint64_t first = from ? uint64_t(std::atoll(from)) : 2000;
  int searches = 0, planned = 0;
  for (uint64_t seed = first; seed < first + uint64_t(seeds); ++seed) {
    SweptStep step;
    ASSERT_OK(otherShapeStep(seed, &step));
    const Graph &g = step.graph;
    PlanOptions &o = step.options;
    for (double fraction : {0.01, 0.05, 0.15, 0.3, 0.5, 0.75, 0.95}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " at " +
                   std::to_string(fraction));
      o.budgetBytes = budgetBetween(step.bounds, fraction);
      double cheapest = std::numeric_limits<double>::infinity();
      for (Policy policy :
           {Policy::Coop, Policy::DTR, Policy::DTE, Policy::Lookahead}) {
        o.policy = policy;
        Plan own;
        if (planAndVerify(g, o, &own))
          cheapest = std::min(cheapest, own.stats.executedCostUs);
      }
      Plan searched;
      const Status st = planAndVerify(g, o, &searched, searchPlan);
      ++searches;
      planned += bool(st);
      if (cheapest == std::numeric_limits<double>::infinity())
        continue;
      ASSERT_TRUE(st) << st.message();
      EXPECT_LE(searched.stats.executedCostUs, cheapest)
          << "won: " << searched.stats.winningCandidate;
    }
  }
  std::printf("%d searches, %d planned\n", searches, planned);
  EXPECT_GT(planned, searches / 2);
}

/// The capped round comes last, with the last fifth of the work limit:
/// no candidate before it starts past four fifths of the limit, and it runs
/// them again (", capped"), each once, within the rest, and with no limit
/// within a quarter of the work before it or the default limit's fifth.
TEST(CandidateSearch, CappedRoundHasTheLimitsLastFifth) {
  constexpr int64_t kLimit = 600000;
  int searches = 0, reached = 0, cut = 0;
  for (uint64_t seed = 0; seed < 24; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    SweptStep step;
    ASSERT_OK(otherShapeStep(seed, &step));
    step.options.searchWorkLimit = kLimit;
    step.options.budgetBytes = budgetBetween(step.bounds, 0.2);
    Plan p;
    if (!planAndVerify(step.graph, step.options, &p, searchPlan))
      continue;
    ++searches;
    const std::vector<SearchCandidate> &tried = p.stats.candidates;
    auto capped = [](const SearchCandidate &c) {
      return c.name.size() > 8 &&
             c.name.compare(c.name.size() - 8, 8, ", capped") == 0;
    };
    const size_t first =
        std::find_if(tried.begin(), tried.end(), capped) - tried.begin();
    if (first == tried.size())
      continue; // a plan that recomputes nothing ended the search
    ++reached;
    // Each run starts only before its deadline: what the runs before it
    // did (the improvement phase's work is not listed) is below it.
    int64_t done = 0;
    for (size_t i = 0; i < tried.size(); ++i) {
      EXPECT_EQ(capped(tried[i]), i >= first) << tried[i].name;
      if (i > 0)
        EXPECT_LT(done, i < first ? kLimit / 5 * 4 : kLimit) << tried[i].name;
      done += tried[i].work;
      // The four fifths ran out before the capped round.
      cut += i + 1 == first && done >= kLimit / 5 * 4;
    }
    // Each candidate at most once.
    std::set<std::string> cappedNames;
    for (size_t i = first; i < tried.size(); ++i)
      EXPECT_TRUE(cappedNames.insert(tried[i].name).second) << tried[i].name;
    // With no limit, at most a quarter of the work before it or the
    // default limit's fifth (past it: the run that had begun); on a few
    // steps, each takes a second.
    if (seed % 4 != 0)
      continue;
    step.options.searchWorkLimit = 0;
    Plan q;
    ASSERT_OK(planAndVerify(step.graph, step.options, &q, searchPlan));
    int64_t cappedWork = 0, lastRun = 0;
    for (const SearchCandidate &c : q.stats.candidates)
      if (capped(c)) {
        cappedWork += c.work;
        lastRun = c.work;
      }
    EXPECT_LE(cappedWork, std::max((q.stats.searchWork - cappedWork) / 4,
                                   kDefaultSearchWorkLimit / 5) +
                              lastRun);
  }
  std::printf("%d searches, %d reached the capped round, %d of them after "
              "four fifths of the limit\n",
              searches, reached, cut);
  EXPECT_GT(reached, searches / 2);
  EXPECT_GT(cut, 0);
}

/// On a small step a quarter of the search's work is less than one capped
/// run: the capped round still gets the default limit's last fifth, so
/// with no limit a budget above one that plans capped plans too (with a
/// quarter only, this step planned at 51,541 bytes and not at 51,882: the
/// round stopped after its first run), and every candidate runs capped,
/// those that follow a schedule first.
TEST(CandidateSearch, CappedRoundHasAFifthOnSmallSteps) {
  TrainingGraphShape shape =
      shapeWith(3, {0.2006, 0.2947, 0.6841, 0.0457, 0.3499, 0.3752, 0.0});
  shape.maxActivationBytes = 4096;
  Graph g;
  ASSERT_OK(generateTrainingGraph(214, shape, &g));
  PlanOptions o = unlimited(PlanOptions());
  Plan lower, higher;
  o.budgetBytes = 51541;
  ASSERT_OK(planAndVerify(g, o, &lower, searchPlan));
  EXPECT_TRUE(contains(lower.stats.winningCandidate, ", capped"))
      << lower.stats.winningCandidate;
  o.budgetBytes = 51882;
  ASSERT_OK(planAndVerify(g, o, &higher, searchPlan));
  EXPECT_LE(higher.stats.executedCostUs, lower.stats.executedCostUs);
  // Where the capped runs plan, the round's work is to spare on so small a
  // step: every candidate that ran before it ran capped too, each once.
  std::set<std::string> before, capped;
  for (const SearchCandidate &c : lower.stats.candidates) {
    const std::string candidate = candidateOf(c.name);
    if (contains(c.name, ", capped"))
      EXPECT_TRUE(capped.insert(candidate).second) << c.name;
    else if (c.name != "no recomputation")
      before.insert(candidate);
  }
  EXPECT_GT(before.size(), 16u);
  EXPECT_EQ(capped, before);
  // Those that follow a schedule first (nearest the budget first), those
  // with none (the most excess there is) after them.
  bool unscheduledSeen = false;
  for (const SearchCandidate &c : lower.stats.candidates) {
    if (!contains(c.name, ", capped"))
      continue;
    const bool scheduled = contains(c.name, "after evictions scheduled");
    EXPECT_FALSE(scheduled && unscheduledSeen) << c.name;
    unscheduledSeen |= !scheduled;
  }
  EXPECT_TRUE(unscheduledSeen);
}

/// In the capped round, among candidates of equal excess (here those with
/// no schedule), the ones that failed before run first, then the ones the
/// best plan's cost stopped: a failure may be for lack of the contiguous
/// room a capped arena gives, a bound stop had that room. (The tighter
/// bound made more rescues stop at the bound, which ranks them as planned
/// at its cost; first in the round, one on Swin-T at r = 0.25 took the
/// share that the plan at 19.16 % needed: 22.44 %.)
TEST(CandidateSearch, CappedRoundTriesFailuresBeforeBoundStops) {
  Plan p;
  ASSERT_OK(searchOtherShapeStep(2000, 0.05, &p));
  std::map<std::string, std::pair<bool, bool>> plannedOrStopped;
  for (const SearchCandidate &c : p.stats.candidates)
    if (!contains(c.name, ", capped")) {
      auto &[planned, stopped] = plannedOrStopped[candidateOf(c.name)];
      planned |= c.planned;
      stopped |= c.costBoundReached;
    }
  int failedFirst = 0, stoppedAfter = 0;
  for (const SearchCandidate &c : p.stats.candidates) {
    if (!contains(c.name, ", capped") ||
        contains(c.name, "after evictions scheduled"))
      continue;
    const auto [planned, stopped] = plannedOrStopped[candidateOf(c.name)];
    if (planned)
      continue;
    EXPECT_FALSE(!stopped && stoppedAfter > 0) << c.name;
    failedFirst += !stopped && stoppedAfter == 0;
    stoppedAfter += stopped;
  }
  EXPECT_GT(failedFirst, 0);
  EXPECT_GT(stoppedAfter, 0);
}

/// Between the live bytes' peak and `none`'s packed arena the schedule
/// without evictions runs first, and cannot plan: the first candidate that
/// recomputes still runs whatever the limit, so a small limit that schedule
/// spent does not fail the search (with only the first candidate run, a
/// limit of 200,000 units failed here where smaller budgets planned).
TEST(CandidateSearch, FirstCandidateThatRecomputesRunsWhateverTheLimit) {
  TrainingGraphShape shape =
      shapeWith(5, {0.5976, 0.7887, 0.971, 0.13434, 0.40542, 0.51184, 0.44002});
  shape.minActivationBytes = 2048;
  shape.maxActivationBytes = 8192;
  shape.minParameterBytes = 256;
  shape.maxParameterBytes = 8192;
  Graph g;
  ASSERT_OK(generateTrainingGraph(28, shape, &g));
  PlanOptions o;
  o.alignment = 16;
  o.twoEndedPartitioning = false;
  o.recomputableInPlace = false;
  o.searchWorkLimit = 200000;
  o.budgetBytes = 153232;
  ASSERT_GE(o.budgetBytes, computeMemoryStats(g).peakLiveBytes);
  Plan p;
  ASSERT_OK(planAndVerify(g, o, &p, searchPlan));
  const std::vector<SearchCandidate> &tried = p.stats.candidates;
  ASSERT_GE(tried.size(), 2u);
  EXPECT_EQ(tried[0].name, "no recomputation");
  EXPECT_FALSE(tried[0].planned);
  // It spent what the limit leaves before the capped round.
  EXPECT_GT(tried[0].work, o.searchWorkLimit / 5 * 4);
  EXPECT_EQ(tried[1].name, "lookahead, quick");
}

/// Where nothing plans for a budget near the floor, a budget 1.5 % below
/// it may (whether one plans jumps with the budget there): the search then
/// searches that budget, within half its work limit, and its plan, which
/// fits the smaller budget, is the plan for this one.
TEST(CandidateSearch, BudgetJustBelowPlansWhereTheBudgetFails) {
  SweptStep step;
  ASSERT_OK(otherShapeStep(21, &step));
  step.options.searchWorkLimit = 2000000;
  step.options.budgetBytes = budgetBetween(step.bounds, 0.03);
  Plan p;
  ASSERT_OK(planAndVerify(step.graph, step.options, &p, searchPlan));
  EXPECT_TRUE(contains(p.stats.winningCandidate, ", for 98.5 % of the budget"))
      << p.stats.winningCandidate;
  EXPECT_EQ(p.budgetBytes, step.options.budgetBytes);
  const int64_t below = step.options.budgetBytes / 1000 * 985 +
                        step.options.budgetBytes % 1000 * 985 / 1000;
  EXPECT_LE(p.stats.addressHighWater, below);
  // The budget's own candidates came first, and none of them planned.
  size_t own = 0;
  while (own < p.stats.candidates.size() &&
         !contains(p.stats.candidates[own].name, ", for 98.5 % of the budget"))
    EXPECT_FALSE(p.stats.candidates[own++].planned);
  EXPECT_GT(own, 0u);
  EXPECT_LT(own, p.stats.candidates.size());
  // Each search of the two kept to its limit (past it: the first
  // candidate, which runs whatever the limit, and the op each later
  // simulation had begun).
  int64_t ownWork = 0;
  for (size_t i = 0; i < own; ++i)
    ownWork += p.stats.candidates[i].work;
  EXPECT_LT(p.stats.searchWork - ownWork, step.options.searchWorkLimit / 2 +
                                              p.stats.candidates[own].work +
                                              100000);
  // Half of a limit of one unit is still a limit: each search runs its
  // first candidate only.
  step.options.searchWorkLimit = 1;
  Plan q;
  static_cast<void>(searchPlan(step.graph, step.options, &q));
  ASSERT_EQ(q.stats.candidates.size(), 2u);
  EXPECT_TRUE(
      contains(q.stats.candidates[1].name, ", for 98.5 % of the budget"))
      << q.stats.candidates[1].name;
}
