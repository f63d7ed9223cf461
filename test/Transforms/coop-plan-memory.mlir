// RUN: coop-opt %s --coop-plan-memory="budget=2KiB" --coop-verify-plan | FileCheck %s

// Worked by hand. Arena of 2048 bytes, 512-byte slots; x is persistent and
// takes slot 0. Cheap tensors go to the high edge of the best-fitting free
// piece: a -> 1536, b -> 1024, c -> 512. The arena is full when d needs a
// slot: a and b are its pinned inputs, so c (read again by e) is evicted and
// d takes its slot. a and b die at d. Before e, c is recomputed into the
// coalesced [1024, 2048), at its high edge, and e takes 1024.
// CHECK-LABEL: func.func @evict_and_recompute
// CHECK-SAME: coop.offset = 0 : i64
// CHECK-SAME: coop.plan = {alignment = 512 : i64, budget = 2048 : i64
// CHECK-SAME: evictions = 1 : i64
// CHECK-SAME: policy = "coop", recomputes = 1 : i64
// CHECK-NEXT: %[[A:.*]] = coop.compute "aten.exp"(%arg0) {{{.*}}offsets = array<i64: 1536>}
// CHECK-NEXT: %[[B:.*]] = coop.compute "aten.sin"(%arg0) {{{.*}}offsets = array<i64: 1024>}
// CHECK-NEXT: %[[C:.*]] = coop.compute "aten.cos"(%arg0) {{{.*}}offsets = array<i64: 512>}
// CHECK-NEXT: coop.evict %[[C]]
// CHECK-NEXT: %[[D:.*]] = coop.compute "aten.add"(%[[A]], %[[B]]) {{{.*}}offsets = array<i64: 512>}
// CHECK-NEXT: coop.free %[[A]]
// CHECK-NEXT: coop.free %[[B]]
// CHECK-NEXT: %[[C2:.*]] = coop.compute "aten.cos"(%arg0) {{{.*}}offsets = array<i64: 1536>, recompute_of = 2 : i64}
// CHECK-NEXT: %[[E:.*]] = coop.compute "aten.mul"(%[[D]], %[[C2]]) {{{.*}}offsets = array<i64: 1024>}
// CHECK-NEXT: coop.free %[[C2]]
// CHECK-NEXT: coop.free %[[D]]
// CHECK-NEXT: return %[[E]]
func.func @evict_and_recompute(%x: tensor<128xf32> {coop.role = #coop.role<input>})
    -> tensor<128xf32> attributes {coop.step} {
  %a = coop.compute "aten.exp"(%x) {cost_us = 1.0 : f64} : (tensor<128xf32>) -> tensor<128xf32>
  %b = coop.compute "aten.sin"(%x) {cost_us = 1.0 : f64} : (tensor<128xf32>) -> tensor<128xf32>
  %c = coop.compute "aten.cos"(%x) {cost_us = 1.0 : f64} : (tensor<128xf32>) -> tensor<128xf32>
  %d = coop.compute "aten.add"(%a, %b) {cost_us = 1.0 : f64} : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
  %e = coop.compute "aten.mul"(%d, %c) {cost_us = 1.0 : f64} : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
  return %e : tensor<128xf32>
}
