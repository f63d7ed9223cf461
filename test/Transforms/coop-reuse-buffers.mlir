// RUN: coop-opt %s --split-input-file --coop-reuse-buffers | FileCheck %s

// A linear layer on a 3-D input as torch traces it: the product's reshape
// becomes a view and the bias add overwrites it.
// CHECK-LABEL: func.func @linear
// CHECK: %[[MM:.*]] = coop.compute "aten.mm"
// CHECK: %[[V:.*]] = coop.view "aten._unsafe_view"(%[[MM]]) {args = {size = [2, 4, 6]}}
// CHECK: coop.compute "aten.add.Tensor"(%[[V]], %{{.*}}) {inplace = array<i64: 0>}
func.func @linear(%x: tensor<8x4xf32> {coop.role = #coop.role<input>},
                  %w: tensor<4x6xf32> {coop.role = #coop.role<parameter>},
                  %b: tensor<6xf32> {coop.role = #coop.role<parameter>})
    -> tensor<2x4x6xf32> attributes {coop.step} {
  %mm = coop.compute "aten.mm"(%x, %w) : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
  %v = coop.compute "aten._unsafe_view"(%mm) {args = {size = [2, 4, 6]}} : (tensor<8x6xf32>) -> tensor<2x4x6xf32>
  %y = coop.compute "aten.add.Tensor"(%v, %b) : (tensor<2x4x6xf32>, tensor<6xf32>) -> tensor<2x4x6xf32>
  return %y : tensor<2x4x6xf32>
}

// -----

// The operand is read again later: neither rewrite applies.
// CHECK-LABEL: func.func @read_again
// CHECK: coop.compute "aten._unsafe_view"
// CHECK: coop.compute "aten.mul.Tensor"(%{{.*}}, %{{.*}}) :
// CHECK-NOT: inplace
func.func @read_again(%x: tensor<8x4xf32> {coop.role = #coop.role<input>},
                      %w: tensor<4x6xf32> {coop.role = #coop.role<parameter>})
    -> (tensor<2x4x6xf32>, tensor<8x6xf32>) attributes {coop.step} {
  %mm = coop.compute "aten.mm"(%x, %w) : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
  %v = coop.compute "aten._unsafe_view"(%mm) {args = {size = [2, 4, 6]}} : (tensor<8x6xf32>) -> tensor<2x4x6xf32>
  %y = coop.compute "aten.mul.Tensor"(%v, %v) : (tensor<2x4x6xf32>, tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  return %y, %mm : tensor<2x4x6xf32>, tensor<8x6xf32>
}

// -----

// A step argument is persistent, and a broadcast first operand does not
// have the result's type: both stay out of place.
// CHECK-LABEL: func.func @not_dying
// CHECK: coop.compute "aten.sub.Tensor"(%arg0, %{{.*}}) :
// CHECK: coop.compute "aten.div.Tensor"(%{{.*}}, %{{.*}}) :
// CHECK-NOT: inplace
func.func @not_dying(%x: tensor<4x6xf32> {coop.role = #coop.role<input>},
                     %r: tensor<6xf32> {coop.role = #coop.role<input>})
    -> tensor<4x6xf32> attributes {coop.step} {
  %d = coop.compute "aten.sub.Tensor"(%x, %x) : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %e = coop.compute "aten.relu"(%r) : (tensor<6xf32>) -> tensor<6xf32>
  %q = coop.compute "aten.div.Tensor"(%e, %d) : (tensor<6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  return %q : tensor<4x6xf32>
}
