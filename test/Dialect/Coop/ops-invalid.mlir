// RUN: coop-opt %s --split-input-file --verify-diagnostics

func.func @missing_role(%x: tensor<4xf32>) -> tensor<4xf32> attributes {coop.step} {
  // expected-error@-1 {{'func.func' op argument #0 needs a 'coop.role' (parameter, gradient, optimizer_state, buffer or input)}}
  return %x : tensor<4xf32>
}

// -----

// expected-error@+1 {{'coop.role' of argument #0 must be a #coop.role, got "parameter"}}
func.func @role_not_an_enum(%x: tensor<4xf32> {coop.role = "parameter"}) attributes {coop.step} {
  return
}

// -----

// expected-error@+2 {{expected ::mlir::coop::Role to be one of: parameter, gradient, optimizer_state, buffer, input}}
// expected-error@+1 {{failed to parse Coop_RoleAttr parameter 'value'}}
func.func @unknown_role(%x: tensor<4xf32> {coop.role = #coop.role<weights>}) attributes {coop.step} {
  return
}

// -----

// expected-error@+1 {{'coop.name' of argument #0 must be a string}}
func.func @name_not_a_string(%x: tensor<4xf32> {coop.role = #coop.role<input>, coop.name = 3 : i64}) attributes {coop.step} {
  return
}

// -----

// expected-error@+1 {{'func.func' op argument #0 must be a statically shaped tensor, got 'tensor<?xf32>'}}
func.func @dynamic_argument(%x: tensor<?xf32> {coop.role = #coop.role<input>}) attributes {coop.step} {
  return
}

// -----

// expected-error@+1 {{'func.func' op marked 'coop.step' must have a body}}
func.func private @external_step(%x: tensor<4xf32> {coop.role = #coop.role<input>}) attributes {coop.step}

// -----

// expected-error@+1 {{'coop.step' must be a unit attribute on a func.func}}
func.func @step_attr_not_unit() attributes {coop.step = 1 : i32} {
  return
}

// -----

// expected-error@+1 {{'coop.costs' must be a dictionary on a coop.step function}}
func.func @costs_not_on_a_step() attributes {coop.costs = {roofline = 1 : i64}} {
  return
}

// -----

// expected-error@+1 {{unknown coop attribute 'coop.budget'}}
func.func @unknown_func_attr() attributes {coop.budget = 5 : i64} {
  return
}

// -----

// expected-error@+1 {{coop attribute 'coop.role' is not allowed on result #0; roles belong to step arguments}}
func.func @role_on_result(%x: tensor<4xf32> {coop.role = #coop.role<input>}) -> (tensor<4xf32> {coop.role = #coop.role<input>}) attributes {coop.step} {
  return %x : tensor<4xf32>
}

// -----

func.func @foreign_op(%x: tensor<4xf32> {coop.role = #coop.role<input>}) -> tensor<4xf32> attributes {coop.step} {
  // expected-error@+1 {{'func.call' op is not allowed in a coop step; only coop ops and func.return are}}
  %e = func.call @helper(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %e : tensor<4xf32>
}
func.func private @helper(tensor<4xf32>) -> tensor<4xf32>

// -----

func.func @use_before_definition(%x: tensor<4xf32> {coop.role = #coop.role<input>}) -> tensor<4xf32> attributes {coop.step} {
  // expected-error@+1 {{'coop.compute' op operand #0 is used before its definition in the step's execution order}}
  %a = coop.compute "aten.neg"(%b) : (tensor<4xf32>) -> tensor<4xf32>
  // expected-note@+1 {{operand defined here}}
  %b = coop.compute "aten.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

func.func @cycle(%x: tensor<4xf32> {coop.role = #coop.role<input>}) -> tensor<4xf32> attributes {coop.step} {
  // expected-error@+1 {{'coop.compute' op operand #1 closes a dependence cycle: its producer reads, directly or transitively, a result of this op}}
  %a = coop.compute "aten.add"(%x, %c) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %b = coop.compute "aten.relu"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  // expected-note@+1 {{operand defined here}}
  %c = coop.compute "aten.neg"(%b) : (tensor<4xf32>) -> tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----

func.func @self_cycle(%x: tensor<4xf32> {coop.role = #coop.role<input>}) -> tensor<4xf32> attributes {coop.step} {
  // expected-error@+2 {{'coop.compute' op operand #0 closes a dependence cycle}}
  // expected-note@+1 {{operand defined here}}
  %a = coop.compute "aten.relu"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

func.func @empty_kernel(%x: tensor<4xf32> {coop.role = #coop.role<input>}) attributes {coop.step} {
  // expected-error@+1 {{'coop.compute' op needs a non-empty 'kernel' name}}
  %a = coop.compute ""(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @inplace_unknown_storage(%x: tensor<4xf32> {coop.role = #coop.role<input>}) attributes {coop.step} {
  // expected-error@+1 {{'coop.compute' op result #0 overwrites unknown storage: operand #2 does not exist (the op has 1 operands)}}
  %a = coop.compute "aten.relu_"(%x) {inplace = array<i64: 2>} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @inplace_negative_operand(%x: tensor<4xf32> {coop.role = #coop.role<input>}) attributes {coop.step} {
  // expected-error@+1 {{'coop.compute' op result #0 overwrites unknown storage: operand #-2 does not exist (the op has 1 operands)}}
  %a = coop.compute "aten.relu_"(%x) {inplace = array<i64: -2>} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @inplace_wrong_arity(%x: tensor<4xf32> {coop.role = #coop.role<input>}) attributes {coop.step} {
  // expected-error@+1 {{'coop.compute' op 'inplace' has 2 entries but the op has 1 results}}
  %a = coop.compute "aten.relu_"(%x) {inplace = array<i64: 0, -1>} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @inplace_twice(%x: tensor<4xf32> {coop.role = #coop.role<input>}) attributes {coop.step} {
  // expected-error@+1 {{'coop.compute' op operand #0 is overwritten in place by more than one result}}
  %a:2 = coop.compute "aten.weird_"(%x) {inplace = array<i64: 0, 0>} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @inplace_result_type_mismatch(%x: tensor<4xf32> {coop.role = #coop.role<input>}) attributes {coop.step} {
  // expected-error@+1 {{'coop.compute' op result #0 overwrites operand #0 in place, so it must have the operand's type 'tensor<4xf32>', not 'tensor<4xf16>'}}
  %a = coop.compute "aten.relu_"(%x) {inplace = array<i64: 0>} : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

// Writing in place into a view must produce the view's own type: a result of
// the base's (larger) size would write past the view.
func.func @inplace_into_view_of_other_size(%x: tensor<4x4xf32> {coop.role = #coop.role<parameter>}) attributes {coop.step} {
  %row:2 = coop.view "aten.split"(%x) : (tensor<4x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
  // expected-error@+1 {{'coop.compute' op result #0 overwrites operand #0 in place, so it must have the operand's type 'tensor<2x4xf32>', not 'tensor<4x4xf32>'}}
  %a = coop.compute "aten.mul_"(%row#0) {inplace = array<i64: 0>} : (tensor<2x4xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @random_without_rng(%x: tensor<4xf32> {coop.role = #coop.role<input>}) attributes {coop.step} {
  // expected-error@+1 {{'coop.compute' op 'aten.native_dropout' is a random kernel and needs an 'rng' attribute (seed and offset) so that it can be recomputed}}
  %a:2 = coop.compute "aten.native_dropout"(%x) {args = {p = 0.1 : f64, train = true}} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi1>)
  return
}

// -----

func.func @rng_missing_offset(%x: tensor<4xf32> {coop.role = #coop.role<input>}) attributes {coop.step} {
  // expected-error@+1 {{expected ','}}
  %a = coop.compute "aten.bernoulli"(%x) {rng = #coop.rng<seed = 1>} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @negative_cost(%x: tensor<4xf32> {coop.role = #coop.role<input>}) attributes {coop.step} {
  // expected-error@+1 {{'coop.compute' op 'cost_us' must be a finite, non-negative time in microseconds, got -3}}
  %a = coop.compute "aten.relu"(%x) {cost_us = -3.0 : f64} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @negative_workspace(%x: tensor<4xf32> {coop.role = #coop.role<input>}) attributes {coop.step} {
  // expected-error@+1 {{'coop.compute' op 'workspace_bytes' must be in [0, 2^62 = 4611686018427387904], got -1}}
  %a = coop.compute "aten.conv"(%x) {workspace_bytes = -1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @dynamic_result(%x: tensor<4xf32> {coop.role = #coop.role<input>}) attributes {coop.step} {
  // expected-error@+1 {{'coop.compute' op result #0 must be variadic of statically shaped tensor of any type values, but got 'tensor<?xf32>'}}
  %a = coop.compute "aten.relu"(%x) : (tensor<4xf32>) -> tensor<?xf32>
  return
}

// -----

func.func @opaque_element_type(%x: tensor<4x!coop.unknown>) {
  // expected-error@-1 {{dialect 'coop' provides no type parsing hook}}
  return
}

// -----

func.func @element_without_byte_width(%x: tensor<4xf32> {coop.role = #coop.role<input>}) attributes {coop.step} {
  // expected-error@+1 {{'coop.compute' op result #0 has type 'tensor<4xvector<2xf32>>', whose element type has no fixed byte width}}
  %a = coop.compute "aten.weird"(%x) : (tensor<4xf32>) -> tensor<4xvector<2xf32>>
  return
}

// -----

func.func @view_without_results(%x: tensor<4xf32> {coop.role = #coop.role<input>}) attributes {coop.step} {
  // expected-error@+1 {{'coop.view' op must produce at least one view}}
  coop.view "aten.view"(%x) : (tensor<4xf32>) -> ()
  return
}

// -----

func.func @unknown_op(%x: tensor<4xf32> {coop.role = #coop.role<input>}) attributes {coop.step} {
  // expected-error@+1 {{custom op 'coop.evictt' is unknown}}
  coop.evictt %x : tensor<4xf32>
  return
}

// -----

// 2^62 x 4 x 4 bytes overflows int64_t: too large, not "no byte width".
// expected-error@+1 {{'func.func' op argument #0 has type 'tensor<4611686018427387904x4xf32>', which is too large: more than 4611686018427387904 bytes (2^62), the largest tensor supported}}
func.func @argument_too_large(%x: tensor<4611686018427387904x4xf32> {coop.role = #coop.role<input>}) attributes {coop.step} {
  return
}

// -----

func.func @result_too_large(%x: tensor<4xf32> {coop.role = #coop.role<input>}) attributes {coop.step} {
  // expected-error@+1 {{'coop.compute' op result #0 has type 'tensor<1152921504606846977xf32>', which is too large: more than 4611686018427387904 bytes (2^62), the largest tensor supported}}
  %a = coop.compute "aten.relu"(%x) : (tensor<4xf32>) -> tensor<1152921504606846977xf32>
  return
}

// -----

func.func @huge_workspace(%x: tensor<4xf32> {coop.role = #coop.role<input>}) attributes {coop.step} {
  // expected-error@+1 {{'coop.compute' op 'workspace_bytes' must be in [0, 2^62 = 4611686018427387904], got 9223372036854775000}}
  %a = coop.compute "aten.conv"(%x) {workspace_bytes = 9223372036854775000 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return
}
