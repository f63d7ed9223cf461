// RUN: coop-opt %s --split-input-file --coop-compile="budget=4096" | FileCheck %s
// The pipeline forwards coop-plan-memory's options and rejects unknown ones.
// RUN: not coop-opt %s --split-input-file --coop-compile="budget=4096 bogus=1" 2>&1 | FileCheck %s --check-prefix=BOGUS
// BOGUS: no such option bogus

// The pipeline costs every op (cost_us on the launches; where from:
// coop-compile-costs.mlir).
// The old w is read after its in-place update, so the planner writes the
// update elsewhere (copy on write); the final version goes home at the end,
// where the next step expects the parameter.
// CHECK-LABEL: coop_rt.program @update_then_read_old arena(4096)
// CHECK: coop_rt.argument 0 "arg0" <parameter> <offset = 0,
// CHECK: coop_rt.launch "aten.sub_.Tensor"([#coop_rt.buf<offset = 0, {{.*}}>, {{.*}}]) -> ([#coop_rt.buf<offset = [[NEW:[0-9]+]], {{.*}}>]) {cost_us = {{.*}} : f64, inplace = array<i64: 0>}
// CHECK-NEXT: coop_rt.launch "aten.mul"([#coop_rt.buf<offset = 0,
// CHECK-NEXT: coop_rt.launch "coop.copy"([#coop_rt.buf<offset = [[NEW]], {{.*}}>]) -> ([#coop_rt.buf<offset = 0, {{.*}}>])
// CHECK-NEXT: coop_rt.output
func.func @update_then_read_old(%w: tensor<128xf32> {coop.role = #coop.role<parameter>},
                                %x: tensor<128xf32> {coop.role = #coop.role<input>})
    -> tensor<128xf32> attributes {coop.step} {
  %g = coop.compute "aten.sin"(%x) : (tensor<128xf32>) -> tensor<128xf32>
  %w1 = coop.compute "aten.sub_.Tensor"(%w, %g) {inplace = array<i64: 0>} : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
  %y = coop.compute "aten.mul"(%w, %x) : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
  return %y : tensor<128xf32>
}

// -----

// An in-place write through a view keeps the view's strides and element
// offset; updated in place, the parameter needs no copy home.
// CHECK-LABEL: coop_rt.program @inplace_through_a_slice
// CHECK: coop_rt.launch "aten.mul_.Scalar"([#coop_rt.buf<offset = 0, size = 512, element_type = f32, shape = [2, 16], strides = [16, 1], element_offset = 32>]) -> ([#coop_rt.buf<offset = 0, size = 512, element_type = f32, shape = [2, 16], strides = [16, 1], element_offset = 32>]) {args = {other = 2.000000e+00 : f64}, cost_us = {{.*}} : f64, inplace = array<i64: 0>}
// CHECK-NOT: coop.copy
// CHECK: coop_rt.output
func.func @inplace_through_a_slice(%w: tensor<8x16xf32> {coop.role = #coop.role<parameter>}) attributes {coop.step} {
  %rows = coop.view "aten.slice.Tensor"(%w) {args = {dim = 0 : i64, start = 2 : i64, end = 4 : i64}} : (tensor<8x16xf32>) -> tensor<2x16xf32>
  %scaled = coop.compute "aten.mul_.Scalar"(%rows) {args = {other = 2.0 : f64}, inplace = array<i64: 0>} : (tensor<2x16xf32>) -> tensor<2x16xf32>
  return
}

// -----

// Duplicates are merged before planning: the mask the two layers both build
// is built and launched once.
// CHECK-LABEL: coop_rt.program @mask_twice
// CHECK-COUNT-1: coop_rt.launch "aten.ones"
// CHECK-NOT: coop_rt.launch "aten.ones"
// CHECK: coop_rt.output
func.func @mask_twice(%x: tensor<4x4xf32> {coop.role = #coop.role<input>})
    -> tensor<4x4xf32> attributes {coop.step} {
  %m1 = coop.compute "aten.ones"() {args = {size = [4, 4]}} : () -> tensor<4x4xi1>
  %y1 = coop.compute "aten.masked_fill.Scalar"(%x, %m1) {args = {value = 0.0 : f64}} : (tensor<4x4xf32>, tensor<4x4xi1>) -> tensor<4x4xf32>
  %m2 = coop.compute "aten.ones"() {args = {size = [4, 4]}} : () -> tensor<4x4xi1>
  %y2 = coop.compute "aten.masked_fill.Scalar"(%y1, %m2) {args = {value = 0.0 : f64}} : (tensor<4x4xf32>, tensor<4x4xi1>) -> tensor<4x4xf32>
  return %y2 : tensor<4x4xf32>
}
