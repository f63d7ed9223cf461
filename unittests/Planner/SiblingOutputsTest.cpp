//===- SiblingOutputsTest.cpp - Recomputing one output of a multi-output op ===//
//
// Layer norm's pattern: one op writes a large normalized output and two
// small statistics; the backward reads the statistics long after the large
// output was evicted. Recomputing the large output rewrites the resident
// statistics where they are, so they must not be evicted to make room for
// it (the kernel would write them into memory given to something else).
// Found by the e2e transformer at one ratio; swept here over budgets.
//
//===----------------------------------------------------------------------===//

#include "PlanTestUtil.h"

using namespace coop::planner;
using namespace coop::planner::testing;

namespace {

constexpr int kLayers = 6;
constexpr int64_t kActivation = 64, kStatistic = 8;

struct NormalizedLayers {
  Graph g;
  NormalizedLayers() {
    TensorId x = g.addArgument("x", kActivation, TensorRole::Input);
    TensorId w = g.addArgument("w", 16, TensorRole::Parameter);
    auto out = [&](OpId op, int i = 0) { return g.ops[op].outputs[i]; };
    std::vector<OpId> norms;
    std::vector<TensorId> inputs;
    TensorId h = x;
    for (int i = 0; i < kLayers; ++i) {
      inputs.push_back(h);
      norms.push_back(g.addOp("aten.native_layer_norm", {h, w},
                              {kActivation, kStatistic, kStatistic}, {}, 3.0));
      h = out(g.addOp("aten.gelu", {out(norms.back())}, {kActivation}, {}, 1.0));
    }
    TensorId grad = out(g.addOp("aten.sum", {h}, {kActivation}, {}, 1.0));
    for (int i = kLayers - 1; i >= 0; --i) {
      TensorId gelu = out(g.addOp("aten.gelu_backward",
                                  {grad, out(norms[i])}, {kActivation}, {}, 1.0));
      grad = out(g.addOp("aten.native_layer_norm_backward",
                         {gelu, inputs[i], out(norms[i], 1), out(norms[i], 2), w},
                         {kActivation}, {}, 3.0));
    }
    g.markStepOutput(out(g.addOp("aten.sum", {grad}, {4}, {}, 1.0)));
  }
};

TEST(SiblingOutputs, EveryPlanOfTheSweepVerifies) {
  NormalizedLayers step;
  ASSERT_OK(step.g.finalize());
  int planned = 0;
  for (Policy policy : {Policy::Coop, Policy::DTR, Policy::DTE})
    for (bool twoEnded : {false, true})
      for (int64_t budget = 300; budget <= 1400; budget += 4) {
        PlanOptions options = byteOptions(policy, budget);
        options.twoEndedPartitioning = twoEnded;
        Plan plan;
        if (planAndVerify(step.g, options, &plan)) // verified when planned
          ++planned;
      }
  EXPECT_GT(planned, 0);
}

} // namespace
