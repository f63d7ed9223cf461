// RUN: coop-opt %s --split-input-file --coop-merge-duplicates | FileCheck %s

// A causal mask built in two layers: the second chain collapses onto the
// first op by op, and the first op's cost is kept.
// CHECK-LABEL: func.func @mask_per_layer
// CHECK: %[[ONES:.*]] = coop.compute "aten.ones"() {args = {size = [4, 4]}, cost_us = 1.000000e+00 : f64}
// CHECK-NEXT: %[[TRIL:.*]] = coop.compute "aten.tril"(%[[ONES]])
// CHECK-NEXT: %[[MASK:.*]] = coop.compute "aten.bitwise_not"(%[[TRIL]])
// CHECK-NEXT: %[[Y1:.*]] = coop.compute "aten.masked_fill.Scalar"(%arg0, %[[MASK]])
// CHECK-NEXT: %[[Y2:.*]] = coop.compute "aten.masked_fill.Scalar"(%[[Y1]], %[[MASK]])
// CHECK-NEXT: return %[[Y2]]
func.func @mask_per_layer(%x: tensor<4x4xf32> {coop.role = #coop.role<input>})
    -> tensor<4x4xf32> attributes {coop.step} {
  %o1 = coop.compute "aten.ones"() {args = {size = [4, 4]}, cost_us = 1.0 : f64} : () -> tensor<4x4xi1>
  %t1 = coop.compute "aten.tril"(%o1) : (tensor<4x4xi1>) -> tensor<4x4xi1>
  %m1 = coop.compute "aten.bitwise_not"(%t1) : (tensor<4x4xi1>) -> tensor<4x4xi1>
  %y1 = coop.compute "aten.masked_fill.Scalar"(%x, %m1) {args = {value = 0.0 : f64}} : (tensor<4x4xf32>, tensor<4x4xi1>) -> tensor<4x4xf32>
  %o2 = coop.compute "aten.ones"() {args = {size = [4, 4]}, cost_us = 2.0 : f64} : () -> tensor<4x4xi1>
  %t2 = coop.compute "aten.tril"(%o2) : (tensor<4x4xi1>) -> tensor<4x4xi1>
  %m2 = coop.compute "aten.bitwise_not"(%t2) : (tensor<4x4xi1>) -> tensor<4x4xi1>
  %y2 = coop.compute "aten.masked_fill.Scalar"(%y1, %m2) {args = {value = 0.0 : f64}} : (tensor<4x4xf32>, tensor<4x4xi1>) -> tensor<4x4xf32>
  return %y2 : tensor<4x4xf32>
}

// -----

// Identical views of one source are one view, and so are the computations
// that read them; a view with other args is another tensor.
// CHECK-LABEL: func.func @views
// CHECK: %[[T:.*]] = coop.view "aten.t"(%arg0)
// CHECK-NEXT: %[[E:.*]] = coop.compute "aten.exp"(%[[T]])
// CHECK-NEXT: %[[V:.*]] = coop.view "aten.view"(%arg0) {args = {size = [2, 8]}}
// CHECK-NEXT: %[[W:.*]] = coop.view "aten.view"(%arg0) {args = {size = [8, 2]}}
// CHECK-NEXT: %[[S:.*]] = coop.compute "aten.mul.Tensor"(%[[E]], %[[E]])
// CHECK-NEXT: return %[[S]], %[[V]], %[[W]]
func.func @views(%x: tensor<4x4xf32> {coop.role = #coop.role<input>})
    -> (tensor<4x4xf32>, tensor<2x8xf32>, tensor<8x2xf32>) attributes {coop.step} {
  %t1 = coop.view "aten.t"(%x) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %e1 = coop.compute "aten.exp"(%t1) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %t2 = coop.view "aten.t"(%x) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %e2 = coop.compute "aten.exp"(%t2) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %v = coop.view "aten.view"(%x) {args = {size = [2, 8]}} : (tensor<4x4xf32>) -> tensor<2x8xf32>
  %w = coop.view "aten.view"(%x) {args = {size = [8, 2]}} : (tensor<4x4xf32>) -> tensor<8x2xf32>
  %s = coop.compute "aten.mul.Tensor"(%e1, %e2) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %s, %v, %w : tensor<4x4xf32>, tensor<2x8xf32>, tensor<8x2xf32>
}

// -----

// A later in-place write to either op's result would leave the merged
// tensor read after it was overwritten: written results are never merged,
// whether the first or the later copy is written, directly or through a
// view. The two unwritten copies still merge with each other.
// CHECK-LABEL: func.func @written_in_place
// CHECK: %[[A:.*]] = coop.compute "aten.exp"(%arg0)
// CHECK-NEXT: %[[RA:.*]] = coop.compute "aten.relu_"(%[[A]]) {inplace = array<i64: 0>}
// CHECK-NEXT: %[[B:.*]] = coop.compute "aten.exp"(%arg0)
// CHECK-NEXT: %[[S:.*]] = coop.compute "aten.add.Tensor"(%[[A]], %[[B]])
// CHECK-NEXT: %[[C:.*]] = coop.compute "aten.exp"(%arg0)
// CHECK-NEXT: %[[CV:.*]] = coop.view "aten.view"(%[[C]])
// CHECK-NEXT: %[[RC:.*]] = coop.compute "aten.relu_"(%[[CV]]) {inplace = array<i64: 0>}
// CHECK-NEXT: %[[T:.*]] = coop.compute "aten.add.Tensor"(%[[S]], %[[B]])
// CHECK-NEXT: return %[[RA]], %[[RC]], %[[T]]
func.func @written_in_place(%x: tensor<16xf32> {coop.role = #coop.role<input>})
    -> (tensor<16xf32>, tensor<4x4xf32>, tensor<16xf32>) attributes {coop.step} {
  %a = coop.compute "aten.exp"(%x) : (tensor<16xf32>) -> tensor<16xf32>
  %ra = coop.compute "aten.relu_"(%a) {inplace = array<i64: 0>} : (tensor<16xf32>) -> tensor<16xf32>
  %b = coop.compute "aten.exp"(%x) : (tensor<16xf32>) -> tensor<16xf32>
  %s = coop.compute "aten.add.Tensor"(%a, %b) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %c = coop.compute "aten.exp"(%x) : (tensor<16xf32>) -> tensor<16xf32>
  %cv = coop.view "aten.view"(%c) {args = {size = [4, 4]}} : (tensor<16xf32>) -> tensor<4x4xf32>
  %rc = coop.compute "aten.relu_"(%cv) {inplace = array<i64: 0>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %d = coop.compute "aten.exp"(%x) : (tensor<16xf32>) -> tensor<16xf32>
  %t = coop.compute "aten.add.Tensor"(%s, %d) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %ra, %rc, %t : tensor<16xf32>, tensor<4x4xf32>, tensor<16xf32>
}

// -----

// A view whose storage is written in place stays its own view.
// CHECK-LABEL: func.func @view_written
// CHECK: %[[E:.*]] = coop.compute "aten.exp"(%arg0)
// CHECK-NEXT: %[[V1:.*]] = coop.view "aten.view"(%[[E]])
// CHECK-NEXT: %[[V2:.*]] = coop.view "aten.view"(%[[E]])
// CHECK-NEXT: %[[R:.*]] = coop.compute "aten.relu_"(%[[V2]]) {inplace = array<i64: 0>}
// CHECK-NEXT: %[[N:.*]] = coop.compute "aten.neg"(%[[V1]])
func.func @view_written(%x: tensor<16xf32> {coop.role = #coop.role<input>})
    -> (tensor<4x4xf32>, tensor<4x4xf32>) attributes {coop.step} {
  %e = coop.compute "aten.exp"(%x) : (tensor<16xf32>) -> tensor<16xf32>
  %v1 = coop.view "aten.view"(%e) {args = {size = [4, 4]}} : (tensor<16xf32>) -> tensor<4x4xf32>
  %v2 = coop.view "aten.view"(%e) {args = {size = [4, 4]}} : (tensor<16xf32>) -> tensor<4x4xf32>
  %r = coop.compute "aten.relu_"(%v2) {inplace = array<i64: 0>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %n = coop.compute "aten.neg"(%v1) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r, %n : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// Random kernels draw a new mask each time, even with the same key; in-place
// kernels, aten names with a trailing '_' and result-less ops write
// something: none of them is merged.
// CHECK-LABEL: func.func @not_computations
// CHECK-COUNT-2: coop.compute "aten.native_dropout"
// CHECK-COUNT-2: coop.compute "aten.rand"
// CHECK-COUNT-2: coop.compute "aten.add_.Tensor"
// CHECK-COUNT-2: coop.compute "aten.fill_.Scalar"
// CHECK-COUNT-2: coop.compute "test.record"
func.func @not_computations(%x: tensor<8xf32> {coop.role = #coop.role<input>},
                            %p: tensor<8xf32> {coop.role = #coop.role<parameter>})
    -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>,
        tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) attributes {coop.step} {
  %d1:2 = coop.compute "aten.native_dropout"(%x) {args = {p = 5.000000e-01 : f64, train = true}, rng = #coop.rng<seed = 1, offset = 0>} : (tensor<8xf32>) -> (tensor<8xf32>, tensor<8xi1>)
  %d2:2 = coop.compute "aten.native_dropout"(%x) {args = {p = 5.000000e-01 : f64, train = true}, rng = #coop.rng<seed = 1, offset = 0>} : (tensor<8xf32>) -> (tensor<8xf32>, tensor<8xi1>)
  %r1 = coop.compute "aten.rand"() {args = {size = [8]}, rng = #coop.rng<seed = 1, offset = 8>} : () -> tensor<8xf32>
  %r2 = coop.compute "aten.rand"() {args = {size = [8]}, rng = #coop.rng<seed = 1, offset = 8>} : () -> tensor<8xf32>
  %a1 = coop.compute "aten.add_.Tensor"(%p, %x) {inplace = array<i64: 0>} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %a2 = coop.compute "aten.add_.Tensor"(%p, %x) {inplace = array<i64: 0>} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %f1 = coop.compute "aten.fill_.Scalar"(%x) {args = {value = 0.0 : f64}} : (tensor<8xf32>) -> tensor<8xf32>
  %f2 = coop.compute "aten.fill_.Scalar"(%x) {args = {value = 0.0 : f64}} : (tensor<8xf32>) -> tensor<8xf32>
  coop.compute "test.record"(%x) : (tensor<8xf32>) -> ()
  coop.compute "test.record"(%x) : (tensor<8xf32>) -> ()
  return %d1#0, %d2#0, %r1, %r2, %a1, %a2, %f1, %f2 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// Different args, operands or result types are different computations.
// CHECK-LABEL: func.func @not_identical
// CHECK-COUNT-2: coop.compute "aten.sum.dim_IntList"(%arg0)
// CHECK: coop.compute "aten.sum.dim_IntList"(%arg1)
// CHECK: coop.compute "aten.ones"() {{.*}} -> tensor<4xf32>
// CHECK: coop.compute "aten.ones"() {{.*}} -> tensor<4xf16>
func.func @not_identical(%x: tensor<4x4xf32> {coop.role = #coop.role<input>},
                         %y: tensor<4x4xf32> {coop.role = #coop.role<input>})
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf16>) attributes {coop.step} {
  %a = coop.compute "aten.sum.dim_IntList"(%x) {args = {dim = [0]}} : (tensor<4x4xf32>) -> tensor<4xf32>
  %b = coop.compute "aten.sum.dim_IntList"(%x) {args = {dim = [1]}} : (tensor<4x4xf32>) -> tensor<4xf32>
  %c = coop.compute "aten.sum.dim_IntList"(%y) {args = {dim = [0]}} : (tensor<4x4xf32>) -> tensor<4xf32>
  %o = coop.compute "aten.ones"() {args = {size = [4]}} : () -> tensor<4xf32>
  %h = coop.compute "aten.ones"() {args = {size = [4]}} : () -> tensor<4xf16>
  return %a, %b, %c, %o, %h : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf16>
}

// -----

// Two step outputs stay two tensors; a copy that only one output reads
// merges.
// CHECK-LABEL: func.func @outputs
// CHECK: %[[A:.*]] = coop.compute "aten.exp"(%arg0)
// CHECK-NEXT: %[[B:.*]] = coop.compute "aten.exp"(%arg0)
// CHECK-NEXT: %[[S:.*]] = coop.compute "aten.sin"(%[[A]])
// CHECK-NEXT: return %[[A]], %[[B]], %[[S]]
func.func @outputs(%x: tensor<8xf32> {coop.role = #coop.role<input>})
    -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) attributes {coop.step} {
  %a = coop.compute "aten.exp"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %b = coop.compute "aten.exp"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %c = coop.compute "aten.exp"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %s = coop.compute "aten.sin"(%c) : (tensor<8xf32>) -> tensor<8xf32>
  return %a, %b, %s : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// Functions that are not training steps are left alone.
// CHECK-LABEL: func.func @not_a_step
// CHECK-COUNT-2: coop.compute "aten.exp"
func.func @not_a_step(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %a = coop.compute "aten.exp"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %b = coop.compute "aten.exp"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  return %a, %b : tensor<8xf32>, tensor<8xf32>
}
