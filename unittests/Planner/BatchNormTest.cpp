//===- BatchNormTest.cpp - Recomputing ops with discardable updates -------===//
//
// A training batch norm writes its running statistics (persistent buffers)
// in place next to its fresh outputs. With Op::discardableInPlace it can be
// recomputed: the recomputation writes the statistics to scratch recorded
// in Instruction::discarded and throws them away.
//
//===----------------------------------------------------------------------===//

#include "PlanTestUtil.h"

using namespace coop::planner;
using namespace coop::planner::testing;

namespace {

// Two conv -> batch_norm -> relu_ layers, a loss and their backward:
//   c = conv(h, w)                      100 B, expensive
//   y, mean, invstd, rm', rv' = batch_norm(c, gamma, rm, rv)
//                                       rm, rv: Buffer, updated in place
//   r = relu_(y)                        in place over y
// backward: threshold_backward reads r, batch_norm_backward reads c, mean
// and invstd, the weight gradient reads the layer input r1.
struct CnnStep {
  Graph g;
  TensorId x;
  TensorId runningMean[2], runningVar[2], r[2];
  OpId conv[2], bn[2], relu[2];

  explicit CnnStep(bool discardable = true) {
    x = g.addArgument("x", 100, TensorRole::Input);
    TensorId h = x;
    TensorId w[2], gamma[2], c[2], mean[2], invstd[2];
    for (int i = 0; i < 2; ++i) {
      const std::string n = std::to_string(i);
      w[i] = g.addArgument("w" + n, 10, TensorRole::Parameter);
      gamma[i] = g.addArgument("gamma" + n, 4, TensorRole::Parameter);
      runningMean[i] = g.addArgument("rm" + n, 4, TensorRole::Buffer);
      runningVar[i] = g.addArgument("rv" + n, 4, TensorRole::Buffer);
      conv[i] = g.addOp("aten.convolution", {h, w[i]}, {100}, {}, 100.0);
      c[i] = g.ops[conv[i]].outputs[0];
      bn[i] = g.addOp("aten.native_batch_norm",
                      {c[i], gamma[i], runningMean[i], runningVar[i]},
                      {100, 4, 4, 4, 4}, {kNone, kNone, kNone, 2, 3}, 10.0);
      g.ops[bn[i]].discardableInPlace = discardable;
      mean[i] = g.ops[bn[i]].outputs[1];
      invstd[i] = g.ops[bn[i]].outputs[2];
      relu[i] = g.addOp("aten.relu_", {g.ops[bn[i]].outputs[0]}, {100}, {0},
                        1.0);
      r[i] = g.ops[relu[i]].outputs[0];
      h = r[i];
    }
    TensorId loss = g.ops[g.addOp("aten.sum", {h}, {4}, {}, 1.0)].outputs[0];
    g.markStepOutput(loss);
    TensorId grad =
        g.ops[g.addOp("aten.sum_backward", {loss, h}, {100}, {}, 1.0)]
            .outputs[0];
    for (int i = 1; i >= 0; --i) {
      grad = g.ops[g.addOp("aten.threshold_backward", {grad, r[i]}, {100},
                           {}, 1.0)]
                 .outputs[0];
      grad = g.ops[g.addOp("aten.native_batch_norm_backward",
                           {grad, c[i], gamma[i], mean[i], invstd[i]}, {100},
                           {}, 10.0)]
                 .outputs[0];
      TensorId input = i == 0 ? x : r[0];
      TensorId gw = g.ops[g.addOp("aten.convolution_backward",
                                  {grad, input}, {10}, {}, 100.0)]
                        .outputs[0];
      g.markStepOutput(gw);
      if (i > 0)
        grad = g.ops[g.addOp("aten.convolution_backward", {grad, w[i]},
                             {100}, {}, 100.0)]
                   .outputs[0];
    }
    EXPECT_TRUE(g.finalize());
  }
};

/// Coop, DTR and DTE all need at least 564 bytes when the batch norms
/// cannot be recomputed, and about 472 when they can.
constexpr int64_t kBudget = 500;

const Instruction *findDiscardingRecompute(const Plan &p, OpId op) {
  for (const Instruction &ins : p.instructions)
    if (ins.kind == InstructionKind::Recompute && ins.op == op &&
        !ins.discarded.empty())
      return &ins;
  return nullptr;
}

TEST(BatchNorm, RecomputedWithDiscardedRunningStats) {
  for (Policy policy : {Policy::Coop, Policy::DTR, Policy::DTE}) {
    SCOPED_TRACE(policyName(policy));
    CnnStep fixed(/*discardable=*/false);
    Plan p;
    Status st = plan(fixed.g, byteOptions(policy, kBudget), &p);
    EXPECT_FALSE(st) << "plannable without recomputing batch norm";

    CnnStep s;
    ASSERT_OK(planAndVerify(s.g, byteOptions(policy, kBudget), &p));
    const Instruction *re = findDiscardingRecompute(p, s.bn[0]);
    if (!re)
      re = findDiscardingRecompute(p, s.bn[1]);
    ASSERT_NE(re, nullptr) << "no batch norm recomputed";
    const int layer = re->op == s.bn[0] ? 0 : 1;
    const std::vector<TensorId> &outs = s.g.ops[re->op].outputs;
    // The running statistics go to scratch of their own...
    ASSERT_EQ(re->discarded.size(), 2u);
    EXPECT_EQ(re->discarded[0].tensor, outs[3]);
    EXPECT_EQ(re->discarded[1].tensor, outs[4]);
    for (const Allocation &d : re->discarded) {
      EXPECT_FALSE(d.inPlace);
      EXPECT_GE(d.size, 4);
    }
    // ... and the fresh outputs are placed as usual.
    for (const Allocation &a : re->outputs) {
      EXPECT_TRUE(a.tensor == outs[0] || a.tensor == outs[1] ||
                  a.tensor == outs[2]);
      EXPECT_FALSE(a.inPlace);
    }
    // The run still updates the statistics in place.
    const Instruction *run = findRun(p, s.bn[layer]);
    ASSERT_NE(run, nullptr);
    EXPECT_TRUE(run->discarded.empty());
    int inPlace = 0;
    for (const Allocation &a : run->outputs)
      inPlace += a.inPlace;
    EXPECT_EQ(inPlace, 2);
    // A recomputation costs the op's cost.
    EXPECT_GT(p.stats.computeOverhead, 0.0);
  }
}

TEST(BatchNorm, NoneIsUnchanged) {
  CnnStep s;
  Plan p;
  EXPECT_FALSE(plan(s.g, byteOptions(Policy::None, kBudget), &p));
  ASSERT_OK(planAndVerify(s.g, byteOptions(Policy::None, 764), &p));
  EXPECT_EQ(p.stats.recomputeCount, 0);
}

// x -> c = mm(x) -> y, stats' = batch_norm(c, stats) -> e = big(x) (200 B,
// read by use) -> z = add(y, x). At 350 bytes y must be evicted for e.
Graph statsStep(bool buffer, OpId *bn, TensorId *y) {
  Graph g;
  TensorId x = g.addArgument("x", 100, TensorRole::Input);
  TensorId stats =
      buffer ? g.addArgument("stats", 4, TensorRole::Buffer)
             : g.ops[g.addOp("aten.zeros", {}, {4}, {}, 1.0)].outputs[0];
  TensorId c = g.ops[g.addOp("aten.mm", {x}, {100}, {}, 50.0)].outputs[0];
  *bn = g.addOp("aten.native_batch_norm", {c, stats}, {100, 4}, {kNone, 1},
                10.0);
  g.ops[*bn].discardableInPlace = true;
  *y = g.ops[*bn].outputs[0];
  TensorId e = g.ops[g.addOp("aten.big", {x}, {200}, {}, 1.0)].outputs[0];
  g.addOp("aten.use", {e}, {1}, {}, 1.0);
  TensorId z = g.ops[g.addOp("aten.add", {*y, x}, {100}, {}, 1.0)].outputs[0];
  g.markStepOutput(z);
  g.markStepOutput(g.ops[*bn].outputs[1]);
  EXPECT_TRUE(g.finalize());
  return g;
}

TEST(BatchNorm, NonPersistentInPlaceOutputIsNotDiscarded) {
  OpId bn;
  TensorId y;
  // Running statistics in a buffer: y is evicted and recomputed.
  Graph buffered = statsStep(/*buffer=*/true, &bn, &y);
  Plan p;
  ASSERT_OK(planAndVerify(buffered, byteOptions(Policy::Coop, 350), &p));
  EXPECT_NE(findDiscardingRecompute(p, bn), nullptr);
  // The statistics are a transient value: the planner does not recompute
  // the op (documented restriction), y (100 bytes) and the statistics (4)
  // stay unevictable, which the floor counts: 350 is below it.
  Graph transient = statsStep(/*buffer=*/false, &bn, &y);
  Status st = plan(transient, byteOptions(Policy::Coop, 350), &p);
  ASSERT_FALSE(st);
  EXPECT_TRUE(contains(st.message(),
                       "below the memory floor of 405 bytes (100 persistent + "
                       "104 held by values that cannot be recomputed"))
      << st.message();
  ASSERT_OK(planAndVerify(transient, byteOptions(Policy::Coop, 600), &p));
}

class BatchNormVerifier : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_OK(planAndVerify(s.g, byteOptions(Policy::Coop, kBudget), &p));
    for (Instruction &ins : p.instructions)
      if (ins.kind == InstructionKind::Recompute && !ins.discarded.empty()) {
        re = &ins;
        break;
      }
    ASSERT_NE(re, nullptr);
  }
  std::string rejection(const Graph &g) {
    Status st = verifyPlan(g, p, kBudget);
    EXPECT_FALSE(st) << "corrupted plan was accepted";
    return st.message();
  }
  std::string discardedName() const {
    return "discarded '" + s.g.tensors[re->discarded[0].tensor].name + "'";
  }
  CnnStep s;
  Plan p;
  Instruction *re = nullptr;
};

TEST_F(BatchNormVerifier, RejectsOverlappingScratch) {
  re->discarded[0].offset = p.arguments[0].offset; // on top of x
  std::string m = rejection(s.g);
  EXPECT_TRUE(contains(m, "(recompute op #")) << m;
  EXPECT_TRUE(contains(m, discardedName() + " at [")) << m;
  EXPECT_TRUE(contains(m, "overlaps 'x'")) << m;
}

TEST_F(BatchNormVerifier, RejectsScratchOverlappingItsSibling) {
  re->discarded[1].offset = re->discarded[0].offset;
  std::string m = rejection(s.g);
  EXPECT_TRUE(contains(m, "overlaps " + discardedName())) << m;
}

TEST_F(BatchNormVerifier, RejectsScratchOutsideTheArena) {
  re->discarded[0].offset = kBudget - 2;
  std::string m = rejection(s.g);
  EXPECT_TRUE(contains(m, discardedName() + " at [498, ")) << m;
  EXPECT_TRUE(contains(m, "lies outside the arena [0, 500)")) << m;
}

TEST_F(BatchNormVerifier, RejectsDiscardedOnARun) {
  Instruction &run = const_cast<Instruction &>(*findRun(p, re->op));
  run.discarded = re->discarded;
  std::string m = rejection(s.g);
  EXPECT_TRUE(contains(m, "(run op #")) << m;
  EXPECT_TRUE(contains(m, "discards outputs on a run")) << m;
}

TEST_F(BatchNormVerifier, RejectsDiscardedOnAnOpWithoutTheFlag) {
  CnnStep fixed(/*discardable=*/false);
  std::string m = rejection(fixed.g);
  EXPECT_TRUE(contains(m, "(recompute op #")) << m;
  EXPECT_TRUE(contains(m, "not marked discardable")) << m;
}

TEST_F(BatchNormVerifier, RejectsRecomputeThatDropsTheScratch) {
  re->discarded.clear();
  std::string m = rejection(s.g);
  EXPECT_TRUE(contains(m, "recomputes an op that writes persistent state"))
      << m;
}

TEST_F(BatchNormVerifier, RejectsDiscardingAFreshOutput) {
  re->discarded[0].tensor = s.g.ops[re->op].outputs[1];
  std::string m = rejection(s.g);
  EXPECT_TRUE(contains(m, "which is not an in-place output of the op")) << m;
}

TEST_F(BatchNormVerifier, RejectsDiscardedInPlace) {
  re->discarded[0].inPlace = true;
  std::string m = rejection(s.g);
  EXPECT_TRUE(contains(m, "a discarded output goes to scratch")) << m;
}

} // namespace
