//===- GraphTest.cpp - Graph validation and liveness figures --------------===//

#include "coop/Planner/Graph.h"

#include <gtest/gtest.h>

using namespace coop::planner;

namespace {

// w (param, 100 B), x (input, 40 B)
// a = matmul(x, w)      60 B
// b = relu_(a)          in place on a
// v = view(b)           aliases a's storage
// l = loss(v)           4 B, step output
// g = grad(l, x)        100 B, consumed by the update
// w' = sub_(w, g)       in place on w
struct SmallStep {
  Graph g;
  TensorId w, x, a, b, v, l, grad, w1;
  SmallStep() {
    w = g.addArgument("w", 100, TensorRole::Parameter);
    x = g.addArgument("x", 40, TensorRole::Input);
    a = g.ops[g.addOp("aten.mm", {x, w}, {60})].outputs[0];
    b = g.ops[g.addOp("aten.relu_", {a}, {60}, {0})].outputs[0];
    v = g.ops[g.addView("aten.view", b, {60})].outputs[0];
    l = g.ops[g.addOp("aten.loss", {v}, {4})].outputs[0];
    grad = g.ops[g.addOp("aten.grad", {l, x}, {100}, {}, 1.0, 16)].outputs[0];
    w1 = g.ops[g.addOp("aten.sub_", {w, grad}, {100}, {0})].outputs[0];
    g.markStepOutput(l);
  }
};

TEST(Graph, StorageFollowsViewsAndVersions) {
  SmallStep s;
  ASSERT_TRUE(s.g.finalize()) << s.g.finalize().message();
  EXPECT_EQ(s.g.storageOf(s.v), s.a);
  EXPECT_EQ(s.g.storageOf(s.b), s.a);
  EXPECT_EQ(s.g.storageOf(s.w1), s.w);
  EXPECT_TRUE(s.g.isPersistent(s.w1));
  EXPECT_FALSE(s.g.isPersistent(s.v));
  EXPECT_EQ(s.g.tensors[s.a].consumers, std::vector<OpId>({1}));
}

// Two 2^62-byte parameters: their sum would wrap every figure the planner
// computes, so the graph is refused as a whole.
TEST(Graph, RefusesStepsLargerThanThePlannerHandles) {
  Graph g;
  TensorId w = g.addArgument("w", int64_t(1) << 62, TensorRole::Parameter);
  TensorId v = g.addArgument("v", int64_t(1) << 62, TensorRole::Parameter);
  g.markStepOutput(g.ops[g.addOp("aten.add", {w, v}, {4})].outputs[0]);
  Status status = g.finalize();
  ASSERT_FALSE(status);
  EXPECT_NE(status.message().find("total more than 2^62 bytes"),
            std::string::npos)
      << status.message();
}

TEST(Graph, MemoryStatsByHand) {
  SmallStep s;
  ASSERT_TRUE(s.g.finalize());
  MemoryStats stats = computeMemoryStats(s.g);
  EXPECT_EQ(stats.opCount, 6);
  EXPECT_EQ(stats.tensorCount, 8);
  EXPECT_EQ(stats.storageCount, 5); // w, x, a, l, grad
  EXPECT_EQ(stats.persistentBytes, 140);
  // Live transient storages per op: mm {a}=60, relu_ {a}=60, view {a}=60,
  // loss {a,l}=64, grad {l,grad}+16 ws=120, sub_ {l,grad}=104.
  EXPECT_EQ(stats.peakLiveBytes, 140 + 120);
  EXPECT_EQ(stats.peakOp, 4);
  // Working sets: loss {a,l}=64, grad {l,grad}+16=120, sub_ {grad}=100.
  EXPECT_EQ(stats.floorBytes, 140 + 120);
  EXPECT_EQ(stats.floorOp, 4);
}

TEST(Graph, RejectsUseBeforeDefinition) {
  Graph g;
  TensorId x = g.addArgument("x", 4, TensorRole::Input);
  g.addOp("aten.relu", {x}, {4});
  g.addOp("aten.neg", {x}, {4});
  g.ops[0].inputs[0] = g.ops[1].outputs[0];
  Status st = g.finalize();
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("before it is produced"), std::string::npos)
      << st.message();
}

TEST(Graph, RejectsInPlaceSizeMismatch) {
  Graph g;
  TensorId x = g.addArgument("x", 8, TensorRole::Input);
  g.addOp("aten.add_", {x}, {4}, {0});
  Status st = g.finalize();
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("overwrites tensor 'x' of 8 bytes"),
            std::string::npos)
      << st.message();
}

TEST(Graph, RejectsInPlaceTargetOutOfRange) {
  Graph g;
  TensorId x = g.addArgument("x", 8, TensorRole::Input);
  g.addOp("aten.add_", {x}, {8}, {3});
  Status st = g.finalize();
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("not an operand"), std::string::npos)
      << st.message();
}

TEST(Graph, RejectsArgumentWithoutRole) {
  Graph g;
  g.addArgument("x", 8, TensorRole::Activation);
  Status st = g.finalize();
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("has no role"), std::string::npos);
}

TEST(Graph, RejectsDoubleOverwrite) {
  Graph g;
  TensorId x = g.addArgument("x", 8, TensorRole::Input);
  g.addOp("aten.weird_", {x, x}, {8, 8}, {0, 1});
  Status st = g.finalize();
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("twice"), std::string::npos) << st.message();
}

} // namespace
