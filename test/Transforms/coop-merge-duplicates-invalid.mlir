// RUN: coop-opt %s --split-input-file --coop-merge-duplicates --verify-diagnostics

// Merging would leave a plan whose op indices and arena places no longer
// match its ops: planned steps, or steps with any trace of a plan, are
// refused.

// expected-error@+1 {{step @planned is already planned ('coop.plan'); coop-merge-duplicates runs before planning}}
func.func @planned(%x: tensor<128xf32> {coop.offset = 0 : i64, coop.role = #coop.role<input>})
    -> tensor<128xf32> attributes {coop.plan = {budget = 2048 : i64, policy = "coop"}, coop.step} {
  %a = coop.compute "aten.exp"(%x) {offsets = array<i64: 512>} : (tensor<128xf32>) -> tensor<128xf32>
  return %a : tensor<128xf32>
}

// -----

func.func @offsets(%x: tensor<128xf32> {coop.role = #coop.role<input>})
    -> tensor<128xf32> attributes {coop.step} {
  // expected-error@+1 {{'coop.compute' op has arena offsets of a planned step; coop-merge-duplicates runs before planning}}
  %a = coop.compute "aten.exp"(%x) {offsets = array<i64: 512>} : (tensor<128xf32>) -> tensor<128xf32>
  %b = coop.compute "aten.exp"(%x) : (tensor<128xf32>) -> tensor<128xf32>
  return %b : tensor<128xf32>
}

// -----

func.func @recomputation(%x: tensor<128xf32> {coop.role = #coop.role<input>})
    -> tensor<128xf32> attributes {coop.step} {
  %a = coop.compute "aten.exp"(%x) : (tensor<128xf32>) -> tensor<128xf32>
  // expected-error@+1 {{'coop.view' op is a recomputation of a planned step; coop-merge-duplicates runs before planning}}
  %v = coop.view "aten.view"(%a) {args = {size = [128]}, recompute_of = 1 : i64} : (tensor<128xf32>) -> tensor<128xf32>
  return %v : tensor<128xf32>
}

// -----

func.func @release(%x: tensor<128xf32> {coop.role = #coop.role<input>})
    -> tensor<128xf32> attributes {coop.step} {
  %a = coop.compute "aten.exp"(%x) : (tensor<128xf32>) -> tensor<128xf32>
  %b = coop.compute "aten.sin"(%a) : (tensor<128xf32>) -> tensor<128xf32>
  // expected-error@+1 {{'coop.free' op is a release of a planned step; coop-merge-duplicates runs before planning}}
  coop.free %a : tensor<128xf32>
  return %b : tensor<128xf32>
}
