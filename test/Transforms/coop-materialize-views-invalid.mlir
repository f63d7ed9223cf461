// RUN: coop-opt %s --coop-materialize-views --coop-compile="ratio=1 policy=none" -verify-diagnostics

// Written through in place: a copy would not see the write, so the reshape
// stays a view, and the lowering reports that it cannot lay it out.
func.func @written_through(%x: tensor<2x3xf32> {coop.role = #coop.role<input>})
    -> tensor<2x3xf32> attributes {coop.step} {
  %y = coop.compute "aten.mul.Tensor"(%x, %x) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %t = coop.view "aten.t"(%y) : (tensor<2x3xf32>) -> tensor<3x2xf32>
  // expected-error @+1 {{cannot lay out view 'aten.view': the source's strides do not allow this shape without a copy}}
  %r = coop.view "aten.view"(%t) {args = {size = [6]}} : (tensor<3x2xf32>) -> tensor<6xf32>
  %z = coop.compute "aten.relu_"(%r) {inplace = array<i64: 0>} : (tensor<6xf32>) -> tensor<6xf32>
  %w = coop.compute "aten.add.Tensor"(%y, %y) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %w : tensor<2x3xf32>
}
