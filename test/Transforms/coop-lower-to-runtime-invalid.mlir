// RUN: coop-opt %s --split-input-file --coop-lower-to-runtime --verify-diagnostics

// expected-error@+1 {{cannot lower @unplanned: it is not planned; run --coop-plan-memory first}}
func.func @unplanned(%x: tensor<4xf32> {coop.role = #coop.role<input>}) attributes {coop.step} {
  return
}

// -----

func.func @unknown_view(%x: tensor<4x8xf32> {coop.offset = 0 : i64, coop.role = #coop.role<input>})
    attributes {coop.plan = {budget = 2048 : i64, policy = "coop"}, coop.step} {
  // expected-error@+1 {{'coop.view' op cannot lay out view 'aten.diagonal': unknown view kernel}}
  %d = coop.view "aten.diagonal"(%x) : (tensor<4x8xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @reshape_needs_copy(%x: tensor<4x8xf32> {coop.offset = 0 : i64, coop.role = #coop.role<input>})
    attributes {coop.plan = {budget = 2048 : i64, policy = "coop"}, coop.step} {
  %t = coop.view "aten.t"(%x) : (tensor<4x8xf32>) -> tensor<8x4xf32>
  // expected-error@+1 {{'coop.view' op cannot lay out view 'aten.view': the source's strides do not allow this shape without a copy}}
  %v = coop.view "aten.view"(%t) : (tensor<8x4xf32>) -> tensor<32xf32>
  return
}

// -----

// expected-error@+1 {{argument #0 of a planned step has no 'coop.offset'}}
func.func @argument_without_offset(%x: tensor<4xf32> {coop.role = #coop.role<input>})
    attributes {coop.plan = {budget = 2048 : i64, policy = "coop"}, coop.step} {
  return
}

// -----

func.func @compute_without_offsets(%x: tensor<4xf32> {coop.offset = 0 : i64, coop.role = #coop.role<input>})
    attributes {coop.plan = {budget = 2048 : i64, policy = "coop"}, coop.step} {
  // expected-error@+1 {{'coop.compute' op has no 'offsets'; run --coop-plan-memory first}}
  %y = coop.compute "aten.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

// What the lowering writes must parse back: a view reading past its
// storage is refused where the view is, not printed as a bad #coop_rt.buf.
func.func @view_past_storage(%x: tensor<4xf32> {coop.offset = 0 : i64, coop.role = #coop.role<input>})
    attributes {coop.plan = {budget = 2048 : i64, policy = "coop"}, coop.step} {
  // expected-error@+1 {{cannot lower a value of type 'tensor<8xf32>': buffer reads element 7, past the end of its 16-byte storage}}
  %e = coop.view "aten.as_strided"(%x) {args = {size = [8], stride = [1]}} : (tensor<4xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @expand_past_storage(%x: tensor<4xf32> {coop.offset = 0 : i64, coop.role = #coop.role<input>})
    attributes {coop.plan = {budget = 2048 : i64, policy = "coop"}, coop.step} {
  // expected-error@+1 {{cannot lower a value of type 'tensor<16xf32>': buffer reads element 15, past the end of its 16-byte storage}}
  %e = coop.view "aten.view"(%x) {args = {size = [16]}} : (tensor<4xf32>) -> tensor<16xf32>
  return
}

// -----

func.func @slice_out_of_range(%x: tensor<4x8xf32> {coop.offset = 0 : i64, coop.role = #coop.role<input>})
    attributes {coop.plan = {budget = 2048 : i64, policy = "coop"}, coop.step} {
  // expected-error@+1 {{'coop.view' op cannot lay out view 'aten.slice.Tensor': elements from 2 (3, step 1) are out of range for a dimension of size 4}}
  %s = coop.view "aten.slice.Tensor"(%x) {args = {dim = 0 : i64, start = 2 : i64, end = 5 : i64, step = 1 : i64}} : (tensor<4x8xf32>) -> tensor<3x8xf32>
  return
}

// -----

func.func @select_out_of_range(%x: tensor<4x8xf32> {coop.offset = 0 : i64, coop.role = #coop.role<input>})
    attributes {coop.plan = {budget = 2048 : i64, policy = "coop"}, coop.step} {
  // expected-error@+1 {{'coop.view' op cannot lay out view 'aten.select.int': elements from 4 (1, step 1) are out of range for a dimension of size 4}}
  %s = coop.view "aten.select.int"(%x) {args = {dim = 0 : i64, index = 4 : i64}} : (tensor<4x8xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @slice_zero_step(%x: tensor<4x8xf32> {coop.offset = 0 : i64, coop.role = #coop.role<input>})
    attributes {coop.plan = {budget = 2048 : i64, policy = "coop"}, coop.step} {
  // expected-error@+1 {{'coop.view' op cannot lay out view 'aten.slice.Tensor': step 0 is not positive}}
  %s = coop.view "aten.slice.Tensor"(%x) {args = {dim = 0 : i64, start = 0 : i64, step = 0 : i64}} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @dimension_below_range(%x: tensor<4x8xf32> {coop.offset = 0 : i64, coop.role = #coop.role<input>})
    attributes {coop.plan = {budget = 2048 : i64, policy = "coop"}, coop.step} {
  // expected-error@+1 {{'coop.view' op cannot lay out view 'aten.transpose.int': dimension out of range}}
  %t = coop.view "aten.transpose.int"(%x) {args = {dim0 = -5 : i64, dim1 = 1 : i64}} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  return
}

// -----

func.func @split_past_dimension(%x: tensor<4x8xf32> {coop.offset = 0 : i64, coop.role = #coop.role<input>})
    attributes {coop.plan = {budget = 2048 : i64, policy = "coop"}, coop.step} {
  // expected-error@+1 {{'coop.view' op cannot lay out view 'aten.split.Tensor': the pieces span more than the 4 elements of the dimension}}
  %a:2 = coop.view "aten.split.Tensor"(%x) {args = {dim = 0 : i64, split_size = 3 : i64}} : (tensor<4x8xf32>) -> (tensor<3x8xf32>, tensor<3x8xf32>)
  return
}

// -----

// The runtime has no complex dtype: refused here rather than written as a
// buffer coop_rt cannot parse.
// expected-error@+1 {{cannot lower a value of type 'tensor<4xcomplex<f32>>': buffer element type must be an integer or float, got 'complex<f32>'}}
func.func @complex_argument(%x: tensor<4xcomplex<f32>> {coop.offset = 0 : i64, coop.role = #coop.role<input>})
    attributes {coop.plan = {budget = 2048 : i64, policy = "coop"}, coop.step} {
  return
}

// -----

func.func @as_strided_offset_overflow(%x: tensor<4xf32> {coop.offset = 0 : i64, coop.role = #coop.role<input>})
    attributes {coop.plan = {budget = 2048 : i64, policy = "coop"}, coop.step} {
  // expected-error@+1 {{cannot lower a value of type 'tensor<2xf32>': buffer's last element lies past 2^63 bytes}}
  %e = coop.view "aten.as_strided"(%x) {args = {size = [2], stride = [1], storage_offset = 9223372036854775807 : i64}} : (tensor<4xf32>) -> tensor<2xf32>
  return
}

// -----

// (3 - 1) * step wraps past 2^63: still out of range.
func.func @slice_step_overflow(%x: tensor<4x8xf32> {coop.offset = 0 : i64, coop.role = #coop.role<input>})
    attributes {coop.plan = {budget = 2048 : i64, policy = "coop"}, coop.step} {
  // expected-error@+1 {{'coop.view' op cannot lay out view 'aten.slice.Tensor': elements from 0 (3, step 4611686018427387904) are out of range for a dimension of size 4}}
  %s = coop.view "aten.slice.Tensor"(%x) {args = {dim = 0 : i64, start = 0 : i64, step = 4611686018427387904 : i64}} : (tensor<4x8xf32>) -> tensor<3x8xf32>
  return
}
