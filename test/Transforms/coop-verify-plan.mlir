// RUN: coop-opt %s --split-input-file --coop-plan-memory="budget=8KiB" --coop-verify-plan | FileCheck %s

// A tensor with no elements still gets its own 512-byte slot, both when
// planned and when the verifier reads the plan back.
// CHECK-LABEL: func.func @empty_tensor
// CHECK: coop.compute "aten.empty.memory_format"() {{{.*}}offsets = array<i64: [[EMPTY:[0-9]+]]>} : () -> tensor<0x4xf32>
func.func @empty_tensor(%x: tensor<4xf32> {coop.role = #coop.role<input>}) -> tensor<4xf32> attributes {coop.step} {
  %e = coop.compute "aten.empty.memory_format"() : () -> tensor<0x4xf32>
  %y = coop.compute "aten.cat"(%e, %x) : (tensor<0x4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// fill_ writes through a slice of a fresh buffer: the new version takes over
// the whole 2 KiB buffer although it is a 512-byte view. The whole buffer is
// read again through an as_strided view of the new version, as the exporter
// writes it (reading %z itself would read the old version, forcing a copy).
// CHECK-LABEL: func.func @inplace_through_a_view
// CHECK: %[[Z:.*]] = coop.compute "aten.new_zeros"{{.*}}offsets = array<i64: [[BUF:[0-9]+]]>
// CHECK: %[[S:.*]] = coop.view "aten.slice.Tensor"(%[[Z]])
// CHECK: coop.compute "aten.fill_.Scalar"(%[[S]]) {{{.*}}offsets = array<i64: [[BUF]]>}
func.func @inplace_through_a_view(%x: tensor<4x128xf32> {coop.role = #coop.role<input>}) -> tensor<4x128xf32> attributes {coop.step} {
  %z = coop.compute "aten.new_zeros"(%x) : (tensor<4x128xf32>) -> tensor<4x128xf32>
  %s = coop.view "aten.slice.Tensor"(%z) {args = {dim = 0 : i64, start = 1 : i64, end = 2 : i64}} : (tensor<4x128xf32>) -> tensor<1x128xf32>
  %f = coop.compute "aten.fill_.Scalar"(%s) {args = {value = 1.0 : f64}, inplace = array<i64: 0>} : (tensor<1x128xf32>) -> tensor<1x128xf32>
  %whole = coop.view "aten.as_strided"(%f) {args = {size = [4, 128], stride = [128, 1], storage_offset = 0 : i64}} : (tensor<1x128xf32>) -> tensor<4x128xf32>
  %y = coop.compute "aten.add.Tensor"(%whole, %x) : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
  return %y : tensor<4x128xf32>
}
