//===- MlpStepTest.cpp - A realistic MLP training step near its floor -----===//
//
// The step of models/mlp.mlir rebuilt as a planner graph: an MLP
// 256-128x6-10 at batch 512 (addmm, relu_ in place, dropout with a saved
// mask, log-softmax/NLL loss, mirrored backward, SGD with momentum updating
// parameters and momentum in place). Deep recomputation chains in backward
// are what make low ratios hard.
//
//===----------------------------------------------------------------------===//

#include "PlanTestUtil.h"

using namespace coop::planner;
using namespace coop::planner::testing;

namespace {

constexpr int64_t kBatch = 512;
constexpr int64_t kF32 = 4;

struct MlpStep {
  Graph g;
  MlpStep() {
    const std::vector<int64_t> widths = {256, 128, 128, 128, 128, 128, 128, 10};
    const int layers = int(widths.size()) - 1;
    TensorId x = g.addArgument("x", kBatch * widths[0] * kF32,
                               TensorRole::Input);
    TensorId target = g.addArgument("target", kBatch * 8, TensorRole::Input);
    std::vector<TensorId> w, b, wm, bm;
    for (int i = 0; i < layers; ++i) {
      const std::string n = std::to_string(i);
      w.push_back(g.addArgument("w" + n, widths[i] * widths[i + 1] * kF32,
                                TensorRole::Parameter));
      b.push_back(g.addArgument("b" + n, widths[i + 1] * kF32,
                                TensorRole::Parameter));
    }
    for (int i = 0; i < layers; ++i) {
      wm.push_back(g.addArgument("w_momentum" + std::to_string(i),
                                 g.tensors[w[i]].bytes,
                                 TensorRole::OptimizerState));
      bm.push_back(g.addArgument("b_momentum" + std::to_string(i),
                                 g.tensors[b[i]].bytes,
                                 TensorRole::OptimizerState));
    }
    auto out = [&](OpId op, int i = 0) { return g.ops[op].outputs[i]; };
    auto mmCost = [&](int i) { return 0.8604 * double(widths[i]) / 128.0 *
                                      double(widths[i + 1]) / 128.0; };

    // Forward: what each layer read, and what its backward needs.
    std::vector<TensorId> input, relu, mask;
    TensorId h = x;
    for (int i = 0; i < layers; ++i) {
      const int64_t bytes = kBatch * widths[i + 1] * kF32;
      input.push_back(h);
      TensorId t = out(g.addView("aten.t", w[i], {g.tensors[w[i]].bytes}));
      TensorId a = out(g.addOp("aten.addmm", {b[i], h, t}, {bytes}, {},
                               mmCost(i)));
      if (i + 1 == layers) {
        h = a;
        break;
      }
      TensorId v = out(g.addOp("aten.relu_", {a}, {bytes}, {0}, 0.3372));
      OpId drop = g.addOp("aten.native_dropout", {v},
                          {bytes, kBatch * widths[i + 1]}, {}, 0.3793);
      g.ops[drop].isRandom = true;
      g.ops[drop].offset = uint64_t(i) * 65536;
      relu.push_back(v);
      mask.push_back(out(drop, 1));
      h = out(drop, 0);
    }
    const int64_t logitBytes = kBatch * widths.back() * kF32;
    TensorId logp =
        out(g.addOp("aten._log_softmax", {h}, {logitBytes}, {}, 0.0263));
    OpId nll = g.addOp("aten.nll_loss_forward", {logp, target}, {4, 4}, {},
                       0.0158);
    TensorId loss = out(nll);
    g.markStepOutput(loss);
    TensorId ones = out(g.addOp("aten.ones_like", {loss}, {4}, {}, 0.0));
    TensorId glogp =
        out(g.addOp("aten.nll_loss_backward", {ones, logp, target, out(nll, 1)},
                    {logitBytes}, {}, 0.0290));
    TensorId grad = out(g.addOp("aten._log_softmax_backward_data",
                                {glogp, logp}, {logitBytes}, {}, 0.0395));

    // Backward, last layer first.
    std::vector<TensorId> gw(layers), gb(layers);
    for (int i = layers - 1; i >= 0; --i) {
      TensorId gt =
          out(g.addView("aten.t", grad, {g.tensors[grad].bytes}));
      gw[i] = out(g.addOp("aten.mm", {gt, input[i]}, {g.tensors[w[i]].bytes},
                          {}, mmCost(i)));
      gb[i] = out(g.addOp("aten.sum.dim_IntList", {grad},
                          {g.tensors[b[i]].bytes}, {}, 0.1689));
      if (i == 0)
        break;
      const int64_t bytes = kBatch * widths[i] * kF32;
      TensorId gh = out(g.addOp("aten.mm", {grad, w[i]}, {bytes}, {},
                                mmCost(i)));
      TensorId gd = out(g.addOp("aten.native_dropout_backward",
                                {gh, mask[i - 1]}, {bytes}, {}, 0.3793));
      grad = out(g.addOp("aten.threshold_backward", {gd, relu[i - 1]},
                         {bytes}, {}, 0.5057));
    }

    // SGD with momentum, in place: m = 0.9 m + g; p -= lr m.
    auto update = [&](TensorId param, TensorId momentum, TensorId gradient) {
      const int64_t bytes = g.tensors[param].bytes;
      TensorId m = out(g.addOp("aten.mul_.Scalar", {momentum}, {bytes}, {0},
                               0.1));
      m = out(g.addOp("aten.add_.Tensor", {m, gradient}, {bytes}, {0}, 0.1));
      g.addOp("aten.add_.Tensor", {param, m}, {bytes}, {0}, 0.1);
    };
    for (int i = 0; i < layers; ++i) {
      update(w[i], wm[i], gw[i]);
      update(b[i], bm[i], gb[i]);
    }
    EXPECT_TRUE(g.finalize());
  }
};

/// The budget at `ratio` of the no-rematerialization arena, as coop-opt's
/// ratio option computes it.
int64_t budgetAt(const Graph &g, double ratio) {
  PlanOptions o;
  o.policy = Policy::None;
  int64_t noRemat = 0;
  EXPECT_OK(minimumBudget(g, o, &noRemat));
  return int64_t(ratio * double(noRemat));
}

// Before recomputation closures released what they brought back early and
// recomputed in-place ops consumed their recomputed operand, every policy
// needed about 0.72 of the no-remat arena (coop 0.719, dtr 0.756, dte 0.724);
// the floor is at 0.426.
TEST(MlpStep, EveryPolicyPlansNearTheFloor) {
  MlpStep m;
  PlanOptions o;
  o.budgetBytes = budgetAt(m.g, 0.52);
  for (Policy policy : {Policy::Coop, Policy::DTR, Policy::DTE}) {
    o.policy = policy;
    Plan p;
    EXPECT_OK(planAndVerify(m.g, o, &p));
    EXPECT_GT(p.stats.recomputeCount, 0);
  }
}

} // namespace
