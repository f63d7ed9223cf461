// RUN: coop-opt %s --split-input-file --coop-materialize-views | FileCheck %s
// RUN: coop-opt %s --split-input-file --coop-materialize-views --coop-compile="ratio=1 policy=none" | FileCheck %s --check-prefix=LOWERED

// A transposed 2x3 has no flat view: the reshape becomes a copy, and the
// whole step then compiles.
// CHECK-LABEL: func.func @transposed_then_flattened
// CHECK: %[[T:.*]] = coop.view "aten.t"(%{{.*}}) : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK: coop.compute "aten.reshape"(%[[T]]) {args = {size = [6], stride = [1]}} : (tensor<3x2xf32>) -> tensor<6xf32>
// LOWERED-LABEL: coop_rt.program @transposed_then_flattened
// LOWERED: coop_rt.launch "aten.reshape"
func.func @transposed_then_flattened(%x: tensor<2x3xf32> {coop.role = #coop.role<input>})
    -> tensor<6xf32> attributes {coop.step} {
  %y = coop.compute "aten.mul.Tensor"(%x, %x) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %t = coop.view "aten.t"(%y) : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %r = coop.view "aten._reshape_alias"(%t) {args = {size = [6], stride = [1]}} : (tensor<3x2xf32>) -> tensor<6xf32>
  %s = coop.compute "aten.relu"(%r) : (tensor<6xf32>) -> tensor<6xf32>
  return %s : tensor<6xf32>
}

// -----

// A reshape the layout allows stays a view.
// CHECK-LABEL: func.func @contiguous_reshape
// CHECK: coop.view "aten.view"
// CHECK-NOT: aten.reshape
func.func @contiguous_reshape(%x: tensor<2x3xf32> {coop.role = #coop.role<input>})
    -> tensor<6xf32> attributes {coop.step} {
  %y = coop.compute "aten.mul.Tensor"(%x, %x) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %r = coop.view "aten.view"(%y) {args = {size = [6]}} : (tensor<2x3xf32>) -> tensor<6xf32>
  %s = coop.compute "aten.relu"(%r) : (tensor<6xf32>) -> tensor<6xf32>
  return %s : tensor<6xf32>
}
