//===- PlanTestUtil.h - Shared helpers for planner tests --------*- C++ -*-===//
#ifndef COOP_UNITTESTS_PLANNER_PLANTESTUTIL_H
#define COOP_UNITTESTS_PLANNER_PLANTESTUTIL_H

#include "coop/Planner/GraphGenerator.h"
#include "coop/Planner/Plan.h"

#include <gtest/gtest.h>

#include <algorithm>

/// Like ASSERT_TRUE / EXPECT_TRUE on a Status, but print its message.
#define ASSERT_OK(expr)                                                        \
  do {                                                                         \
    ::coop::planner::Status status_ = (expr);                                  \
    ASSERT_TRUE(status_) << status_.message();                                 \
  } while (0)
#define EXPECT_OK(expr)                                                        \
  do {                                                                         \
    ::coop::planner::Status status_ = (expr);                                  \
    EXPECT_TRUE(status_) << status_.message();                                 \
  } while (0)

namespace coop::planner::testing {

/// Options for hand-built layouts: byte-exact (alignment 1) and one-ended,
/// so that the expected pictures are easy to derive.
inline PlanOptions byteOptions(Policy policy, int64_t budget) {
  PlanOptions o;
  o.policy = policy;
  o.budgetBytes = budget;
  o.alignment = 1;
  o.twoEndedPartitioning = false;
  return o;
}

using PlanFunction = Status (*)(const Graph &, const PlanOptions &, Plan *);

/// Plans (with plan(), or simulate() for tests of the simulator's own
/// placements) and, when planning succeeds, requires the independent
/// verifier to accept the plan. Returns the planner's status (gtest prints
/// its message).
inline Status planAndVerify(const Graph &graph, const PlanOptions &options,
                            Plan *out, PlanFunction planner = plan) {
  Status st = planner(graph, options, out);
  if (st) {
    Status verified = verifyPlan(graph, *out, options.budgetBytes);
    EXPECT_TRUE(verified) << policyName(options.policy) << " at "
                          << options.budgetBytes
                          << " bytes: " << verified.message();
  }
  return st;
}

/// The generated training steps the plan sweeps run over: 2 to
/// 1 + `layerSpread` layers as the seed goes, batch norm on every third.
inline Status sweepStep(uint64_t seed, int32_t layerSpread, Graph *out) {
  TrainingGraphShape shape;
  shape.layers = 2 + int32_t(seed % uint64_t(layerSpread));
  shape.batchNormProbability = seed % 3 == 0 ? 0.5 : 0.0;
  return generateTrainingGraph(seed, shape, out);
}

/// The values evicted, in order, between the start of the plan and the
/// instruction that runs `op`.
inline std::vector<TensorId> evictedBeforeRun(const Plan &plan, OpId op) {
  std::vector<TensorId> evicted;
  for (const Instruction &ins : plan.instructions) {
    if (ins.kind == InstructionKind::Run && ins.op == op)
      break;
    if (ins.kind == InstructionKind::Evict)
      evicted.push_back(ins.tensor);
  }
  return evicted;
}

/// A recurrent step in the BiLSTM's shape: one projection of the whole
/// input sequence (expensive, `steps` slices read through views), then per
/// step a gate from its slice and the previous state, saved for the
/// backward, which reads the gates in reverse order. The projection's
/// last read is the forward's last gate; rebuilding a gate in the backward
/// needs it back. With `stackStates`, one op (the BiLSTM's `stack` of
/// hidden states) reads every state at the forward's end, and the backward
/// starts from its result and reads the gates only.
struct RecurrentStep {
  Graph graph;
  OpId projection = kNone;
};
inline Status recurrentStep(int steps, RecurrentStep *out,
                            bool stackStates = false) {
  Graph &g = out->graph;
  constexpr int64_t kSlice = 4096;
  const TensorId input = g.addArgument("x", 512, TensorRole::Input);
  const TensorId weight = g.addArgument("w", 512, TensorRole::Parameter);
  out->projection = g.addOp("aten.mm", {input, weight}, {steps * kSlice}, {},
                            /*costUs=*/200.0);
  const TensorId projected = g.ops[out->projection].outputs[0];
  const OpId unbind = g.addView("aten.unbind.int", projected,
                                std::vector<int64_t>(steps, kSlice));
  std::vector<TensorId> gates, states;
  TensorId state = g.ops[g.addOp("aten.zeros", {}, {kSlice})].outputs[0];
  states.push_back(state);
  for (int t = 0; t < steps; ++t) {
    const TensorId gate =
        g.ops[g.addOp("aten.sigmoid", {g.ops[unbind].outputs[t], state},
                      {kSlice}, {}, 2.0)]
            .outputs[0];
    state = g.ops[g.addOp("aten.mul.Tensor", {gate, state}, {kSlice}, {}, 2.0)]
                .outputs[0];
    gates.push_back(gate);
    states.push_back(state);
  }
  if (stackStates)
    state = g.ops[g.addOp("aten.stack", {states.begin() + 1, states.end()},
                          {steps * kSlice}, {}, 4.0)]
                .outputs[0];
  TensorId grad =
      g.ops[g.addOp("aten.sum", {state}, {kSlice}, {}, 2.0)].outputs[0];
  for (int t = steps - 1; t >= 0; --t) {
    std::vector<TensorId> saved = {grad, gates[t]};
    if (!stackStates)
      saved.push_back(states[t]);
    grad = g.ops[g.addOp("aten.sigmoid_backward", saved, {kSlice}, {}, 2.0)]
               .outputs[0];
  }
  const TensorId weightGrad =
      g.ops[g.addOp("aten.mm", {grad, input}, {512}, {}, 2.0)].outputs[0];
  g.markStepOutput(weightGrad);
  return g.finalize();
}

/// How many times `plan` recomputes `op`.
inline int64_t recomputationsOf(const Plan &plan, OpId op) {
  return std::count_if(plan.instructions.begin(), plan.instructions.end(),
                       [&](const Instruction &ins) {
                         return ins.kind == InstructionKind::Recompute &&
                                ins.op == op;
                       });
}

inline const Instruction *findRun(const Plan &plan, OpId op) {
  auto it = std::find_if(plan.instructions.begin(), plan.instructions.end(),
                         [&](const Instruction &ins) {
                           return ins.kind == InstructionKind::Run &&
                                  ins.op == op;
                         });
  return it == plan.instructions.end() ? nullptr : &*it;
}

inline bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

} // namespace coop::planner::testing

#endif // COOP_UNITTESTS_PLANNER_PLANTESTUTIL_H
