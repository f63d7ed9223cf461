// RUN: coop-opt %s --split-input-file --coop-hoist-state-updates | FileCheck %s
// RUN: coop-opt %s --split-input-file --coop-hoist-state-updates --coop-memory-stats -o /dev/null | FileCheck %s --check-prefix=STATS

// SGD with momentum after the backward, as optimizer.step() writes it. The
// momentum's mul_ and the add_ that reads the gradient move up to right
// after the gradient; the weight's own add_ stays: the second mm reads the
// weight's old version through a view, and a recomputation might too.
// CHECK-LABEL: func.func @sgd_momentum
// CHECK: %[[GW:.*]] = coop.compute "aten.mm"(%arg2, %arg3)
// CHECK-NEXT: %[[B1:.*]] = coop.compute "aten.mul_.Tensor"(%arg1)
// CHECK-NEXT: %[[B2:.*]] = coop.compute "aten.add_.Tensor"(%[[B1]], %[[GW]])
// CHECK-NEXT: %[[WT:.*]] = coop.view "aten.t"(%arg0)
// CHECK-NEXT: %[[DX:.*]] = coop.compute "aten.mm"(%arg3, %[[WT]])
// CHECK-NEXT: %[[S:.*]] = coop.compute "aten.sum"(%[[DX]])
// CHECK-NEXT: %[[W1:.*]] = coop.compute "aten.add_.Tensor"(%arg0, %[[B2]])
// CHECK-NEXT: return %[[S]]
// The gradient (64 bytes) dies at its update instead of living to the end
// of the step beside the input gradient: 388 bytes live at most before
// (448 with weight decay, 384 after).
// STATS-LABEL: coop-memory-stats @sgd_momentum
// STATS: peak live bytes: 324 (324 B) at op #5 'aten.sum'
// STATS-LABEL: coop-memory-stats @plain_sgd
// STATS: peak live bytes: 384 (384 B) at op #3 'aten.exp'
// STATS-LABEL: coop-memory-stats @not_updates
// STATS: peak live bytes: 512 (512 B) at op #2 'aten.add_.Tensor'
// STATS-LABEL: coop-memory-stats @weight_decay
// STATS: peak live bytes: 384 (384 B) at op #1 'aten.add.Tensor'
func.func @sgd_momentum(%w: tensor<4x4xf32> {coop.role = #coop.role<parameter>},
                        %buf: tensor<4x4xf32> {coop.role = #coop.role<optimizer_state>},
                        %xt: tensor<4x4xf32> {coop.role = #coop.role<input>},
                        %dy: tensor<4x4xf32> {coop.role = #coop.role<input>})
    -> tensor<f32> attributes {coop.step} {
  %gw = coop.compute "aten.mm"(%xt, %dy) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %wt = coop.view "aten.t"(%w) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %dx = coop.compute "aten.mm"(%dy, %wt) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = coop.compute "aten.sum"(%dx) : (tensor<4x4xf32>) -> tensor<f32>
  %b1 = coop.compute "aten.mul_.Tensor"(%buf) {args = {other = 0.9 : f64}, inplace = array<i64: 0>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %b2 = coop.compute "aten.add_.Tensor"(%b1, %gw) {inplace = array<i64: 0>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %w1 = coop.compute "aten.add_.Tensor"(%w, %b2) {args = {alpha = -0.1 : f64}, inplace = array<i64: 0>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %s : tensor<f32>
}

// -----

// Plain SGD writes the weight with the gradient: an update of a parameter,
// which the forward and the backward read, so it stays (moved up, the
// weight's old version would end there, and with it every recomputation of
// an activation from it).
// CHECK-LABEL: func.func @plain_sgd
// CHECK: %[[GW:.*]] = coop.compute "aten.mm"(%arg1, %arg2)
// CHECK-NEXT: %[[WT:.*]] = coop.view "aten.t"(%arg0)
// CHECK-NEXT: %[[DX:.*]] = coop.compute "aten.mm"(%arg2, %[[WT]])
// CHECK-NEXT: %[[E:.*]] = coop.compute "aten.exp"(%[[DX]])
// CHECK-NEXT: %[[S:.*]] = coop.compute "aten.sum"(%[[E]])
// CHECK-NEXT: %[[W1:.*]] = coop.compute "aten.add_.Tensor"(%arg0, %[[GW]])
// CHECK-NEXT: return %[[S]]
func.func @plain_sgd(%w: tensor<4x4xf32> {coop.role = #coop.role<parameter>},
                     %xt: tensor<4x4xf32> {coop.role = #coop.role<input>},
                     %dy: tensor<4x4xf32> {coop.role = #coop.role<input>})
    -> tensor<f32> attributes {coop.step} {
  %gw = coop.compute "aten.mm"(%xt, %dy) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %wt = coop.view "aten.t"(%w) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %dx = coop.compute "aten.mm"(%dy, %wt) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %e = coop.compute "aten.exp"(%dx) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = coop.compute "aten.sum"(%e) : (tensor<4x4xf32>) -> tensor<f32>
  %w1 = coop.compute "aten.add_.Tensor"(%w, %gw) {args = {alpha = -0.1 : f64}, inplace = array<i64: 0>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %s : tensor<f32>
}

// -----

// Not state updates, so nothing moves (each would move up to right after
// its last input): one with a fresh result beside its in-place one, an
// in-place write over a computed value (relu_), a random one, and one that
// writes the state through a view (whose source may have other readers).
// CHECK-LABEL: func.func @not_updates
// CHECK: coop.compute "aten.mm"
// CHECK-NEXT: coop.compute "aten.exp"
// CHECK-NEXT: coop.compute "aten.add_.Tensor"(%arg1, %{{.*}}) {inplace = array<i64: 0, -1>}
// CHECK-NEXT: coop.compute "aten.relu_"
// CHECK-NEXT: coop.compute "aten.bernoulli_.Tensor"
// CHECK-NEXT: coop.view "aten.view"(%arg3)
// CHECK-NEXT: coop.compute "aten.add_.Tensor"(%{{.*}}, %{{.*}}) {inplace = array<i64: 0>}
// CHECK-NEXT: return
func.func @not_updates(%w: tensor<4x4xf32> {coop.role = #coop.role<parameter>},
                       %u: tensor<4x4xf32> {coop.role = #coop.role<parameter>},
                       %m: tensor<4x4xf32> {coop.role = #coop.role<optimizer_state>},
                       %v: tensor<4x4xf32> {coop.role = #coop.role<optimizer_state>},
                       %x: tensor<4x4xf32> {coop.role = #coop.role<input>})
    -> tensor<4x4xf32> attributes {coop.step} {
  %g = coop.compute "aten.mm"(%x, %w) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %e = coop.compute "aten.exp"(%x) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %u1:2 = coop.compute "aten.add_.Tensor"(%u, %g) {inplace = array<i64: 0, -1>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>)
  %r = coop.compute "aten.relu_"(%e) {inplace = array<i64: 0>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %m1 = coop.compute "aten.bernoulli_.Tensor"(%m, %g) {inplace = array<i64: 0>, rng = #coop.rng<seed = 1, offset = 0>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %vv = coop.view "aten.view"(%v) {args = {size = [4, 4]}} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %v1 = coop.compute "aten.add_.Tensor"(%vv, %g) {inplace = array<i64: 0>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// -----

// SGD with momentum and weight decay: the decayed gradient replaces the
// gradient, which only it reads, so it moves up with the momentum's update.
// CHECK-LABEL: func.func @weight_decay
// CHECK: %[[GW:.*]] = coop.compute "aten.mm"(%arg2, %arg3)
// CHECK-NEXT: %[[D:.*]] = coop.compute "aten.add.Tensor"(%[[GW]], %arg0)
// CHECK-NEXT: %[[B1:.*]] = coop.compute "aten.mul_.Tensor"(%arg1)
// CHECK-NEXT: %[[B2:.*]] = coop.compute "aten.add_.Tensor"(%[[B1]], %[[D]])
// CHECK-NEXT: %[[WT:.*]] = coop.view "aten.t"(%arg0)
// CHECK-NEXT: %[[DX:.*]] = coop.compute "aten.mm"(%arg3, %[[WT]])
// CHECK-NEXT: %[[E:.*]] = coop.compute "aten.exp"(%[[DX]])
// CHECK-NEXT: %[[W1:.*]] = coop.compute "aten.add_.Tensor"(%arg0, %[[B2]])
// CHECK-NEXT: return %[[E]]
func.func @weight_decay(%w: tensor<4x4xf32> {coop.role = #coop.role<parameter>},
                        %buf: tensor<4x4xf32> {coop.role = #coop.role<optimizer_state>},
                        %xt: tensor<4x4xf32> {coop.role = #coop.role<input>},
                        %dy: tensor<4x4xf32> {coop.role = #coop.role<input>})
    -> tensor<4x4xf32> attributes {coop.step} {
  %gw = coop.compute "aten.mm"(%xt, %dy) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %wt = coop.view "aten.t"(%w) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %dx = coop.compute "aten.mm"(%dy, %wt) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %e = coop.compute "aten.exp"(%dx) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %d = coop.compute "aten.add.Tensor"(%gw, %w) {args = {alpha = 1.0e-4 : f64}} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %b1 = coop.compute "aten.mul_.Tensor"(%buf) {args = {other = 0.9 : f64}, inplace = array<i64: 0>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %b2 = coop.compute "aten.add_.Tensor"(%b1, %d) {inplace = array<i64: 0>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %w1 = coop.compute "aten.add_.Tensor"(%w, %b2) {args = {alpha = -0.1 : f64}, inplace = array<i64: 0>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %e : tensor<4x4xf32>
}

// -----

// The gradient is also returned scaled: it lives on whatever moves, and
// the decayed copy moved up would only be one more tensor alive meanwhile.
// Nothing moves.
// CHECK-LABEL: func.func @decay_of_a_gradient_read_elsewhere
// CHECK: coop.compute "aten.mm"
// CHECK-NEXT: coop.compute "aten.mul.Scalar"
// CHECK-NEXT: coop.compute "aten.exp"
// CHECK-NEXT: coop.compute "aten.add.Tensor"
// CHECK-NEXT: coop.compute "aten.add_.Tensor"
// CHECK-NEXT: return
func.func @decay_of_a_gradient_read_elsewhere(
    %w: tensor<4x4xf32> {coop.role = #coop.role<parameter>},
    %buf: tensor<4x4xf32> {coop.role = #coop.role<optimizer_state>},
    %xt: tensor<4x4xf32> {coop.role = #coop.role<input>},
    %dy: tensor<4x4xf32> {coop.role = #coop.role<input>})
    -> (tensor<4x4xf32>, tensor<4x4xf32>) attributes {coop.step} {
  %gw = coop.compute "aten.mm"(%xt, %dy) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %k = coop.compute "aten.mul.Scalar"(%gw) {args = {other = 2.0 : f64}} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %e = coop.compute "aten.exp"(%dy) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %d = coop.compute "aten.add.Tensor"(%gw, %w) {args = {alpha = 1.0e-4 : f64}} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %b = coop.compute "aten.add_.Tensor"(%buf, %d) {inplace = array<i64: 0>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %e, %k : tensor<4x4xf32>, tensor<4x4xf32>
}
