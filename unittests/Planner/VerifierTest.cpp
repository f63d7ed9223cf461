//===- VerifierTest.cpp - The verifier rejects corrupted plans ------------===//

#include "PlanTestUtil.h"

using namespace coop::planner;
using namespace coop::planner::testing;

namespace {

// x (input, 40 B)
// e = sin(x)       50 B, keeps memory busy until sum
// a = mm(x)        40 B
// b = relu_(a)     in place
// s = sum(e)       1 B, never read
// c = exp(b)       40 B
// d = mul(a, c)    reads the old value of a: a must not be overwritten
// At 160 bytes relu_ has no room to copy a (x + e + a + copy = 170), so it
// writes in place and mul recomputes a.
struct Step {
  Graph g;
  TensorId x, a, b, c, d;
  OpId mm, relu, exp, mul;
  Step() {
    x = g.addArgument("x", 40, TensorRole::Input);
    TensorId e = g.ops[g.addOp("aten.sin", {x}, {50}, {}, 1.0)].outputs[0];
    mm = g.addOp("aten.mm", {x}, {40}, {}, 4.0);
    a = g.ops[mm].outputs[0];
    relu = g.addOp("aten.relu_", {a}, {40}, {0}, 1.0);
    b = g.ops[relu].outputs[0];
    g.addOp("aten.sum", {e}, {1}, {}, 1.0);
    exp = g.addOp("aten.exp", {b}, {40}, {}, 1.0);
    c = g.ops[exp].outputs[0];
    mul = g.addOp("aten.mul", {a, c}, {40}, {}, 1.0);
    d = g.ops[mul].outputs[0];
    g.markStepOutput(d);
    EXPECT_TRUE(g.finalize());
  }
  Plan planned(int64_t budget) {
    PlanOptions o;
    o.alignment = 1;
    o.budgetBytes = budget;
    o.twoEndedPartitioning = false;
    Plan p;
    EXPECT_OK(planAndVerify(g, o, &p));
    return p;
  }
};

Instruction &runOf(Plan &p, OpId op) {
  return const_cast<Instruction &>(*findRun(p, op));
}

Instruction dropping(InstructionKind kind, TensorId tensor) {
  Instruction ins;
  ins.kind = kind;
  ins.tensor = tensor;
  return ins;
}

template <typename Predicate> void eraseInstructions(Plan &p, Predicate drop) {
  p.instructions.erase(
      std::remove_if(p.instructions.begin(), p.instructions.end(), drop),
      p.instructions.end());
}

std::string rejection(const Step &s, const Plan &p, int64_t budget) {
  Status st = verifyPlan(s.g, p, budget);
  EXPECT_FALSE(st) << "corrupted plan was accepted";
  return st.message();
}

TEST(Verifier, AcceptsPlannedSteps) {
  Step s;
  Plan roomy = s.planned(1000);
  EXPECT_EQ(roomy.stats.recomputeCount, 0);
  EXPECT_FALSE(findRun(roomy, s.relu)->outputs[0].inPlace);
  Plan tight = s.planned(160);
  EXPECT_TRUE(findRun(tight, s.relu)->outputs[0].inPlace);
  EXPECT_EQ(tight.stats.recomputeCount, 1);
}

TEST(Verifier, RejectsOverlap) {
  Step s;
  Plan p = s.planned(1000);
  runOf(p, s.exp).outputs[0].offset = 0; // on top of x
  std::string m = rejection(s, p, 1000);
  EXPECT_TRUE(contains(m, "instruction #")) << m;
  EXPECT_TRUE(contains(m, "(run op #4 'aten.exp')")) << m;
  EXPECT_TRUE(contains(m, "overlaps 'x' at [0, 40)")) << m;
}

TEST(Verifier, RejectsAllocationOutsideTheArena) {
  Step s;
  Plan p = s.planned(1000);
  runOf(p, s.exp).outputs[0].offset = 990;
  std::string m = rejection(s, p, 1000);
  EXPECT_TRUE(contains(m, "(run op #4 'aten.exp')")) << m;
  EXPECT_TRUE(contains(m, "lies outside the arena [0, 1000)")) << m;
}

TEST(Verifier, RejectsUseAfterEvict) {
  Step s;
  Plan p = s.planned(1000);
  auto at = std::find_if(p.instructions.begin(), p.instructions.end(),
                         [&](const Instruction &ins) {
                           return ins.kind == InstructionKind::Run &&
                                  ins.op == s.mul;
                         });
  p.instructions.insert(at, dropping(InstructionKind::Evict, s.c));
  std::string m = rejection(s, p, 1000);
  EXPECT_TRUE(contains(m, "(run op #5 'aten.mul')")) << m;
  EXPECT_TRUE(contains(m, "after it was evicted")) << m;
}

TEST(Verifier, RejectsStaleVersion) {
  // Make relu_ overwrite a in place although mul still reads a.
  Step s;
  Plan p = s.planned(1000);
  const Allocation &aAt = findRun(p, s.mm)->outputs[0];
  Allocation &bAt = runOf(p, s.relu).outputs[0];
  ASSERT_FALSE(bAt.inPlace);
  bAt = Allocation{s.b, aAt.offset, aAt.size, true};
  eraseInstructions(p, [&](const Instruction &ins) {
    return (ins.kind == InstructionKind::Evict ||
            ins.kind == InstructionKind::Free) &&
           (ins.tensor == s.a || ins.tensor == s.b);
  });
  std::string m = rejection(s, p, 1000);
  EXPECT_TRUE(contains(m, "(run op #5 'aten.mul')")) << m;
  EXPECT_TRUE(contains(m, "stale version, its buffer now holds")) << m;
}

TEST(Verifier, RejectsDoubleFree) {
  Step s;
  Plan p = s.planned(1000);
  auto firstFree = std::find_if(
      p.instructions.begin(), p.instructions.end(),
      [](const Instruction &ins) { return ins.kind == InstructionKind::Free; });
  ASSERT_NE(firstFree, p.instructions.end());
  Instruction again = *firstFree;
  p.instructions.insert(firstFree + 1, again);
  std::string m = rejection(s, p, 1000);
  EXPECT_TRUE(contains(m, "already freed")) << m;
}

TEST(Verifier, RejectsMissingRecompute) {
  Step s;
  Plan p = s.planned(160);
  eraseInstructions(p, [](const Instruction &ins) {
    return ins.kind == InstructionKind::Recompute;
  });
  std::string m = rejection(s, p, 160);
  EXPECT_TRUE(contains(m, "(run op #5 'aten.mul')")) << m;
  EXPECT_TRUE(contains(m, "reads 'aten.mm#1:0'")) << m;
}

TEST(Verifier, RejectsLostFinalState) {
  Step s;
  Plan p = s.planned(1000);
  p.instructions.push_back(dropping(InstructionKind::Free, s.d));
  std::string m = rejection(s, p, 1000);
  EXPECT_TRUE(contains(m, "step output 'aten.mul#5:0' is not resident")) << m;
}

TEST(Verifier, RejectsOutOfOrderRun) {
  Step s;
  Plan p = s.planned(1000);
  std::swap(runOf(p, s.exp).op, runOf(p, s.mul).op);
  std::string m = rejection(s, p, 1000);
  EXPECT_TRUE(contains(m, "out of program order; expected op #4")) << m;
}

} // namespace
