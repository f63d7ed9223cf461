//===- PlannerTest.cpp - Hand-built layouts for the planner ---------------===//

#include "PlanTestUtil.h"

#include "coop/Planner/Arena.h"

#include <map>
#include <random>

using namespace coop::planner;
using namespace coop::planner::testing;

namespace {

// The paper's motivating example. Arena of 110 bytes:
//
//   0    10   30   50   70   90   110
//   | x  | A1 | A2 | A3 | A4 | A5 |      then X (40 bytes) must be placed.
//
// Costs 1, 10, 1, 10, 1 make the cheapest single tensors A1 then A3, which
// are not adjacent: DTR frees 2 + 2 scattered holes and still has to evict
// A2. The window evicts the contiguous pair {A1, A2}.
struct MotivatingExample {
  Graph g;
  TensorId x, big;
  TensorId a[5];
  OpId makeBig;
  MotivatingExample(const double costs[5] = nullptr) {
    static const double kDefault[5] = {1, 10, 1, 10, 1};
    if (!costs)
      costs = kDefault;
    x = g.addArgument("x", 10, TensorRole::Input);
    for (int i = 0; i < 5; ++i)
      a[i] = g.ops[g.addOp("aten.relu", {x}, {20}, {}, costs[i])].outputs[0];
    makeBig = g.addOp("aten.big", {x}, {40}, {}, 0.0);
    big = g.ops[makeBig].outputs[0];
    for (int i = 0; i < 5; ++i)
      g.addOp("aten.use", {a[i], big}, {1}, {}, 1.0);
    EXPECT_TRUE(g.finalize());
  }
  /// What the simulator evicts to make room for X.
  std::vector<TensorId> evictedForBig(const PlanOptions &options) {
    Plan p;
    Status st = planAndVerify(g, options, &p, simulate);
    EXPECT_TRUE(st) << st.message();
    return evictedBeforeRun(p, makeBig);
  }
  std::vector<TensorId> tensors(std::initializer_list<int> indices) const {
    std::vector<TensorId> out;
    for (int i : indices)
      out.push_back(a[i]);
    return out;
  }
};

TEST(Planner, MotivatingExampleWindowEvictsOneContiguousRun) {
  MotivatingExample m;
  Plan p;
  ASSERT_OK(planAndVerify(m.g, byteOptions(Policy::Coop, 110), &p, simulate));
  EXPECT_EQ(evictedBeforeRun(p, m.makeBig), m.tensors({0, 1}));
  const Instruction *run = findRun(p, m.makeBig);
  ASSERT_NE(run, nullptr);
  EXPECT_EQ(run->outputs[0].offset, 10);
}

TEST(Planner, MotivatingExampleDTREvictsScatteredTensors) {
  MotivatingExample m;
  EXPECT_EQ(m.evictedForBig(byteOptions(Policy::DTR, 110)),
            m.tensors({0, 2, 1}));
}

TEST(Planner, WindowOffEvictsSingleTensorsWithCoopScore) {
  MotivatingExample m;
  PlanOptions o = byteOptions(Policy::Coop, 110);
  o.slidingWindow = false;
  EXPECT_EQ(m.evictedForBig(o), m.tensors({0, 2, 1}));
}

TEST(Planner, WindowTieGoesToLowestAddress) {
  const double free[5] = {0, 0, 0, 0, 0}; // every window scores 0
  MotivatingExample m(free);
  EXPECT_EQ(m.evictedForBig(byteOptions(Policy::Coop, 110)),
            m.tensors({0, 1}));
}

TEST(Planner, UnevictableTensorBreaksTheWindow) {
  // A2 is a step output, so it can never be evicted: {A1, A2} and {A2, A3}
  // are not windows and the cheapest legal one is {A3, A4}.
  MotivatingExample m;
  m.g.markStepOutput(m.a[1]);
  ASSERT_TRUE(m.g.finalize());
  EXPECT_EQ(m.evictedForBig(byteOptions(Policy::Coop, 110)),
            m.tensors({2, 3}));
}

TEST(Planner, NoWindowMeansOutOfMemoryAtTheOp) {
  // Every other tensor is a step output: no two evictable tensors are
  // adjacent, so no window holds 40 bytes. The two outputs are held to the
  // end, so the floor is x + A2 + A4 + the last use's A5, X and result.
  MotivatingExample m;
  m.g.markStepOutput(m.a[1]);
  m.g.markStepOutput(m.a[3]);
  ASSERT_TRUE(m.g.finalize());
  Plan p;
  Status st = plan(m.g, byteOptions(Policy::Coop, 110), &p);
  ASSERT_FALSE(st);
  EXPECT_TRUE(contains(st.message(), "below the memory floor of 111 bytes (10 "
                                     "persistent + 40 held by values"))
      << st.message();
  st = plan(m.g, byteOptions(Policy::Coop, 111), &p);
  ASSERT_FALSE(st);
  EXPECT_TRUE(contains(st.message(),
                       "out of memory at op #5 'aten.big' under policy coop"))
      << st.message();
}

TEST(Planner, BudgetBelowFloorNamesFloorAndOp) {
  MotivatingExample m;
  // Floor: x (10) + aten.use reads A (20) and X (40) and writes 1 byte.
  Plan p;
  Status st = plan(m.g, byteOptions(Policy::Coop, 70), &p);
  ASSERT_FALSE(st);
  EXPECT_TRUE(contains(st.message(), "below the memory floor of 71 bytes"))
      << st.message();
  EXPECT_TRUE(contains(st.message(), "'aten.use'")) << st.message();
  EXPECT_EQ(p.stats.memoryFloorBytes, 71);
}

TEST(Planner, NonPositiveAlignmentIsAnErrorNotACrash) {
  MotivatingExample m;
  for (int64_t alignment : {0, -512})
    for (bool packing : {true, false}) {
      PlanOptions o = byteOptions(Policy::Coop, 1000);
      o.alignment = alignment;
      o.offlinePacking = packing;
      Plan p;
      for (Status st : {plan(m.g, o, &p), simulate(m.g, o, &p),
                        searchPlan(m.g, o, &p)}) {
        ASSERT_FALSE(st);
        EXPECT_EQ(st.message(), "alignment must be positive");
      }
    }
}

TEST(Planner, NonePolicyFailsWhereRematerializationIsNeeded) {
  MotivatingExample m;
  Plan p;
  Status st = plan(m.g, byteOptions(Policy::None, 110), &p);
  ASSERT_FALSE(st);
  EXPECT_TRUE(contains(st.message(),
                       "out of memory under policy none: the step without "
                       "rematerialization needs 151 bytes once packed"))
      << st.message();
  // The simulator alone names the op where its arena ran out.
  st = simulate(m.g, byteOptions(Policy::None, 110), &p);
  EXPECT_TRUE(contains(st.message(),
                       "out of memory at op #5 'aten.big' under policy none"))
      << st.message();
  ASSERT_OK(planAndVerify(m.g, byteOptions(Policy::None, 151), &p));
  EXPECT_EQ(p.stats.recomputeCount, 0);
  EXPECT_EQ(p.stats.peakAllocatedBytes, 151);
}

TEST(Planner, MinimumBudgetBisectsToTheEdge) {
  MotivatingExample m;
  int64_t none = 0, coop = 0;
  ASSERT_OK(minimumBudget(m.g, byteOptions(Policy::None, 0), &none));
  EXPECT_EQ(none, 151); // x + A1..A5 + X + one 1-byte result
  ASSERT_OK(minimumBudget(m.g, byteOptions(Policy::Coop, 0), &coop));
  EXPECT_GE(coop, 71); // the floor
  EXPECT_LE(coop, 110);
  Plan p;
  EXPECT_OK(planAndVerify(m.g, byteOptions(Policy::Coop, coop), &p));
  EXPECT_FALSE(plan(m.g, byteOptions(Policy::Coop, coop - 1), &p));
}

TEST(Planner, RecomputeChainSeveralLevelsDeep) {
  // a1..a4 is a chain; a 90-byte tensor forces a4 out, and the last op
  // needs a4 back, which needs a3, a2 and a1 (all freed after their last
  // direct use) recomputed in order.
  Graph g;
  TensorId x = g.addArgument("x", 10, TensorRole::Input);
  TensorId prev = x;
  std::vector<OpId> chain;
  for (int i = 0; i < 4; ++i) {
    chain.push_back(g.addOp("aten.tanh", {prev}, {20}, {}, 1.0));
    prev = g.ops[chain.back()].outputs[0];
  }
  TensorId big = g.ops[g.addOp("aten.big", {x}, {90}, {}, 1.0)].outputs[0];
  TensorId small = g.ops[g.addOp("aten.sum", {big}, {1}, {}, 1.0)].outputs[0];
  OpId last = g.addOp("aten.mul", {prev, small}, {1}, {}, 1.0);
  g.markStepOutput(g.ops[last].outputs[0]);
  ASSERT_TRUE(g.finalize());

  Plan p;
  ASSERT_OK(planAndVerify(g, byteOptions(Policy::Coop, 110), &p));
  std::vector<OpId> recomputed;
  for (const Instruction &ins : p.instructions)
    if (ins.kind == InstructionKind::Recompute)
      recomputed.push_back(ins.op);
  EXPECT_EQ(recomputed, chain);
  EXPECT_EQ(p.stats.recomputeCount, 4);
  EXPECT_DOUBLE_EQ(p.stats.computeOverhead, 4.0 / 7.0);
  // Brought back only to feed the recomputation: each level is freed as
  // soon as the next one has been recomputed from it, so the chain never
  // holds more than two levels at once.
  std::vector<InstructionKind> kinds;
  std::vector<int32_t> subjects;
  bool started = false;
  for (const Instruction &ins : p.instructions) {
    started |= ins.kind == InstructionKind::Recompute;
    if (!started)
      continue;
    kinds.push_back(ins.kind);
    subjects.push_back(ins.kind == InstructionKind::Free ? ins.tensor
                                                         : ins.op);
    if (ins.kind == InstructionKind::Run)
      break;
  }
  auto out = [&](int i) { return g.ops[chain[i]].outputs[0]; };
  using K = InstructionKind;
  EXPECT_EQ(kinds, std::vector<K>({K::Recompute, K::Recompute, K::Free,
                                   K::Recompute, K::Free, K::Recompute,
                                   K::Free, K::Run}));
  EXPECT_EQ(subjects,
            std::vector<int32_t>({chain[0], chain[1], out(0), chain[2],
                                  out(1), chain[3], out(2), last}));
}

// w (param), x (input)
// a = mm(x, w)      40 B, expensive
// b = relu_(a)      in place
// c = add_(b, x)    in place
// l = sum(c)        1 B
// g = grad(l, a)    reads the *old* value of a again
struct InPlaceChain {
  Graph g;
  TensorId w, x, a, b, c;
  OpId mm, relu, add, grad;
  InPlaceChain() {
    w = g.addArgument("w", 10, TensorRole::Parameter);
    x = g.addArgument("x", 40, TensorRole::Input);
    mm = g.addOp("aten.mm", {x, w}, {40}, {}, 5.0);
    a = g.ops[mm].outputs[0];
    relu = g.addOp("aten.relu_", {a}, {40}, {0}, 1.0);
    b = g.ops[relu].outputs[0];
    add = g.addOp("aten.add_", {b, x}, {40}, {0}, 1.0);
    c = g.ops[add].outputs[0];
    TensorId l = g.ops[g.addOp("aten.sum", {c}, {1}, {}, 1.0)].outputs[0];
    grad = g.addOp("aten.grad", {l, a}, {10}, {}, 1.0);
    g.markStepOutput(g.ops[grad].outputs[0]);
    EXPECT_TRUE(g.finalize());
  }
};

TEST(Planner, InPlaceChainKeepsOldValueWhenMemoryAllows) {
  InPlaceChain s;
  Plan p;
  ASSERT_OK(planAndVerify(s.g, byteOptions(Policy::Coop, 1000), &p));
  EXPECT_EQ(p.stats.recomputeCount, 0);
  // relu_ copies (a is read later); add_ overwrites b where it lives.
  EXPECT_FALSE(findRun(p, s.relu)->outputs[0].inPlace);
  const Allocation &addOut = findRun(p, s.add)->outputs[0];
  EXPECT_TRUE(addOut.inPlace);
  EXPECT_EQ(addOut.offset, findRun(p, s.relu)->outputs[0].offset);
}

TEST(Planner, InPlaceUnderPressureMakesOldValueVirtualEvicted) {
  // 50 persistent + 40 for a: no room for a 40-byte copy at 101 bytes (the
  // floor: grad needs l, a and its output), so relu_ writes in place, a
  // becomes recomputable from mm, and grad recomputes it.
  InPlaceChain s;
  Plan p;
  ASSERT_OK(planAndVerify(s.g, byteOptions(Policy::Coop, 101), &p));
  const Allocation &reluOut = findRun(p, s.relu)->outputs[0];
  EXPECT_TRUE(reluOut.inPlace);
  EXPECT_EQ(reluOut.offset, findRun(p, s.mm)->outputs[0].offset);
  EXPECT_TRUE(findRun(p, s.add)->outputs[0].inPlace);
  EXPECT_EQ(p.stats.recomputeCount, 1);
  EXPECT_EQ(p.stats.evictionCount, 0); // the old version needed no Evict
}

TEST(Planner, CopyOnWriteAblationNeedsMoreMemory) {
  InPlaceChain s;
  PlanOptions o = byteOptions(Policy::Coop, 101);
  o.recomputableInPlace = false;
  Plan p;
  Status st = plan(s.g, o, &p);
  ASSERT_FALSE(st);
  EXPECT_TRUE(contains(st.message(), "below the memory floor of 130 bytes"))
      << st.message();
  o.budgetBytes = 1000;
  ASSERT_OK(planAndVerify(s.g, o, &p));
  EXPECT_FALSE(findRun(p, s.relu)->outputs[0].inPlace);
  EXPECT_FALSE(findRun(p, s.add)->outputs[0].inPlace);
}

TEST(Planner, RecomputedInPlaceConsumesItsRecomputedOperand) {
  // x (input, 512) ; a = exp(x) ; r = relu_(a) in place ; b = sin(x) ;
  // c = cos(x) ; d = add(b, c) ; e = mul(d, r). Four 512-byte slots: d
  // evicts r, and e needs r back. Recomputing r recomputes a, and relu_ must
  // then write a's buffer in place: a was brought back only for it. A copy
  // would need a fifth slot for e.
  Graph g;
  TensorId x = g.addArgument("x", 512, TensorRole::Input);
  OpId exp = g.addOp("aten.exp", {x}, {512}, {}, 1.0);
  TensorId a = g.ops[exp].outputs[0];
  OpId relu = g.addOp("aten.relu_", {a}, {512}, {0}, 1.0);
  TensorId r = g.ops[relu].outputs[0];
  TensorId b = g.ops[g.addOp("aten.sin", {x}, {512}, {}, 1.0)].outputs[0];
  TensorId c = g.ops[g.addOp("aten.cos", {x}, {512}, {}, 1.0)].outputs[0];
  TensorId d = g.ops[g.addOp("aten.add", {b, c}, {512}, {}, 1.0)].outputs[0];
  OpId mul = g.addOp("aten.mul", {d, r}, {512}, {}, 1.0);
  g.markStepOutput(g.ops[mul].outputs[0]);
  ASSERT_TRUE(g.finalize());

  PlanOptions o;
  o.budgetBytes = 4 * 512;
  Plan p;
  ASSERT_OK(planAndVerify(g, o, &p));
  std::vector<const Instruction *> recomputes;
  for (const Instruction &ins : p.instructions)
    if (ins.kind == InstructionKind::Recompute)
      recomputes.push_back(&ins);
  ASSERT_EQ(recomputes.size(), 2u);
  EXPECT_EQ(recomputes[0]->op, exp);
  EXPECT_EQ(recomputes[1]->op, relu);
  ASSERT_EQ(recomputes[1]->outputs.size(), 1u);
  EXPECT_TRUE(recomputes[1]->outputs[0].inPlace);
  EXPECT_EQ(recomputes[1]->outputs[0].offset, recomputes[0]->outputs[0].offset);
}

TEST(Planner, ParameterUpdateStaysInPlace) {
  Graph g;
  TensorId w = g.addArgument("w", 100, TensorRole::Parameter);
  TensorId grad = g.addArgument("g", 100, TensorRole::Gradient);
  OpId update = g.addOp("aten.sub_", {w, grad}, {100}, {0}, 1.0);
  ASSERT_TRUE(g.finalize());
  Plan p;
  ASSERT_OK(planAndVerify(g, byteOptions(Policy::Coop, 200), &p));
  const Allocation &out = findRun(p, update)->outputs[0];
  EXPECT_TRUE(out.inPlace);
  EXPECT_EQ(out.offset, p.arguments[0].offset);
}

TEST(Planner, ParameterReadAfterItsUpdateIsCopied) {
  // The old w cannot be recomputed, so the update must not overwrite it.
  Graph g;
  TensorId w = g.addArgument("w", 100, TensorRole::Parameter);
  TensorId grad = g.addArgument("g", 100, TensorRole::Gradient);
  OpId update = g.addOp("aten.sub_", {w, grad}, {100}, {0}, 1.0);
  OpId reader = g.addOp("aten.norm", {w}, {4}, {}, 1.0);
  g.markStepOutput(g.ops[reader].outputs[0]);
  ASSERT_TRUE(g.finalize());
  Plan p;
  ASSERT_OK(planAndVerify(g, byteOptions(Policy::Coop, 304), &p));
  EXPECT_FALSE(findRun(p, update)->outputs[0].inPlace);
  EXPECT_FALSE(plan(g, byteOptions(Policy::Coop, 303), &p));
}

TEST(Planner, InPlaceThroughAViewTakesTheWholeBuffer) {
  Graph g;
  TensorId x = g.addArgument("x", 10, TensorRole::Input);
  TensorId a = g.ops[g.addOp("aten.exp", {x}, {40}, {}, 1.0)].outputs[0];
  TensorId half = g.ops[g.addView("aten.slice", a, {20})].outputs[0];
  OpId add = g.addOp("aten.add_", {half, x}, {20}, {0}, 1.0);
  OpId reader = g.addOp("aten.sum", {g.ops[add].outputs[0]}, {1}, {}, 1.0);
  g.markStepOutput(g.ops[reader].outputs[0]);
  ASSERT_TRUE(g.finalize());
  Plan p;
  ASSERT_OK(planAndVerify(g, byteOptions(Policy::Coop, 100), &p));
  const Allocation &out = findRun(p, add)->outputs[0];
  EXPECT_TRUE(out.inPlace);
  EXPECT_EQ(out.offset, 10);
  EXPECT_EQ(out.size, 40);
}

TEST(Planner, ViewChainFollowsItsBase) {
  // v3 = view(view(view(a))); a is evicted by a big tensor and recomputed
  // when v3 is read. Views never get a buffer of their own.
  Graph g;
  TensorId x = g.addArgument("x", 10, TensorRole::Input);
  OpId makeA = g.addOp("aten.exp", {x}, {30}, {}, 1.0);
  TensorId v = g.ops[makeA].outputs[0];
  std::vector<OpId> views;
  for (int i = 0; i < 3; ++i) {
    views.push_back(g.addView("aten.view", v, {30}));
    v = g.ops[views.back()].outputs[0];
  }
  TensorId big = g.ops[g.addOp("aten.big", {x}, {80}, {}, 1.0)].outputs[0];
  TensorId s = g.ops[g.addOp("aten.sum", {big}, {1}, {}, 1.0)].outputs[0];
  OpId last = g.addOp("aten.mul", {v, s}, {1}, {}, 1.0);
  g.markStepOutput(g.ops[last].outputs[0]);
  ASSERT_TRUE(g.finalize());

  Plan p;
  ASSERT_OK(planAndVerify(g, byteOptions(Policy::Coop, 100), &p));
  for (OpId view : views)
    EXPECT_TRUE(findRun(p, view)->outputs.empty());
  std::vector<OpId> recomputed;
  for (const Instruction &ins : p.instructions)
    if (ins.kind == InstructionKind::Recompute)
      recomputed.push_back(ins.op);
  EXPECT_EQ(recomputed, std::vector<OpId>({makeA}));
}

TEST(Planner, RandomOpsAreRecomputable) {
  Graph g;
  TensorId x = g.addArgument("x", 10, TensorRole::Input);
  OpId drop = g.addOp("aten.dropout", {x}, {30}, {}, 1.0);
  g.ops[drop].isRandom = true;
  TensorId d = g.ops[drop].outputs[0];
  TensorId big = g.ops[g.addOp("aten.big", {x}, {80}, {}, 1.0)].outputs[0];
  TensorId s = g.ops[g.addOp("aten.sum", {big}, {1}, {}, 1.0)].outputs[0];
  g.addOp("aten.mul", {d, s}, {1}, {}, 1.0);
  ASSERT_TRUE(g.finalize());
  Plan p;
  ASSERT_OK(planAndVerify(g, byteOptions(Policy::Coop, 100), &p));
  EXPECT_EQ(p.stats.recomputeCount, 1);
}

TEST(Planner, TwoEndedPlacementSeparatesClasses) {
  Graph g;
  TensorId x = g.addArgument("x", 512, TensorRole::Input);
  TensorId w = g.addArgument("w", 512, TensorRole::Parameter);
  OpId mm = g.addOp("aten.mm", {x, w}, {1000}, {}, 1.0);
  OpId relu = g.addOp("aten.relu", {g.ops[mm].outputs[0]}, {1000}, {}, 1.0);
  g.markStepOutput(g.ops[relu].outputs[0]);
  ASSERT_TRUE(g.finalize());

  PlanOptions o;
  o.budgetBytes = 10 * 512;
  Plan p;
  ASSERT_OK(planAndVerify(g, o, &p, simulate));
  // Arguments at the bottom, the matmul output right above them (low edge),
  // the cheap relu output at the very top (high edge); 1000 B align to 1024.
  EXPECT_EQ(findRun(p, mm)->outputs[0].offset, 1024);
  EXPECT_EQ(findRun(p, mm)->outputs[0].size, 1024);
  EXPECT_EQ(findRun(p, relu)->outputs[0].offset, 10 * 512 - 1024);

  o.twoEndedPartitioning = false;
  ASSERT_OK(planAndVerify(g, o, &p, simulate));
  EXPECT_EQ(findRun(p, relu)->outputs[0].offset, 2048);

  // A cost-density threshold can make the cheap-named op expensive.
  o.twoEndedPartitioning = true;
  o.expensiveKernelSubstrings.clear();
  o.expensiveCostDensity = 0.0005; // 1 us / 1000 B = 0.001 us/B
  ASSERT_OK(planAndVerify(g, o, &p, simulate));
  EXPECT_EQ(findRun(p, relu)->outputs[0].offset, 2048);
}

TEST(Planner, SmallTensorsUseTheirOwnRegion) {
  Graph g;
  TensorId x = g.addArgument("x", 512, TensorRole::Input);
  OpId tiny = g.addOp("aten.sum", {x}, {4}, {}, 1.0);
  OpId large = g.addOp("aten.exp", {x}, {20000}, {}, 1.0);
  g.markStepOutput(g.ops[tiny].outputs[0]);
  g.markStepOutput(g.ops[large].outputs[0]);
  ASSERT_TRUE(g.finalize());
  PlanOptions o;
  o.budgetBytes = 64 * 1024;
  o.twoEndedPartitioning = false;
  o.smallRegionBytes = 4096;
  Plan p;
  ASSERT_OK(planAndVerify(g, o, &p, simulate));
  EXPECT_EQ(findRun(p, tiny)->outputs[0].offset, 60 * 1024);
  EXPECT_EQ(findRun(p, large)->outputs[0].offset, 512);
}

TEST(Planner, DTEPrefersTensorsNextToFreeSpace) {
  // Same costs and staleness for B and C, but C sits next to a free hole, so
  // DTE's denominator is larger for C and C goes first.
  Graph g;
  TensorId x = g.addArgument("x", 10, TensorRole::Input);
  TensorId hole = g.ops[g.addOp("aten.relu", {x}, {20}, {}, 0.0)].outputs[0];
  TensorId b = g.ops[g.addOp("aten.relu", {x}, {20}, {}, 0.0)].outputs[0];
  TensorId c = g.ops[g.addOp("aten.relu", {x}, {20}, {}, 0.0)].outputs[0];
  TensorId d = g.ops[g.addOp("aten.relu", {x}, {20}, {}, 0.0)].outputs[0];
  g.addOp("aten.use", {hole}, {1}, {}, 1.0); // frees `hole` at [10, 30)
  TensorId e = g.ops[g.addOp("aten.big", {x}, {40}, {}, 1.0)].outputs[0];
  for (TensorId t : {b, c, d})
    g.addOp("aten.use", {t, e}, {1}, {}, 1.0);
  ASSERT_TRUE(g.finalize());
  // Layout before big: x | free 20 | b | c | d | free 1 ... budget 91.
  Plan p;
  ASSERT_OK(planAndVerify(g, byteOptions(Policy::DTE, 91), &p));
  std::vector<TensorId> evicted = evictedBeforeRun(p, 5);
  ASSERT_FALSE(evicted.empty());
  EXPECT_EQ(evicted[0], b); // b borders the 20-byte hole
}

TEST(Arena, BestFitCoalescesAndPrefersLowestAddressOnTies) {
  Arena arena(0, 100);
  EXPECT_EQ(arena.allocate(10, 1, false), 0);
  EXPECT_EQ(arena.allocate(10, 2, false), 10);
  EXPECT_EQ(arena.allocate(10, 3, false), 20);
  EXPECT_EQ(arena.allocate(10, 4, false), 30);
  arena.release(0);
  arena.release(20);
  // Two 10-byte holes and a 60-byte tail: best fit takes the lowest hole.
  EXPECT_EQ(arena.allocate(10, 5, true), 0);
  arena.release(10);
  // [0,10) owner 5, [10,30) free, [30,40) owner 4, [40,100) free.
  EXPECT_EQ(arena.freeBytes(), 80);
  EXPECT_EQ(arena.largestFreePiece(), 60);
  EXPECT_EQ(arena.freeBytesAround(30), 80);
  EXPECT_EQ(arena.allocate(15, 6, true), 15); // high edge of [10,30)
  arena.release(0);
  arena.release(15);
  arena.release(30);
  EXPECT_EQ(arena.pieceCount(), 1u);
  EXPECT_EQ(arena.largestFreePiece(), 100);
}

/// Best fit with coalescing over one ordered map of pieces: what Arena
/// computes, written the plain way.
class MapArena {
public:
  explicit MapArena(int64_t size) { pieces_[0] = {size, Arena::kFree}; }
  int64_t allocate(int64_t size, int32_t owner, bool atHighEdge,
                   bool lowest) {
    auto chosen = pieces_.end();
    for (auto it = pieces_.begin(); it != pieces_.end(); ++it)
      if (it->second.owner == Arena::kFree && it->second.size >= size &&
          (chosen == pieces_.end() ||
           (!lowest && it->second.size < chosen->second.size)))
        chosen = it;
    if (chosen == pieces_.end())
      return -1;
    const auto [start, piece] = *chosen;
    const int64_t rest = piece.size - size;
    const int64_t offset = atHighEdge ? start + rest : start;
    pieces_.erase(chosen);
    pieces_[offset] = {size, owner};
    if (rest > 0)
      pieces_[atHighEdge ? start : offset + size] = {rest, Arena::kFree};
    return offset;
  }
  void release(int64_t offset) {
    pieces_[offset].owner = Arena::kFree;
    auto it = pieces_.find(offset);
    auto right = std::next(it);
    if (right != pieces_.end() && right->second.owner == Arena::kFree) {
      it->second.size += right->second.size;
      pieces_.erase(right);
    }
    if (it != pieces_.begin() && std::prev(it)->second.owner == Arena::kFree) {
      std::prev(it)->second.size += it->second.size;
      pieces_.erase(it);
    }
  }
  /// (offset, size, owner) of every piece in address order.
  std::vector<std::tuple<int64_t, int64_t, int32_t>> layout() const {
    std::vector<std::tuple<int64_t, int64_t, int32_t>> out;
    for (const auto &[offset, piece] : pieces_)
      out.emplace_back(offset, piece.size, piece.owner);
    return out;
  }

private:
  struct Piece {
    int64_t size;
    int32_t owner;
  };
  std::map<int64_t, Piece> pieces_;
};

TEST(Arena, ThousandsOfPiecesMatchOneOrderedMap) {
  // Enough live pieces that the address order spans many blocks, which
  // split as pieces come, then join as most of them go.
  constexpr int64_t kBytes = 1 << 20;
  Arena arena(0, kBytes);
  MapArena reference(kBytes);
  std::mt19937 random(7);
  std::vector<int64_t> live;
  size_t mostLive = 0;
  // Per block stamp, the block's pieces when last seen: a block whose
  // stamp is the same must hold the same pieces.
  std::map<uint64_t, std::vector<std::tuple<int64_t, int64_t, int32_t>>>
      blocksByStamp;
  size_t blocksKept = 0;
  for (int32_t step = 0; step < 20000; ++step) {
    const bool grow = step >= 12000     ? random() % 4 == 0
                      : live.size() < 3000 ? random() % 4 != 0
                                           : random() % 2 != 0;
    if (grow || live.empty()) {
      const int64_t size = 1 + int64_t(random() % 600);
      const bool high = random() % 2, lowest = random() % 8 == 0;
      const int64_t offset = lowest ? arena.allocateLowest(size, step)
                                    : arena.allocate(size, step, high);
      ASSERT_EQ(offset, reference.allocate(size, step, high && !lowest,
                                           lowest))
          << "step " << step;
      if (offset >= 0)
        live.push_back(offset);
      mostLive = std::max(mostLive, live.size());
    } else {
      const size_t i = random() % live.size();
      arena.release(live[i]);
      reference.release(live[i]);
      live[i] = live.back();
      live.pop_back();
    }
    if (step % 97 == 0 || step + 1 == 20000) {
      std::vector<std::tuple<int64_t, int64_t, int32_t>> layout;
      for (const Arena::Piece &piece : arena.pieces())
        layout.emplace_back(piece.offset, piece.size, piece.owner);
      ASSERT_EQ(layout, reference.layout()) << "step " << step;
      ASSERT_EQ(arena.pieceCount(), layout.size());
      std::vector<std::tuple<int64_t, int64_t, int32_t>> concatenated;
      std::map<uint64_t, std::vector<std::tuple<int64_t, int64_t, int32_t>>>
          seen;
      for (size_t b = 0; b < arena.blockCount(); ++b) {
        std::vector<std::tuple<int64_t, int64_t, int32_t>> &pieces =
            seen[arena.blockStamp(b)];
        for (const Arena::Piece &piece : arena.blockPieces(b))
          pieces.emplace_back(piece.offset, piece.size, piece.owner);
        concatenated.insert(concatenated.end(), pieces.begin(), pieces.end());
        ASSERT_EQ(arena.iteratorAt(b, 0)->offset, std::get<0>(pieces[0]));
        auto before = blocksByStamp.find(arena.blockStamp(b));
        if (before != blocksByStamp.end()) {
          ASSERT_EQ(before->second, pieces) << "step " << step;
          ++blocksKept;
        }
      }
      ASSERT_EQ(seen.size(), arena.blockCount()); // no stamp twice
      ASSERT_EQ(concatenated, layout);
      blocksByStamp = std::move(seen);
      // Touching a piece gives its block a new stamp.
      const size_t block = size_t(random() % arena.blockCount());
      const uint64_t stamp = arena.blockStamp(block);
      arena.touch(arena.blockPieces(block).back().offset);
      ASSERT_NE(arena.blockStamp(block), stamp);
      blocksByStamp.erase(stamp);
      // The walks start at an address that need not start a piece.
      const int64_t from = int64_t(random() % kBytes);
      auto first = std::lower_bound(
          layout.begin(), layout.end(), from,
          [](const auto &piece, int64_t at) { return std::get<0>(piece) < at; });
      const Arena::Pieces rest = arena.piecesFrom(from);
      ASSERT_EQ(rest.begin() == rest.end(), first == layout.end());
      if (first != layout.end())
        ASSERT_EQ(rest.begin()->offset, std::get<0>(*first));
    }
  }
  EXPECT_GT(mostLive, 2000u);
  EXPECT_LT(live.size(), 100u);
  EXPECT_GT(blocksKept, 0u); // some blocks outlast 97 steps unchanged
}

} // namespace
