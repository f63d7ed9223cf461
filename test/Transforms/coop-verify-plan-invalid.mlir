// RUN: coop-opt %s --split-input-file --coop-verify-plan --verify-diagnostics

// expected-error@+1 {{@unplanned is not planned (no 'coop.plan'); run --coop-plan-memory first}}
func.func @unplanned(%x: tensor<128xf32> {coop.role = #coop.role<input>}) attributes {coop.step} {
  return
}

// -----

// The plan of coop-plan-memory.mlir, with %b moved onto %a's bytes.
func.func @overlap(%x: tensor<128xf32> {coop.offset = 0 : i64, coop.role = #coop.role<input>}) -> tensor<128xf32>
    attributes {coop.plan = {alignment = 512 : i64, budget = 2048 : i64, policy = "coop"}, coop.step} {
  %a = coop.compute "aten.exp"(%x) {offsets = array<i64: 1536>} : (tensor<128xf32>) -> tensor<128xf32>
  // expected-error@+1 {{invalid plan: instruction #1 (run op #1 'aten.sin'): 'aten.sin#1:0' at [1536, 2048) overlaps 'aten.exp#0:0' at [1536, 2048)}}
  %b = coop.compute "aten.sin"(%x) {offsets = array<i64: 1536>} : (tensor<128xf32>) -> tensor<128xf32>
  %c = coop.compute "aten.cos"(%x) {offsets = array<i64: 512>} : (tensor<128xf32>) -> tensor<128xf32>
  coop.evict %c : tensor<128xf32>
  %d = coop.compute "aten.add"(%a, %b) {offsets = array<i64: 512>} : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
  coop.free %a : tensor<128xf32>
  coop.free %b : tensor<128xf32>
  %c2 = coop.compute "aten.cos"(%x) {offsets = array<i64: 1536>, recompute_of = 2 : i64} : (tensor<128xf32>) -> tensor<128xf32>
  %e = coop.compute "aten.mul"(%d, %c2) {offsets = array<i64: 1024>} : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
  coop.free %c2 : tensor<128xf32>
  coop.free %d : tensor<128xf32>
  return %e : tensor<128xf32>
}

// -----

func.func @outside_arena(%x: tensor<128xf32> {coop.offset = 0 : i64, coop.role = #coop.role<input>}) -> tensor<128xf32>
    attributes {coop.plan = {alignment = 512 : i64, budget = 2048 : i64, policy = "coop"}, coop.step} {
  // expected-error@+1 {{invalid plan: instruction #0 (run op #0 'aten.exp'): 'aten.exp#0:0' at [2048, 2560) lies outside the arena [0, 2048)}}
  %a = coop.compute "aten.exp"(%x) {offsets = array<i64: 2048>} : (tensor<128xf32>) -> tensor<128xf32>
  return %a : tensor<128xf32>
}

// -----

// A misplaced argument is reported at its first reader, not at the
// function (whose signature line would be echoed).
func.func @argument_outside_arena(%x: tensor<128xf32> {coop.offset = 0 : i64, coop.role = #coop.role<input>},
                                  %w: tensor<128xf32> {coop.offset = 2048 : i64, coop.role = #coop.role<parameter>}) -> tensor<128xf32>
    attributes {coop.plan = {alignment = 512 : i64, budget = 2048 : i64, policy = "coop"}, coop.step} {
  %a = coop.compute "aten.exp"(%x) {offsets = array<i64: 512>} : (tensor<128xf32>) -> tensor<128xf32>
  // expected-error@+1 {{invalid plan: argument placement #1}}
  %b = coop.compute "aten.mul"(%a, %w) {offsets = array<i64: 1024>} : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
  return %b : tensor<128xf32>
}

// -----

// %e reads the evicted %c instead of its recomputation %c2.
func.func @use_after_evict(%x: tensor<128xf32> {coop.offset = 0 : i64, coop.role = #coop.role<input>}) -> tensor<128xf32>
    attributes {coop.plan = {alignment = 512 : i64, budget = 2048 : i64, policy = "coop"}, coop.step} {
  %a = coop.compute "aten.exp"(%x) {offsets = array<i64: 1536>} : (tensor<128xf32>) -> tensor<128xf32>
  %b = coop.compute "aten.sin"(%x) {offsets = array<i64: 1024>} : (tensor<128xf32>) -> tensor<128xf32>
  %c = coop.compute "aten.cos"(%x) {offsets = array<i64: 512>} : (tensor<128xf32>) -> tensor<128xf32>
  coop.evict %c : tensor<128xf32>
  %d = coop.compute "aten.add"(%a, %b) {offsets = array<i64: 512>} : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
  coop.free %a : tensor<128xf32>
  coop.free %b : tensor<128xf32>
  // expected-error@+1 {{operand #1 reads a value whose buffer was evicted earlier in the schedule}}
  %e = coop.compute "aten.mul"(%d, %c) {offsets = array<i64: 1024>} : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
  return %e : tensor<128xf32>
}

// -----

// Nothing brings %c back before %e reads it.
func.func @evicted_tensor_never_recomputed(%x: tensor<128xf32> {coop.offset = 0 : i64, coop.role = #coop.role<input>}) -> tensor<128xf32>
    attributes {coop.plan = {alignment = 512 : i64, budget = 2048 : i64, policy = "coop"}, coop.step} {
  %c = coop.compute "aten.cos"(%x) {offsets = array<i64: 512>} : (tensor<128xf32>) -> tensor<128xf32>
  %v = coop.view "aten.view"(%c) : (tensor<128xf32>) -> tensor<8x16xf32>
  coop.evict %c : tensor<128xf32>
  // expected-error@+1 {{operand #0 reads a value whose buffer was evicted earlier in the schedule}}
  %e = coop.compute "aten.neg"(%v) {offsets = array<i64: 1024>} : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %x : tensor<128xf32>
}

// -----

// relu_ overwrote %a's buffer; reading %a afterwards reads the new values.
func.func @stale_version(%x: tensor<128xf32> {coop.offset = 0 : i64, coop.role = #coop.role<input>}) -> tensor<128xf32>
    attributes {coop.plan = {alignment = 512 : i64, budget = 2048 : i64, policy = "coop"}, coop.step} {
  %a = coop.compute "aten.exp"(%x) {offsets = array<i64: 1536>} : (tensor<128xf32>) -> tensor<128xf32>
  %r = coop.compute "aten.relu_"(%a) {inplace = array<i64: 0>, offsets = array<i64: 1536>} : (tensor<128xf32>) -> tensor<128xf32>
  // expected-error@+1 {{operand #0 reads a value whose buffer was overwritten in place (a stale version) earlier in the schedule}}
  %n = coop.compute "aten.neg"(%a) {offsets = array<i64: 1024>} : (tensor<128xf32>) -> tensor<128xf32>
  return %n : tensor<128xf32>
}

// -----

func.func @recompute_of_other_kernel(%x: tensor<128xf32> {coop.offset = 0 : i64, coop.role = #coop.role<input>}) -> tensor<128xf32>
    attributes {coop.plan = {alignment = 512 : i64, budget = 2048 : i64, policy = "coop"}, coop.step} {
  %c = coop.compute "aten.cos"(%x) {offsets = array<i64: 512>} : (tensor<128xf32>) -> tensor<128xf32>
  coop.evict %c : tensor<128xf32>
  // expected-error@+1 {{'recompute_of' names op #0, which is a different kernel or has other result types}}
  %c2 = coop.compute "aten.sin"(%x) {offsets = array<i64: 512>, recompute_of = 0 : i64} : (tensor<128xf32>) -> tensor<128xf32>
  return %c2 : tensor<128xf32>
}

// -----

// The step's output is released before the step ends.
func.func @output_freed(%x: tensor<128xf32> {coop.offset = 0 : i64, coop.role = #coop.role<input>}) -> tensor<128xf32>
    attributes {coop.plan = {alignment = 512 : i64, budget = 2048 : i64, policy = "coop"}, coop.step} {
  %a = coop.compute "aten.exp"(%x) {offsets = array<i64: 512>} : (tensor<128xf32>) -> tensor<128xf32>
  coop.free %a : tensor<128xf32>
  // expected-error@+1 {{operand #0 reads a value whose buffer was freed earlier in the schedule}}
  return %a : tensor<128xf32>
}

// -----

// The tensor-level replay catches what SSA alone cannot: a run that lists
// a recomputation's input as resident when the plan dropped it.
func.func @missing_workspace_offset(%x: tensor<128xf32> {coop.offset = 0 : i64, coop.role = #coop.role<input>}) -> tensor<128xf32>
    attributes {coop.plan = {alignment = 512 : i64, budget = 2048 : i64, policy = "coop"}, coop.step} {
  // expected-error@+1 {{op with a workspace in a planned step has no 'workspace_offset'}}
  %a = coop.compute "aten.conv"(%x) {offsets = array<i64: 512>, workspace_bytes = 100 : i64} : (tensor<128xf32>) -> tensor<128xf32>
  return %a : tensor<128xf32>
}

// -----

// An offset near 2^63: offset + size must not wrap into the arena.
func.func @offset_near_int64_max(%x: tensor<128xf32> {coop.offset = 0 : i64, coop.role = #coop.role<input>}) -> tensor<128xf32>
    attributes {coop.plan = {alignment = 512 : i64, budget = 2048 : i64, policy = "coop"}, coop.step} {
  // expected-error@+1 {{invalid plan: instruction #0 (run op #0 'aten.exp'): 'aten.exp#0:0' at [9223372036854775296, 9223372036854775296 + 512) lies outside the arena [0, 2048)}}
  %a = coop.compute "aten.exp"(%x) {offsets = array<i64: 9223372036854775296>} : (tensor<128xf32>) -> tensor<128xf32>
  return %a : tensor<128xf32>
}

// -----

// expected-error@+1 {{'coop.plan' alignment must be in [1, 1073741824] bytes, got 4611686018427387904}}
func.func @huge_alignment(%x: tensor<128xf32> {coop.offset = 0 : i64, coop.role = #coop.role<input>}) -> tensor<128xf32>
    attributes {coop.plan = {alignment = 4611686018427387904 : i64, budget = 2048 : i64, policy = "coop"}, coop.step} {
  return %x : tensor<128xf32>
}
