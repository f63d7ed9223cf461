//===- ScatteredBarrierTest.cpp - A huge request among small pinned pieces ===//
//
// The BiLSTM's failure in miniature: small long-lived values that one later
// op reads together are produced interleaved with small evictable ones, so
// they end up scattered through the arena; when that op needs one huge
// output, every piece it still has to read is a barrier, and no contiguous
// run of free and evictable pieces is long enough, although the bytes are
// there. Nothing needs recomputing before the op, so keeping inputs
// resident (the first kind of replay) learns nothing. Replaying with the
// failure's barriers packed at the low end does plan it.
//
//===----------------------------------------------------------------------===//

#include "PlanTestUtil.h"

using namespace coop::planner;
using namespace coop::planner::testing;

namespace {

constexpr int kPieces = 8;
constexpr int64_t kSmall = 16;
constexpr int64_t kHuge = 160;

struct ScatteredStep {
  Graph g;
  OpId big = kNone;
  std::vector<TensorId> kept, spare;
  ScatteredStep() {
    TensorId x = g.addArgument("x", kSmall, TensorRole::Input);
    auto out = [&](OpId op) { return g.ops[op].outputs[0]; };
    for (int i = 0; i < kPieces; ++i) {
      // Both cheap (high edge under two-ended placement), alternating.
      kept.push_back(out(g.addOp("aten.relu", {x}, {kSmall}, {}, 1.0)));
      spare.push_back(out(g.addOp("aten.exp", {x}, {kSmall}, {}, 1.0)));
    }
    // Reads every kept piece and writes one huge value.
    big = g.addOp("aten.cat", kept, {kHuge}, {}, 1.0);
    std::vector<TensorId> uses = {out(big), x};
    for (TensorId s : spare)
      uses.push_back(out(g.addOp("aten.neg", {s, x}, {1}, {}, 1.0)));
    g.markStepOutput(out(g.addOp("aten.sum", uses, {4}, {}, 1.0)));
  }
};

TEST(ScatteredBarriers, HugeRequestPlansAfterPackingBarriersLow) {
  ScatteredStep step;
  ASSERT_OK(step.g.finalize());
  PlanOptions options;
  options.alignment = 1;
  Plan p;
  // Floor: x + the eight kept pieces + the huge output = 16 + 128 + 160.
  // At 320 only 48 bytes are free when the cat runs; it must evict spares,
  // and the only run long enough is all of them, contiguous.
  options.budgetBytes = 320;
  for (Policy policy : {Policy::Coop, Policy::DTR, Policy::DTE}) {
    options.policy = policy;
    ASSERT_OK(planAndVerify(step.g, options, &p, simulate));
    EXPECT_EQ(p.stats.memoryFloorBytes, 304);
    EXPECT_GT(p.stats.recomputeCount, 0) << policyName(policy);
    // The kept pieces were packed contiguously at the low end, next to x.
    std::vector<int64_t> offsets;
    for (const Instruction &ins : p.instructions)
      for (const Allocation &a : ins.outputs)
        if (std::find(step.kept.begin(), step.kept.end(), a.tensor) !=
            step.kept.end())
          offsets.push_back(a.offset);
    std::sort(offsets.begin(), offsets.end());
    ASSERT_EQ(offsets.size(), size_t(kPieces)) << policyName(policy);
    for (int i = 0; i < kPieces; ++i)
      EXPECT_EQ(offsets[i], kSmall * (i + 1)) << policyName(policy);
    const Instruction *cat = findRun(p, step.big);
    ASSERT_NE(cat, nullptr);
    EXPECT_GE(cat->outputs[0].offset, kSmall * (kPieces + 1));
    // What the replays learned gives the same plan without replays (the
    // plan search's improvement phase starts from it).
    ASSERT_NE(p.lessons, nullptr) << policyName(policy);
    PlanOptions learned = options;
    learned.learnFromFailures = false;
    Plan again;
    EXPECT_FALSE(simulate(step.g, learned, &again)) << policyName(policy);
    learned.lessons = p.lessons;
    ASSERT_OK(simulate(step.g, learned, &again));
    ASSERT_EQ(again.instructions.size(), p.instructions.size());
    for (size_t i = 0; i < p.instructions.size(); ++i) {
      const Instruction &a = p.instructions[i], &b = again.instructions[i];
      EXPECT_EQ(a.kind, b.kind);
      EXPECT_EQ(a.op, b.op);
      EXPECT_EQ(a.tensor, b.tensor);
      ASSERT_EQ(a.outputs.size(), b.outputs.size());
      for (size_t k = 0; k < a.outputs.size(); ++k)
        EXPECT_EQ(a.outputs[k].offset, b.outputs[k].offset);
    }
  }
  // With room for everything there is nothing to learn: the first replay's
  // plan, the kept pieces interleaved with the spares at the high end.
  options.policy = Policy::Coop;
  options.budgetBytes = 16 + 2 * kPieces * kSmall + kHuge;
  ASSERT_OK(planAndVerify(step.g, options, &p, simulate));
  EXPECT_EQ(p.stats.evictionCount, 0);
  EXPECT_EQ(p.lessons, nullptr);
  EXPECT_EQ(p.arguments[0].offset, 0);
  EXPECT_EQ(p.instructions[0].outputs[0].offset,
            options.budgetBytes - kSmall);
  EXPECT_EQ(p.instructions[1].outputs[0].offset,
            options.budgetBytes - 2 * kSmall);
}

} // namespace
