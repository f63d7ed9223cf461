// The simulator's own plan (pack=false), worked by hand below.
// RUN: coop-opt %s --coop-plan-memory="budget=2KiB policy=coop pack=false" --coop-verify-plan | FileCheck %s
// RUN: coop-opt %s --coop-plan-memory="budget=2KiB policy=coop pack=false report=true svg=%t.svg" -o /dev/null | FileCheck %s --check-prefix=REPORT
// RUN: FileCheck %s --check-prefix=SVG < %t.svg
// The default repacks it offline: same schedule, offsets compacted.
// RUN: coop-opt %s --coop-plan-memory="budget=2KiB policy=coop report=true" --coop-verify-plan | FileCheck %s --check-prefix=PACKED

// PACKED: coop-plan-memory @evict_and_recompute: policy coop, budget 2048 (2.00 KiB)
// PACKED: peak allocated: 2048 (2.00 KiB)
// PACKED-NEXT: arena high water: 2048 (2.00 KiB) (packed offline: dropped-initial, lower bound 2048 (2.00 KiB), optimal)
// PACKED-NEXT: simulated arena: 2048 (2.00 KiB) (best of {{[0-9]+}} tried)
// PACKED-NEXT: compute overhead: 20.00 %
// PACKED: planning time: {{[0-9.]+}} ms ({{[0-9.]+}} ms repacking)
// PACKED-LABEL: func.func @evict_and_recompute
// PACKED-SAME: high_water_bytes = 2048 : i64
// PACKED-SAME: pack = true
// PACKED-SAME: simulated_budget = 2048 : i64
// PACKED: coop.evict
// PACKED: recompute_of = 2 : i64

// REPORT: coop-plan-memory @evict_and_recompute: policy coop, budget 2048 (2.00 KiB)
// REPORT-NEXT: costs: given in the input for 5 ops
// REPORT-NEXT: memory floor: 2048 (2.00 KiB)
// REPORT-NEXT: persistent: 512 (512 B)
// REPORT-NEXT: peak allocated: 2048 (2.00 KiB)
// REPORT-NEXT: arena high water: 2048 (2.00 KiB)
// REPORT-NEXT: compute overhead: 20.00 %
// REPORT-NEXT: fragmentation: 0.00 %
// REPORT-NEXT: evictions: 1 in 1 eviction events
// REPORT-NEXT: recomputations: 1
// REPORT-NEXT: eviction search: {{[0-9.]+}} ms
// REPORT-NEXT: planning time: {{[0-9.]+}} ms

// The picture: the persistent x for the whole step, c evicted at the
// fourth instruction, its recomputation outlined.
// SVG: <svg xmlns="http://www.w3.org/2000/svg"
// SVG: coop plan, budget 2048 bytes: overhead 20.00%, fragmentation 0.00%, 1 evictions, 1 recomputations
// SVG: fill="#9e9e9e"><title>arg0 [0, 512) steps 0-11</title>
// SVG: fill="#3182bd"><title>aten.cos#2:0 [512, 1024) steps 2-3</title>
// SVG: fill="#3182bd" stroke="#6a3d9a" stroke-width="1.5"><title>aten.cos#2:0 [1536, 2048) steps 7-9</title>
// SVG: <line {{.*}} stroke="#d62728"
// SVG: </svg>

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
