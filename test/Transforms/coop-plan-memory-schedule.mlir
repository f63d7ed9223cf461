// Evictions the default search schedules ahead of time, at the memory floor.
// RUN: coop-opt %s --coop-plan-memory="budget=4KiB report=true" --coop-verify-plan -o /dev/null | FileCheck %s

// Slots of 512 bytes; x is persistent (1). v (2) is read by w and again by
// z; evicting it is the only way under the peak at u (x, v, w, big: 9), and
// rebuilding it for z re-runs exp(x) into a (2), past its last use. Counted
// on top of z's op, every rebuilt value makes 10 slots and the schedule
// misses the budget of 8; what the simulator holds is a and v while v is
// rebuilt, then v and z (3) once a is freed: 8, the floor. The schedule
// counted that way plans, recomputing a and v.
// CHECK: plan search: {{[0-9]+}} candidates tried; won: lookahead after evictions scheduled for 100.0 % of the budget (recomputations counted as held), quick
// CHECK: memory floor: 4096
// CHECK: recomputations: 2
func.func @held(%x: tensor<128xf32> {coop.role = #coop.role<input>})
    -> (tensor<128xf32>, tensor<128xf32>, tensor<384xf32>) attributes {coop.step} {
  %a = coop.compute "aten.exp"(%x) {cost_us = 1.0 : f64} : (tensor<128xf32>) -> tensor<256xf32>
  %v = coop.compute "aten.exp"(%a) {cost_us = 1.0 : f64} : (tensor<256xf32>) -> tensor<256xf32>
  %w = coop.compute "aten.add"(%v, %x) {cost_us = 1.0 : f64} : (tensor<256xf32>, tensor<128xf32>) -> tensor<128xf32>
  %big = coop.compute "aten.exp"(%x) {cost_us = 100.0 : f64} : (tensor<128xf32>) -> tensor<512xf32>
  %u = coop.compute "aten.neg"(%big) {cost_us = 1.0 : f64} : (tensor<512xf32>) -> tensor<128xf32>
  %z = coop.compute "aten.add"(%v, %x) {cost_us = 1.0 : f64} : (tensor<256xf32>, tensor<128xf32>) -> tensor<384xf32>
  return %w, %u, %z : tensor<128xf32>, tensor<128xf32>, tensor<384xf32>
}
