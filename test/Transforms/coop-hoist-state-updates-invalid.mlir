// RUN: coop-opt %s --split-input-file --coop-hoist-state-updates --verify-diagnostics

// Moving ops would leave a plan whose op indices and arena places no longer
// match its ops: planned steps are refused.

// expected-error@+1 {{step @planned is already planned ('coop.plan'); coop-hoist-state-updates runs before planning}}
func.func @planned(%x: tensor<128xf32> {coop.offset = 0 : i64, coop.role = #coop.role<input>})
    -> tensor<128xf32> attributes {coop.plan = {budget = 2048 : i64, policy = "coop"}, coop.step} {
  %a = coop.compute "aten.exp"(%x) {offsets = array<i64: 512>} : (tensor<128xf32>) -> tensor<128xf32>
  return %a : tensor<128xf32>
}

// -----

func.func @release(%x: tensor<128xf32> {coop.role = #coop.role<input>})
    -> tensor<128xf32> attributes {coop.step} {
  %a = coop.compute "aten.exp"(%x) : (tensor<128xf32>) -> tensor<128xf32>
  %b = coop.compute "aten.sin"(%a) : (tensor<128xf32>) -> tensor<128xf32>
  // expected-error@+1 {{'coop.free' op is a release of a planned step; coop-hoist-state-updates runs before planning}}
  coop.free %a : tensor<128xf32>
  return %b : tensor<128xf32>
}
