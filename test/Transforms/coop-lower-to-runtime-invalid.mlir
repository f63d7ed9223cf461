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
