// RUN: coop-opt %s --split-input-file | FileCheck %s
// Round trip: print, parse the printed form again, and compare.
// RUN: coop-opt %s --split-input-file | coop-opt --split-input-file | FileCheck %s
// RUN: coop-opt %s --split-input-file --mlir-print-op-generic | coop-opt --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @roles_and_inplace
// CHECK-SAME: %{{.*}}: tensor<4x8xf32> {coop.role = #coop.role<parameter>}
// CHECK-SAME: %{{.*}}: tensor<4x8xf32> {coop.role = #coop.role<optimizer_state>}
// CHECK-SAME: %{{.*}}: tensor<4x8xf32> {coop.role = #coop.role<gradient>}
// CHECK-SAME: %{{.*}}: tensor<4xf32> {coop.role = #coop.role<buffer>}
// CHECK-SAME: %{{.*}}: tensor<2x4xbf16> {coop.role = #coop.role<input>}
// CHECK-SAME: attributes {coop.step}
// CHECK: %[[H:.*]] = coop.compute "aten.mm"(%{{.*}}, %{{.*}}) {cost_us = 1.250000e+00 : f64, workspace_bytes = 256 : i64} : (tensor<2x4xbf16>, tensor<4x8xf32>) -> tensor<2x8xf32>
// CHECK: %[[R:.*]] = coop.compute "aten.relu_"(%[[H]]) {inplace = array<i64: 0>} : (tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK: coop.compute "aten.add_"(%{{.*}}, %{{.*}}) {args = {alpha = 1.000000e+00 : f64}, inplace = array<i64: 0>}
// CHECK: return %[[R]], %{{.*}} : tensor<2x8xf32>, tensor<4x8xf32>
func.func @roles_and_inplace(
    %w: tensor<4x8xf32> {coop.role = #coop.role<parameter>},
    %m: tensor<4x8xf32> {coop.role = #coop.role<optimizer_state>},
    %g: tensor<4x8xf32> {coop.role = #coop.role<gradient>},
    %mean: tensor<4xf32> {coop.role = #coop.role<buffer>},
    %x: tensor<2x4xbf16> {coop.role = #coop.role<input>})
    -> (tensor<2x8xf32>, tensor<4x8xf32>) attributes {coop.step} {
  %h = coop.compute "aten.mm"(%x, %w) {cost_us = 1.25 : f64, workspace_bytes = 256 : i64}
      : (tensor<2x4xbf16>, tensor<4x8xf32>) -> tensor<2x8xf32>
  %r = coop.compute "aten.relu_"(%h) {inplace = array<i64: 0>}
      : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %m1 = coop.compute "aten.add_"(%m, %g) {args = {alpha = 1.0 : f64}, inplace = array<i64: 0>}
      : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r, %m1 : tensor<2x8xf32>, tensor<4x8xf32>
}

// -----

// Multi-result ops mix fresh results and in-place versions: batch norm
// returns three fresh tensors and updates its running statistics.
// CHECK-LABEL: func.func @batch_norm_updates_running_stats
// CHECK: %{{.*}}:5 = coop.compute "aten.native_batch_norm"(%{{.*}}, %{{.*}}, %{{.*}}) {args = {eps = 1.000000e-05 : f64, momentum = 1.000000e-01 : f64, training = true}, inplace = array<i64: -1, -1, -1, 1, 2>}
func.func @batch_norm_updates_running_stats(
    %x: tensor<2x3x4x4xf32> {coop.role = #coop.role<input>},
    %mean: tensor<3xf32> {coop.role = #coop.role<buffer>},
    %var: tensor<3xf32> {coop.role = #coop.role<buffer>})
    -> tensor<2x3x4x4xf32> attributes {coop.step} {
  %y:5 = coop.compute "aten.native_batch_norm"(%x, %mean, %var)
      {args = {training = true, momentum = 0.1 : f64, eps = 1.0e-5 : f64},
       inplace = array<i64: -1, -1, -1, 1, 2>}
      : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
      -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  return %y#0 : tensor<2x3x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @views_and_random
// CHECK: %[[T:.*]] = coop.view "aten.t"(%{{.*}}) : (tensor<4x8xf32>) -> tensor<8x4xf32>
// CHECK: %{{.*}}:2 = coop.view "aten.split"(%[[T]]) {args = {dim = 0 : i64, split_size = 4 : i64}} : (tensor<8x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>)
// CHECK: coop.compute "aten.native_dropout"(%{{.*}}) {args = {p = 5.000000e-01 : f64, train = true}, rng = #coop.rng<seed = 42, offset = 1024>} : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xi1>)
// CHECK: coop.compute "aten.empty"() {args = {size = [2]}} : () -> tensor<2xi64>
func.func @views_and_random(%w: tensor<4x8xf32> {coop.role = #coop.role<parameter>})
    -> (tensor<4x4xf32>, tensor<2xi64>) attributes {coop.step} {
  %t = coop.view "aten.t"(%w) : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %s:2 = coop.view "aten.split"(%t) {args = {dim = 0 : i64, split_size = 4 : i64}}
      : (tensor<8x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>)
  %d:2 = coop.compute "aten.native_dropout"(%s#1)
      {args = {p = 0.5 : f64, train = true}, rng = #coop.rng<seed = 42, offset = 1024>}
      : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xi1>)
  %e = coop.compute "aten.empty"() {args = {size = [2]}} : () -> tensor<2xi64>
  return %d#0, %e : tensor<4x4xf32>, tensor<2xi64>
}

// -----

// Functions without coop.step are left alone by the step verifier.
// CHECK-LABEL: func.func @not_a_step
// CHECK-SAME: %{{.*}}: tensor<?xf32>
func.func @not_a_step(%x: tensor<?xf32>) -> tensor<?xf32> {
  return %x : tensor<?xf32>
}
