//===- StepGraphTest.cpp - IR to planner graph adaptation -----------------===//

#include "coop/Analysis/StepGraph.h"
#include "coop/Dialect/Coop/IR/CoopOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::coop;

namespace {

class StepGraphTest : public ::testing::Test {
protected:
  StepGraphTest() { context.loadDialect<CoopDialect, func::FuncDialect>(); }

  func::FuncOp parseStep(llvm::StringRef source) {
    module = parseSourceString<ModuleOp>(source, &context);
    if (!module)
      return nullptr;
    return *module->getOps<func::FuncOp>().begin();
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(StepGraphTest, MapsRolesViewsVersionsAndRandomOps) {
  func::FuncOp func = parseStep(R"mlir(
    func.func @step(%w: tensor<4x8xf32> {coop.role = #coop.role<parameter>},
                    %m: tensor<4x8xf32> {coop.role = #coop.role<optimizer_state>},
                    %x: tensor<2x4xf16> {coop.role = #coop.role<input>})
        -> tensor<f32> attributes {coop.step} {
      %h = coop.compute "aten.mm"(%x, %w) {cost_us = 2.5 : f64, workspace_bytes = 64 : i64}
          : (tensor<2x4xf16>, tensor<4x8xf32>) -> tensor<2x8xf32>
      %r = coop.compute "aten.relu_"(%h) {inplace = array<i64: 0>}
          : (tensor<2x8xf32>) -> tensor<2x8xf32>
      %d:2 = coop.compute "aten.native_dropout"(%r)
          {rng = #coop.rng<seed = 7, offset = 96>}
          : (tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xi1>)
      %v = coop.view "aten.view"(%d#0) : (tensor<2x8xf32>) -> tensor<16xf32>
      %l = coop.compute "aten.sum"(%v) : (tensor<16xf32>) -> tensor<f32>
      return %l : tensor<f32>
    })mlir");
  ASSERT_TRUE(func);
  StepGraph step(func);
  ASSERT_TRUE(step.isValid()) << step.getError();
  const planner::Graph &graph = step.getGraph();

  ASSERT_EQ(graph.ops.size(), 5u);
  EXPECT_EQ(graph.tensors[0].role, planner::TensorRole::Parameter);
  EXPECT_EQ(graph.tensors[1].role, planner::TensorRole::OptimizerState);
  EXPECT_EQ(graph.tensors[2].role, planner::TensorRole::Input);
  EXPECT_EQ(graph.tensors[2].bytes, 2 * 4 * 2);

  const planner::Op &mm = graph.ops[0];
  EXPECT_EQ(mm.name, "aten.mm");
  EXPECT_DOUBLE_EQ(mm.costUs, 2.5);
  EXPECT_EQ(mm.workspaceBytes, 64);

  planner::TensorId h = mm.outputs[0];
  planner::TensorId r = graph.ops[1].outputs[0];
  EXPECT_EQ(graph.tensors[r].previousVersion, h);
  EXPECT_EQ(graph.storageOf(r), h);

  const planner::Op &dropout = graph.ops[2];
  EXPECT_TRUE(dropout.isRandom);
  EXPECT_EQ(dropout.seed, 7u);
  EXPECT_EQ(dropout.offset, 96u);
  EXPECT_EQ(graph.tensors[dropout.outputs[1]].bytes, 16); // i1 is one byte

  const planner::Op &view = graph.ops[3];
  EXPECT_TRUE(view.isView);
  EXPECT_EQ(graph.storageOf(view.outputs[0]), dropout.outputs[0]);

  planner::TensorId loss = graph.ops[4].outputs[0];
  EXPECT_TRUE(graph.tensors[loss].isStepOutput);
  EXPECT_EQ(step.getTensorId(func.front().getTerminator()->getOperand(0)),
            loss);
  EXPECT_EQ(step.getOperation(4)->getName().getStringRef(), "coop.compute");
}

TEST(CoopTypes, ByteSizes) {
  MLIRContext context;
  Builder b(&context);
  auto size = [&](ArrayRef<int64_t> shape, Type element) {
    return getTensorByteSize(RankedTensorType::get(shape, element));
  };
  EXPECT_EQ(*size({3, 5}, b.getF32Type()), 60);
  EXPECT_EQ(*size({3, 5}, b.getBF16Type()), 30);
  EXPECT_EQ(*size({7}, b.getI1Type()), 7);
  EXPECT_EQ(*size({2}, ComplexType::get(b.getF64Type())), 32);
  EXPECT_EQ(*size({}, b.getI64Type()), 8);
  EXPECT_EQ(*size({0, 9}, b.getF32Type()), 0);
  EXPECT_TRUE(failed(size({ShapedType::kDynamic}, b.getF32Type())));
  EXPECT_TRUE(failed(size({1LL << 40, 1LL << 40}, b.getF32Type())));
}

TEST(CoopKernels, RandomKernelsAreRecognisedWithOverloads) {
  EXPECT_TRUE(isRandomKernel("aten.native_dropout"));
  EXPECT_TRUE(isRandomKernel("aten.bernoulli_.float"));
  EXPECT_TRUE(isRandomKernel("aten.randn_like"));
  EXPECT_FALSE(isRandomKernel("aten.relu"));
  EXPECT_FALSE(isRandomKernel("aten.dropout_backward"));
}

} // namespace
