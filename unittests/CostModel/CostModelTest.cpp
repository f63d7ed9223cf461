//===- CostModelTest.cpp - FLOPs and bytes on hand-computed shapes --------===//

#include "coop/CostModel/CostModel.h"

#include <gtest/gtest.h>

using namespace coop::cost;

namespace {

TensorShape f32(std::vector<int64_t> dims) { return {std::move(dims), "f32", 4}; }

const Device kTestDevice{"test", 1e12, 1e11}; // 1 TFLOP/s, 100 GB/s

TEST(CostModelTest, MatmulFlopsByHand) {
  // [64 x 128] x [128 x 32]: 64 * 32 outputs, each 128 multiply-adds.
  KernelCall mm{"aten.mm", {f32({64, 128}), f32({128, 32})}, {f32({64, 32})}};
  Cost cost = CostModel::analytic(mm);
  EXPECT_DOUBLE_EQ(cost.flops, 2.0 * 64 * 32 * 128);
  EXPECT_DOUBLE_EQ(cost.bytes, 4.0 * (64 * 128 + 128 * 32 + 64 * 32));

  // Batched: 8 independent products.
  KernelCall bmm{"aten.bmm", {f32({8, 64, 128}), f32({8, 128, 32})},
                 {f32({8, 64, 32})}};
  EXPECT_DOUBLE_EQ(CostModel::analytic(bmm).flops, 8 * 2.0 * 64 * 32 * 128);

  // addmm adds beta * self + alpha * product: two flops per output more.
  KernelCall addmm{"aten.addmm", {f32({32}), f32({64, 128}), f32({128, 32})},
                   {f32({64, 32})}};
  EXPECT_DOUBLE_EQ(CostModel::analytic(addmm).flops,
                   2.0 * 64 * 32 * 128 + 2.0 * 64 * 32);
}

TEST(CostModelTest, ConvolutionFlopsByHand) {
  // ResNet's first layer at batch 2: 3->64 channels, 7x7 filters, stride 2,
  // 224x224 -> 112x112. Each output element sums 3 * 7 * 7 products.
  TensorShape input = f32({2, 3, 224, 224});
  TensorShape weight = f32({64, 3, 7, 7});
  TensorShape output = f32({2, 64, 112, 112});
  KernelCall conv{"aten.convolution", {input, weight}, {output}};
  double forward = 2.0 * (2 * 64 * 112 * 112) * (3 * 7 * 7);
  EXPECT_DOUBLE_EQ(CostModel::analytic(conv).flops, forward);

  // Grouped (depthwise) convolution: weight [C, 1, 3, 3].
  KernelCall depthwise{"aten.convolution",
                       {f32({1, 32, 10, 10}), f32({32, 1, 3, 3})},
                       {f32({1, 32, 10, 10})}};
  EXPECT_DOUBLE_EQ(CostModel::analytic(depthwise).flops,
                   2.0 * (32 * 10 * 10) * 9);

  // Transposed: every input element scatters through one filter.
  KernelCall transposed{"aten.convolution",
                        {f32({1, 16, 8, 8}), f32({16, 8, 2, 2})},
                        {f32({1, 8, 16, 16})}};
  transposed.transposed = true;
  EXPECT_DOUBLE_EQ(CostModel::analytic(transposed).flops,
                   2.0 * (16 * 8 * 8) * (8 * 2 * 2));

  // Backward: the input and weight gradients each cost one forward.
  KernelCall backward{"aten.convolution_backward", {output, input, weight},
                      {input, weight}};
  EXPECT_DOUBLE_EQ(CostModel::analytic(backward).flops, 2 * forward);
}

TEST(CostModelTest, RooflinePicksTheSlowerBound) {
  CostModel model(kTestDevice);
  // Memory bound: relu over 1M floats reads and writes 8 MB -> 80 us.
  KernelCall relu{"aten.relu", {f32({1024, 1024})}, {f32({1024, 1024})}};
  EXPECT_DOUBLE_EQ(model.estimate(relu).microseconds, 8.0 * 1024 * 1024 / 1e5);
  // Compute bound: a 1024^3 matmul is 2.1 GFLOP -> 2147 us, above its
  // 12 MB / 100 GB/s = 126 us of traffic.
  KernelCall mm{"aten.mm", {f32({1024, 1024}), f32({1024, 1024})},
                {f32({1024, 1024})}};
  EXPECT_DOUBLE_EQ(model.estimate(mm).microseconds, 2.0 * 1024 * 1024 * 1024 / 1e6);
}

TEST(CostModelTest, ViewsCostNothing) {
  CostModel model(kTestDevice);
  KernelCall view{"aten.view", {f32({4, 4})}, {f32({16})}, /*isView=*/true};
  Cost cost = model.estimate(view);
  EXPECT_EQ(cost.flops, 0);
  EXPECT_EQ(cost.bytes, 0);
  EXPECT_EQ(cost.microseconds, 0);
}

TEST(CostModelTest, ProfileOverridesExactSignatureFirst) {
  ProfileTable profile;
  std::string error;
  ASSERT_TRUE(profile.parse("# measured on the test device\n"
                            "aten.mm 64x128xf32,128x32xf32 8.5\n"
                            "aten.mm * 100\n"
                            "\n"
                            "aten.relu_ *  0.25  # any shape\n",
                            error))
      << error;
  EXPECT_EQ(profile.size(), 3u);
  CostModel model(kTestDevice, profile);

  KernelCall exact{"aten.mm", {f32({64, 128}), f32({128, 32})}, {f32({64, 32})}};
  Cost cost = model.estimate(exact);
  EXPECT_TRUE(cost.fromProfile);
  EXPECT_DOUBLE_EQ(cost.microseconds, 8.5);
  EXPECT_DOUBLE_EQ(cost.flops, 2.0 * 64 * 32 * 128); // analytic figures kept

  KernelCall other{"aten.mm", {f32({2, 2}), f32({2, 2})}, {f32({2, 2})}};
  EXPECT_DOUBLE_EQ(model.estimate(other).microseconds, 100);

  KernelCall unlisted{"aten.relu", {f32({2})}, {f32({2})}};
  EXPECT_FALSE(model.estimate(unlisted).fromProfile);
}

TEST(CostModelTest, ProfileErrorsNameTheLine) {
  std::string error;
  ProfileTable missingTime;
  EXPECT_FALSE(missingTime.parse("aten.mm *\n", error));
  EXPECT_EQ(error, "line 1: expected 'kernel operand-signatures microseconds', "
                   "got 'aten.mm *'");
  ProfileTable negative;
  EXPECT_FALSE(negative.parse("# header\naten.mm * -3\n", error));
  EXPECT_EQ(error, "line 2: '-3' is not a non-negative time in microseconds");
  ProfileTable duplicate;
  EXPECT_FALSE(duplicate.parse("aten.mm * 1\naten.mm * 2\n", error));
  EXPECT_EQ(error, "line 2: a second entry for aten.mm *");
}

TEST(CostModelTest, BuiltInDevices) {
  std::optional<Device> a100 = lookupDevice("a100");
  ASSERT_TRUE(a100);
  EXPECT_DOUBLE_EQ(a100->peakFlopsPerSecond, 19.5e12);
  EXPECT_FALSE(lookupDevice("tpu"));
  EXPECT_EQ(deviceNames(), "a100, v100, h100, cpu");
}

} // namespace
