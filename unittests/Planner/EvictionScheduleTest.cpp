//===- EvictionScheduleTest.cpp - Evictions chosen from the whole future --===//
//
// scheduleEvictions() (internal to the planner core) on a hand-built step
// whose best choice is known, and on generated steps: the peak it reports
// is reached by evictable values, and the simulator can follow it.
//
//===----------------------------------------------------------------------===//

#include "PlanTestUtil.h"

#include "EvictionSchedule.h"

#include <algorithm>
#include <tuple>

using namespace coop::planner;
using namespace coop::planner::testing;

namespace {

/// Plans `graph` following `scheduled`, in a budget of the peak it reports.
Status followAtItsPeak(const Graph &graph, PlanOptions options,
                       const ScheduledEvictions &scheduled, Plan *plan) {
  options.budgetBytes = scheduled.peakLiveBytes;
  options.scheduledEvictions =
      std::make_shared<const EvictionSchedule>(scheduled.evictAfter);
  if (!scheduled.retainUntil.empty())
    options.scheduledRetention =
        std::make_shared<const std::vector<OpId>>(scheduled.retainUntil);
  return planAndVerify(graph, options, plan);
}

/// Expects `scheduled` to evict `values` after op `at` and nothing else.
void expectEvictsOnly(const ScheduledEvictions &scheduled, size_t at,
                      const std::vector<TensorId> &values) {
  for (size_t op = 0; op < scheduled.evictAfter.size(); ++op)
    EXPECT_EQ(scheduled.evictAfter[op],
              op == at ? values : std::vector<TensorId>{})
        << "after op " << op;
}

/// Schedules `g` down to `target` with short chains, counting `rebuilt`:
/// expects the peak `peak`, reached by evicting only `values` after op
/// `at`, and the plan that follows the schedule, packed offline in that
/// peak, to recompute `recomputes` times.
void expectShortSchedule(const Graph &g, int64_t target, RebuiltBytes rebuilt,
                         int64_t peak, size_t at,
                         const std::vector<TensorId> &values,
                         int64_t recomputes) {
  const PlanOptions o = byteOptions(Policy::Lookahead, target);
  const ScheduledEvictions scheduled = scheduleEvictions(
      g, analyse(g, o), o.alignment, target, rebuilt, RecomputeChains::Short);
  EXPECT_EQ(scheduled.peakLiveBytes, peak);
  expectEvictsOnly(scheduled, at, values);
  Plan p;
  EXPECT_OK(followAtItsPeak(g, o, scheduled, &p));
  EXPECT_EQ(p.stats.recomputeCount, recomputes);
}

/// Expects counting `rough` to stop above `target` (short chains) where
/// counting `finer` reaches it, as expectShortSchedule() says.
void expectOnlyFinerReaches(const Graph &g, int64_t target, RebuiltBytes rough,
                            RebuiltBytes finer, int64_t peak, size_t at,
                            const std::vector<TensorId> &values,
                            int64_t recomputes) {
  const PlanOptions o = byteOptions(Policy::Lookahead, target);
  EXPECT_GT(scheduleEvictions(g, analyse(g, o), o.alignment, target, rough,
                              RecomputeChains::Short)
                .peakLiveBytes,
            target);
  expectShortSchedule(g, target, finer, peak, at, values, recomputes);
}

/// A hand-built step: an input x, values each made from its inputs, and
/// reads of two values into a one-byte step output.
struct ChainStep {
  Graph g;
  TensorId x = g.addArgument("x", 10, TensorRole::Input);
  TensorId make(std::vector<TensorId> inputs, int64_t bytes, double cost) {
    return g.ops[g.addOp("aten.exp", std::move(inputs), {bytes}, {}, cost)]
        .outputs[0];
  }
  TensorId make(TensorId input, int64_t bytes, double cost) {
    return make(std::vector<TensorId>{input}, bytes, cost);
  }
  void read(TensorId a, TensorId b) {
    g.markStepOutput(
        g.ops[g.addOp("aten.add", {a, b}, {1}, {}, 1.0)].outputs[0]);
  }
  /// Schedules evictions down to `target` (long chains, every rebuilt
  /// value counted) and plans the step following them at the peak reached.
  ScheduledEvictions
  scheduleLong(int64_t target, Plan *plan,
               ScheduleGaps gaps = ScheduleGaps::BetweenReads,
               SiblingOutputs siblings = SiblingOutputs::Apart,
               ChoicePick pick = ChoicePick::BestRatio,
               DeadInputs dead = DeadInputs::Recomputed,
               StuckPeaks stuck = StuckPeaks::Stop) const {
    const PlanOptions o = byteOptions(Policy::Lookahead, target);
    ScheduledEvictions scheduled = scheduleEvictions(
        g, analyse(g, o), o.alignment, target, RebuiltBytes::EveryValue,
        RecomputeChains::Long, gaps, siblings, pick, dead, stuck);
    EXPECT_OK(followAtItsPeak(g, o, scheduled, plan));
    return scheduled;
  }
  /// Whether the finished step has an op with two outputs to drop.
  bool hasSiblings() const {
    return hasEvictableSiblings(g, analyse(g, PlanOptions()));
  }
};

/// L and S (100 bytes each) are read at op 2 and again later: S at op 6,
/// L at op 9. The live bytes are over 325 from op 3 to op 8, most at op 5
/// (422), inside both gaps. S is cheaper per byte (1.0 us against 1.2) but
/// is away only over ops 3 to 5, so evicting it leaves op 6 at 363; L is
/// away over the whole run, and evicting L alone leaves at most 322. A
/// greedy that weighs bytes by the ops of the run they are freed over
/// evicts L only; one by bytes per microsecond evicts S, then L as well.
TEST(EvictionSchedule, PrefersTheValueAwayOverTheWholeRun) {
  ChainStep step;
  const TensorId x = step.x;
  const TensorId l = step.make(x, 100, 1.2);   // op 0
  const TensorId s = step.make(x, 100, 1.0);   // op 1
  step.read(l, s);                             // op 2
  const TensorId big = step.make(x, 150, 100); // op 3
  const TensorId f = step.make(x, 60, 100);    // op 4
  step.read(f, big);                           // op 5
  step.read(s, x);                             // op 6
  const TensorId h = step.make(x, 60, 100);    // op 7
  step.read(big, h);                           // op 8
  step.read(l, x);                             // op 9
  ASSERT_TRUE(step.g.finalize());
  const Graph &g = step.g;

  const PlanOptions o = byteOptions(Policy::Lookahead, 325);
  const StepAnalysis analysis = analyse(g, o);
  const ScheduledEvictions scheduled =
      scheduleEvictions(g, analysis, o.alignment, 325, RebuiltBytes::EveryValue,
                        RecomputeChains::Short);
  EXPECT_EQ(scheduled.peakLiveBytes, 322);
  expectEvictsOnly(scheduled, 2, {l});
}

/// The live bytes peak at op 5, where c (300 bytes) is made and nothing
/// else is resident, and again, lower, over ops 2-3, where v (100 bytes,
/// read at ops 1 and 4) is idle. A greedy stopping where nothing can go
/// evicts nothing; one setting that peak aside evicts v after op 1 and
/// brings ops 2-3 under the target of 200, the peak it reports still
/// op 5's.
TEST(EvictionSchedule, SetsAsideAPeakWhereNothingCanGo) {
  ChainStep step;
  const TensorId x = step.x;
  const TensorId v = step.make(x, 100, 1.0);   // op 0
  step.read(v, x);                             // op 1
  const TensorId b = step.make(x, 150, 100);   // op 2
  step.read(b, x);                             // op 3
  step.read(v, x);                             // op 4
  const TensorId c = step.make(x, 300, 100);   // op 5
  step.read(c, x);                             // op 6
  ASSERT_TRUE(step.g.finalize());

  Plan stopping, settingAside;
  const ScheduledEvictions stopped = step.scheduleLong(200, &stopping);
  EXPECT_GT(stopped.peakLiveBytes, 300);
  expectEvictsOnly(stopped, 0, {});
  EXPECT_EQ(stopping.stats.recomputeCount, 0);

  const ScheduledEvictions setAside = step.scheduleLong(
      200, &settingAside, ScheduleGaps::BetweenReads, SiblingOutputs::Apart,
      ChoicePick::BestRatio, DeadInputs::Recomputed, StuckPeaks::SetAside);
  EXPECT_EQ(setAside.peakLiveBytes, stopped.peakLiveBytes);
  EXPECT_LE(setAside.peakElsewhereBytes, 200);
  expectEvictsOnly(setAside, 1, {v});
  EXPECT_EQ(settingAside.stats.recomputeCount, 1);
}

/// v (100 bytes) is made at op 0 and first read at op 3, as the backward
/// reads a forward value (max-pool indices): it has no gap between two
/// reads. The live bytes peak at op 2 (261) over the target of 200, and
/// only v can go there: from right after its producer to its read
/// (ScheduleGaps::FromProducer; between reads only, nothing can go).
TEST(EvictionSchedule, DropsAValueFromItsProducerToItsFirstRead) {
  ChainStep step;
  const TensorId x = step.x;
  const TensorId v = step.make(x, 100, 1.0);   // op 0
  const TensorId a = step.make(x, 150, 100);   // op 1
  step.read(a, x);                             // op 2
  step.read(v, x);                             // op 3
  ASSERT_TRUE(step.g.finalize());

  Plan plan;
  const ScheduledEvictions scheduled =
      step.scheduleLong(200, &plan, ScheduleGaps::FromProducer);
  EXPECT_LE(scheduled.peakLiveBytes, 200);
  expectEvictsOnly(scheduled, 0, {v});

  const ScheduledEvictions betweenReads = step.scheduleLong(200, &plan);
  EXPECT_GT(betweenReads.peakLiveBytes, 200);
  expectEvictsOnly(betweenReads, 0, {});

  // Past its deadline the greedy chooses nothing: the peak stays.
  const PlanOptions o = byteOptions(Policy::Lookahead, 200);
  WorkMeter meter;
  const ScheduledEvictions late = scheduleEvictions(
      step.g, analyse(step.g, o), o.alignment, 200, RebuiltBytes::EveryValue,
      RecomputeChains::Long, ScheduleGaps::FromProducer, SiblingOutputs::Apart,
      ChoicePick::BestRatio, DeadInputs::Recomputed, StuckPeaks::Stop,
      Deadline().withWorkLimit(&meter, 0));
  EXPECT_GT(late.peakLiveBytes, 200);
  expectEvictsOnly(late, 0, {});
}

/// A max-pool-like op 0 makes y (read at ops 1 and 8) and its indices i
/// (read only at op 7) for 10 us, one of them 100 bytes, the other 50; c
/// (100, 11 us) is read at ops 3 and 6. The live bytes peak over ops 4-5
/// (big resident) 150 above the target. The larger output goes first (the
/// most bytes per microsecond). Priced apart, the smaller one (50 bytes for
/// the op's 10 us) loses to c; rebuilt together, it costs nothing: when i
/// went first, the op re-run for it at op 7 brings y back there; when y
/// went first, re-running the op for i at op 7 brings y back early, its
/// own re-run moved up. The plan then re-runs the op once (10 us, not 21).
TEST(EvictionSchedule, PricesSiblingOutputsTogether) {
  for (bool indicesLarger : {true, false}) {
    SCOPED_TRACE(indicesLarger ? "indices larger" : "output larger");
    ChainStep step;
    const TensorId x = step.x;
    const int64_t large = 100, small = 50;
    const Op &pool = step.g.ops[step.g.addOp(
        "aten.max_pool2d_with_indices", {x},
        {indicesLarger ? small : large, indicesLarger ? large : small}, {},
        10.0)];
    const TensorId y = pool.outputs[0], i = pool.outputs[1]; // op 0
    step.read(y, x);                                         // op 1
    const TensorId c = step.make(x, 100, 11.0);              // op 2
    step.read(c, x);                                         // op 3
    step.read(step.make(x, 300, 1000.0), x);                 // ops 4, 5
    step.read(c, x);                                         // op 6
    step.read(i, x);                                         // op 7
    step.read(y, x);                                         // op 8
    ASSERT_TRUE(step.g.finalize());
    ASSERT_TRUE(step.hasSiblings());

    const int64_t target = 413;
    auto schedule = [&](SiblingOutputs siblings, Plan *plan) {
      ScheduledEvictions scheduled = step.scheduleLong(
          target, plan, ScheduleGaps::FromProducer, siblings);
      EXPECT_LE(scheduled.peakLiveBytes, target);
      return scheduled;
    };
    const std::vector<TensorId> none, onlyI = {i}, onlyY = {y};
    Plan apart, together;
    const ScheduledEvictions byEach = schedule(SiblingOutputs::Apart, &apart);
    EXPECT_EQ(byEach.evictAfter[0], indicesLarger ? onlyI : none);
    EXPECT_EQ(byEach.evictAfter[1], indicesLarger ? none : onlyY);
    EXPECT_EQ(byEach.evictAfter[3], (std::vector<TensorId>{c}));
    EXPECT_NEAR(apart.stats.executedCostUs - apart.stats.baselineCostUs, 21.0,
                1e-9);

    const ScheduledEvictions byOp =
        schedule(SiblingOutputs::RebuiltTogether, &together);
    EXPECT_EQ(byOp.evictAfter[0], onlyI);
    EXPECT_EQ(byOp.evictAfter[1], onlyY);
    EXPECT_TRUE(byOp.evictAfter[3].empty());
    EXPECT_EQ(together.stats.recomputeCount, 1);
    EXPECT_NEAR(together.stats.executedCostUs - together.stats.baselineCostUs,
                10.0, 1e-9);
  }

  // Without two outputs to drop, the kind has nothing to price together.
  ChainStep single;
  single.read(single.make(single.x, 10, 1.0), single.x);
  ASSERT_TRUE(single.g.finalize());
  EXPECT_FALSE(single.hasSiblings());
}

/// a (200 bytes, 10 us) and b (30 bytes, 5 us) are read at op 2 and again
/// after the peak (ops 3-4, big resident), which is 22 bytes over the
/// target. a frees the most bytes per microsecond and goes by the best
/// ratio; b alone covers the excess for half the price
/// (ChoicePick::CheapestCover).
TEST(EvictionSchedule, TakesTheCheapestCoverOfASmallExcess) {
  ChainStep step;
  const TensorId x = step.x;
  const TensorId a = step.make(x, 200, 10.0); // op 0
  const TensorId b = step.make(x, 30, 5.0);   // op 1
  step.read(a, b);                            // op 2
  step.read(step.make(x, 300, 1000.0), x);    // ops 3, 4
  step.read(b, x);                            // op 5
  step.read(a, x);                            // op 6
  ASSERT_TRUE(step.g.finalize());

  const int64_t target = 520;
  for (auto [pick, value, overheadUs] :
       {std::tuple{ChoicePick::BestRatio, a, 10.0},
        std::tuple{ChoicePick::CheapestCover, b, 5.0}}) {
    SCOPED_TRACE(pick == ChoicePick::BestRatio ? "best ratio"
                                               : "cheapest cover");
    Plan p;
    const ScheduledEvictions scheduled = step.scheduleLong(
        target, &p, ScheduleGaps::BetweenReads, SiblingOutputs::Apart, pick);
    EXPECT_LE(scheduled.peakLiveBytes, target);
    expectEvictsOnly(scheduled, 2, {value});
    EXPECT_NEAR(p.stats.executedCostUs - p.stats.baselineCostUs, overheadUs,
                1e-9);
  }
}

/// c (100 bytes, 1 us) concatenates f1 and f2 (10 bytes, 50 us each),
/// which op 3 and op 4 read again, and is read at op 3 and after the peak
/// (ops 5-6, big resident), 60 bytes over the target: only c can go. Its
/// rebuild at op 7 reads f1 and f2, dead by then: rebuilt, they cost
/// 101 us (DeadInputs::Recomputed); kept from their last use to op 7 (20
/// bytes more over the peak, still under the target), 1 us
/// (DeadInputs::Retained).
TEST(EvictionSchedule, KeepsDeadInputsOfARecomputation) {
  ChainStep step;
  const TensorId x = step.x;
  const TensorId f1 = step.make(x, 10, 50.0);      // op 0
  const TensorId f2 = step.make(x, 10, 50.0);      // op 1
  const TensorId c = step.make({f1, f2}, 100, 1.0); // op 2
  step.read(c, f1);                                 // op 3
  step.read(f2, x);                                 // op 4
  step.read(step.make(x, 150, 100.0), x);           // ops 5, 6
  step.read(c, x);                                  // op 7
  ASSERT_TRUE(step.g.finalize());

  const int64_t target = 210;
  for (auto [dead, overheadUs] :
       {std::pair{DeadInputs::Recomputed, 101.0},
        std::pair{DeadInputs::Retained, 1.0}}) {
    SCOPED_TRACE(dead == DeadInputs::Retained ? "retained" : "recomputed");
    Plan p;
    const ScheduledEvictions scheduled =
        step.scheduleLong(target, &p, ScheduleGaps::BetweenReads,
                          SiblingOutputs::Apart, ChoicePick::BestRatio, dead);
    EXPECT_LE(scheduled.peakLiveBytes, target);
    expectEvictsOnly(scheduled, 3, {c});
    EXPECT_NEAR(p.stats.executedCostUs - p.stats.baselineCostUs, overheadUs,
                1e-9);
    if (dead == DeadInputs::Retained) {
      ASSERT_EQ(scheduled.retainUntil.size(), step.g.tensors.size());
      EXPECT_EQ(scheduled.retainUntil[f1], 7);
      EXPECT_EQ(scheduled.retainUntil[f2], 7);
      EXPECT_EQ(scheduled.retainUntil[c], kNone);
    } else {
      EXPECT_TRUE(scheduled.retainUntil.empty());
    }
  }
}

/// v (100 bytes) is read at op 2 and at op 5; evicting it is the only way
/// under the peak at op 4. Rebuilding it at op 5 re-runs its producer and
/// a's, which is past its last use. Counting every rebuilt value on top of
/// op 5 (362) misses the target of 265; what the simulator really holds
/// there is a and v while v is rebuilt, then v and z (150) once a is freed:
/// 262, and the schedule reaches its target when it counts that
/// (RebuiltBytes::HeldAtOnce).
TEST(EvictionSchedule, CountsWhatARecomputationHoldsNearTheFloor) {
  Graph g;
  const TensorId x = g.addArgument("x", 10, TensorRole::Input);
  auto output = [&](OpId op) { g.markStepOutput(g.ops[op].outputs[0]); };
  const TensorId a = g.ops[g.addOp("aten.exp", {x}, {100}, {}, 1.0)].outputs[0];
  const OpId makeV = g.addOp("aten.exp", {a}, {100}, {}, 1.0);
  const TensorId v = g.ops[makeV].outputs[0];
  output(g.addOp("aten.add", {v, x}, {1}, {}, 1.0));               // op 2
  const TensorId big =
      g.ops[g.addOp("aten.exp", {x}, {200}, {}, 100)].outputs[0];   // op 3
  output(g.addOp("aten.neg", {big}, {1}, {}, 1.0));                 // op 4
  output(g.addOp("aten.add", {v, x}, {150}, {}, 1.0));              // op 5
  ASSERT_TRUE(g.finalize());

  // Followed and packed offline, it plans in 262 bytes.
  expectOnlyFinerReaches(g, 265, RebuiltBytes::EveryValue,
                         RebuiltBytes::HeldAtOnce, 262, 2, {v}, 2);
}

/// l = relu_(m) overwrites m (100 bytes each) in place (op 1, 210 bytes
/// live there), is read at op 2 and again at op 6 with y (40 bytes, made
/// at op 3), and must go over ops 4-5 (big resident: 201 bytes there
/// without l). Rebuilding l before op 6 re-runs exp for m, then relu_ over
/// it: one buffer, the one l is counted in there, so op 6 holds 151 bytes.
/// Counting m beside l (HeldAtOnce), op 6 would hold 250 and the greedy
/// stops above a target of 230; counted in turn (HeldInTurn), the target
/// is reached, and the plan that follows the schedule fits the peak it
/// reports.
TEST(EvictionSchedule, CountsARecomputationWrittenInPlaceOnce) {
  Graph g;
  const TensorId x = g.addArgument("x", 10, TensorRole::Input);
  auto output = [&](OpId op) { g.markStepOutput(g.ops[op].outputs[0]); };
  const TensorId m = g.ops[g.addOp("aten.exp", {x}, {100}, {}, 1.0)].outputs[0];
  const TensorId l =
      g.ops[g.addOp("aten.relu_", {m}, {100}, {0}, 1.0)].outputs[0]; // op 1
  output(g.addOp("aten.add", {l, x}, {1}, {}, 1.0));                 // op 2
  const TensorId y = g.ops[g.addOp("aten.exp", {x}, {40}, {}, 1.0)].outputs[0];
  const TensorId big =
      g.ops[g.addOp("aten.exp", {x}, {150}, {}, 100)].outputs[0]; // op 4
  output(g.addOp("aten.neg", {big}, {1}, {}, 1.0));               // op 5
  output(g.addOp("aten.add", {l, y}, {1}, {}, 1.0));              // op 6
  ASSERT_TRUE(g.finalize());

  expectOnlyFinerReaches(g, 230, RebuiltBytes::HeldAtOnce,
                         RebuiltBytes::HeldInTurn, 210, 2, {l}, 2);
}

/// Counted in turn, the value a recomputation is for holds its bytes only
/// from the op that makes it on: c = exp(b), b = exp(a),
/// a = exp(x) (100 bytes each), c read at ops 3 and 6 and away over ops
/// 4-5 (big resident). Rebuilding c before op 6 holds a and b at once
/// (200 bytes) before c exists: 212 bytes with x and the two step outputs
/// made so far, not 312 as counting c beside them; c itself with b: 212.
TEST(EvictionSchedule, CountsAChainBeforeTheValueItRebuildsExists) {
  ChainStep step;
  TensorId c = step.x;
  for (int op = 0; op < 3; ++op) // a, b, then c
    c = step.make(c, 100, 1.0);
  step.read(c, step.x);                             // op 3
  step.read(step.make(step.x, 150, 100.0), step.x); // ops 4, 5
  step.read(c, step.x);                             // op 6
  ASSERT_TRUE(step.g.finalize());
  expectOnlyFinerReaches(step.g, 215, RebuiltBytes::HeldAtOnce,
                         RebuiltBytes::HeldInTurn, 212, 3, {c}, 3);
}

/// s (300 bytes) is read at op 8 and at op 13, and must go over the peak
/// (ops 9-10, big resident). Everything its producer chain reads is gone
/// by op 13: d, c, b, their input a and the mask-like chain m1 -> m2 -> m3
/// (1 byte each, nearly free), as in an attention block whose scores are
/// rebuilt from the projections and the mask in the backward. Rebuilding
/// s there runs 8 ops: with short chains s cannot go and the peak stays
/// above the target; with long chains s goes and the target is reached.
TEST(EvictionSchedule, LongChainsRebuildAValueFromFarBack) {
  ChainStep step;
  const TensorId x = step.x;
  const TensorId m1 = step.make(x, 1, 0.001);     // op 0
  const TensorId m2 = step.make(m1, 1, 0.001);    // op 1
  const TensorId m3 = step.make(m2, 1, 0.001);    // op 2
  const TensorId a = step.make(x, 10, 1.0);       // op 3
  const TensorId b = step.make({a, m3}, 10, 1.0); // op 4
  const TensorId c = step.make(b, 10, 1.0);       // op 5
  const TensorId d = step.make(c, 10, 1.0);       // op 6
  const TensorId s = step.make(d, 300, 1.0);      // op 7
  step.read(s, x);                                // op 8
  step.read(step.make(x, 300, 1000.0), x);        // ops 9, 10
  step.read(m3, x);                               // op 11
  step.read(a, x);                                // op 12
  step.read(s, x);                                // op 13
  ASSERT_TRUE(step.g.finalize());
  const Graph &g = step.g;

  const int64_t target = 380;
  const PlanOptions o = byteOptions(Policy::Lookahead, target);
  const StepAnalysis analysis = analyse(g, o);
  EXPECT_GT(scheduleEvictions(g, analysis, o.alignment, target,
                              RebuiltBytes::EveryValue, RecomputeChains::Short)
                .peakLiveBytes,
            target);
  const ScheduledEvictions scheduled =
      scheduleEvictions(g, analysis, o.alignment, target,
                        RebuiltBytes::EveryValue, RecomputeChains::Long);
  EXPECT_LE(scheduled.peakLiveBytes, target);
  EXPECT_NE(std::find(scheduled.evictAfter[8].begin(),
                      scheduled.evictAfter[8].end(), s),
            scheduled.evictAfter[8].end());
  Plan p;
  EXPECT_OK(followAtItsPeak(g, o, scheduled, &p));
}

/// u is read at ops 1, 2 and 8; w = exp(u) at op 2 and op 5. Both must go
/// over the peak (ops 3-4, big resident). Rebuilding w at op 5 rebuilds u
/// there, and u then stays resident until its own read at op 8, as in the
/// simulator: with long chains (RecomputeChains::Long) the schedule counts
/// u over ops 6-7 (where big2 lives) and reports that peak, which the plan
/// that follows it fits, u and w each recomputed once.
TEST(EvictionSchedule, AValueRebuiltForAnotherStaysUntilItsRead) {
  ChainStep step;
  const TensorId x = step.x;
  const TensorId u = step.make(x, 100, 1.0); // op 0
  const TensorId w = step.make(u, 100, 1.0); // op 1
  step.read(u, w);                           // op 2
  step.read(step.make(x, 200, 100.0), x);    // ops 3, 4
  step.read(w, x);                           // op 5
  step.read(step.make(x, 150, 100.0), x);    // ops 6, 7
  step.read(u, x);                           // op 8
  ASSERT_TRUE(step.g.finalize());

  const int64_t target = 230;
  Plan p;
  const ScheduledEvictions scheduled = step.scheduleLong(target, &p);
  EXPECT_EQ(scheduled.evictAfter[2], (std::vector<TensorId>{u, w}));
  // At op 7: x, u, big2 and the outputs of ops 2, 4, 5 and 7.
  EXPECT_EQ(scheduled.peakLiveBytes, 10 + 100 + 150 + 4);
  EXPECT_EQ(p.stats.recomputeCount, 2);
}

/// u, w = exp(u) and v (100 bytes each) are read after the peak (ops 7-8,
/// spike and big resident) at ops 11, 9 and 10. The run over the target
/// is ops 5-8 at first: u, the cheapest and away longest, goes. Ops 7-8
/// are still over it, and w or v must go too. Rebuilding w at op 9
/// rebuilds u, which is rebuilt at op 11 anyway: moved up, not run twice,
/// so w costs 1 us (u and w once: 1.9 us). Pricing u's chain again made
/// w 1.9 us, dearer than v (1.5 us: u and v, 2.4 us).
TEST(EvictionSchedule, AValueBroughtBackEarlyCostsNoMoreCompute) {
  ChainStep step;
  const TensorId x = step.x;
  const TensorId u = step.make(x, 100, 0.9);      // op 0
  const TensorId w = step.make(u, 100, 1.0);      // op 1
  step.read(u, x);                                // op 2
  const TensorId big = step.make(x, 340, 1000.0); // op 3
  step.read(w, x);                                // op 4
  const TensorId v = step.make(x, 100, 1.5);      // op 5
  step.read(v, x);                                // op 6
  step.read(step.make(x, 120, 1000.0), big);      // ops 7, 8
  step.read(w, x);                                // op 9
  step.read(v, x);                                // op 10
  step.read(u, x);                                // op 11
  ASSERT_TRUE(step.g.finalize());

  const int64_t target = 650;
  Plan p;
  const ScheduledEvictions scheduled = step.scheduleLong(target, &p);
  EXPECT_LE(scheduled.peakLiveBytes, target);
  EXPECT_EQ(scheduled.evictAfter[2], (std::vector<TensorId>{u}));
  EXPECT_EQ(scheduled.evictAfter[4], (std::vector<TensorId>{w}));
  EXPECT_TRUE(scheduled.evictAfter[6].empty());
  EXPECT_EQ(p.stats.recomputeCount, 2);
  EXPECT_NEAR(p.stats.executedCostUs - p.stats.baselineCostUs, 1.9, 1e-9);
}

/// On generated steps, for targets between the floor and the live peak,
/// either count of rebuilt bytes and each kind of schedule: some targets are reached, every scheduled
/// value is evictable, and the simulator follows each schedule to a plan
/// the verifier accepts.
TEST(EvictionSchedule, SchedulesEvictableValuesTheSimulatorCanFollow) {
  int reached = 0;
  for (uint64_t seed = 0; seed < 12; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Graph g;
    ASSERT_OK(sweepStep(seed, 5, &g));
    PlanOptions o;
    o.policy = Policy::Lookahead;
    const StepAnalysis analysis = analyse(g, o);
    const int64_t peak = computeMemoryStats(g).peakLiveBytes;
    for (auto [fraction, rebuilt] :
         {std::pair{0.3, RebuiltBytes::EveryValue},
          {0.3, RebuiltBytes::HeldAtOnce},
          {0.6, RebuiltBytes::EveryValue},
          {0.9, RebuiltBytes::HeldAtOnce}}) {
      const int64_t target =
          analysis.floorBytes +
          int64_t(fraction * double(peak - analysis.floorBytes));
      // Short chains, long ones, and long ones from the producer with the
      // sibling outputs rebuilt together and the cheapest cover taken.
      for (auto [chains, gaps, siblings, pick] :
           {std::tuple{RecomputeChains::Short, ScheduleGaps::BetweenReads,
                       SiblingOutputs::Apart, ChoicePick::BestRatio},
            std::tuple{RecomputeChains::Long, ScheduleGaps::BetweenReads,
                       SiblingOutputs::Apart, ChoicePick::BestRatio},
            std::tuple{RecomputeChains::Long, ScheduleGaps::FromProducer,
                       SiblingOutputs::RebuiltTogether,
                       ChoicePick::CheapestCover}}) {
        ScheduledEvictions scheduled =
            scheduleEvictions(g, analysis, o.alignment, target, rebuilt,
                              chains, gaps, siblings, pick);
        reached += scheduled.peakLiveBytes <= target;
        for (const std::vector<TensorId> &values : scheduled.evictAfter)
          for (TensorId v : values)
            EXPECT_TRUE(analysis.evictable[v]) << "value " << v;
        o.budgetBytes = 2 * peak;
        o.scheduledEvictions = std::make_shared<const EvictionSchedule>(
            std::move(scheduled.evictAfter));
        Plan p;
        EXPECT_OK(planAndVerify(g, o, &p, simulate));
      }
    }
  }
  EXPECT_GT(reached, 0);
}

} // namespace
