// The online policy evicts what was used longest ago; lookahead evicts what
// is read again furthest in the future, as does the schedule the default
// search computes ahead of time (it tries it first and keeps it).
// RUN: coop-opt %s --coop-plan-memory="budget=2KiB policy=coop pack=false" --coop-verify-plan | FileCheck %s --check-prefix=COOP
// RUN: coop-opt %s --coop-plan-memory="budget=2KiB policy=lookahead pack=false" --coop-verify-plan | FileCheck %s --check-prefix=LOOKAHEAD
// RUN: coop-opt %s --coop-plan-memory="budget=2KiB report=true" --coop-verify-plan -o /dev/null | FileCheck %s --check-prefix=SEARCH

// Worked by hand. Four 512-byte slots; x is persistent. a, b, c fill the
// arena and are read again in that order (by e, f, g); d needs a slot.
// coop scores a (the stalest) lowest and evicts it, then has to recompute
// a for e, evicting b, and e's result evicts c: three recomputations.
// lookahead evicts c (read last), e's result evicts b, and only b and c
// come back: two.
// COOP-LABEL: func.func @belady
// COOP-SAME: policy = "coop", recomputes = 3 : i64
// COOP: %[[A:.*]] = coop.compute "aten.exp"
// COOP: %[[B:.*]] = coop.compute "aten.sin"
// COOP: %[[C:.*]] = coop.compute "aten.cos"
// COOP-NEXT: coop.evict %[[A]]
// COOP-NEXT: coop.compute "aten.neg"

// LOOKAHEAD-LABEL: func.func @belady
// LOOKAHEAD-SAME: policy = "lookahead", recomputes = 2 : i64
// LOOKAHEAD: %[[A:.*]] = coop.compute "aten.exp"
// LOOKAHEAD: %[[B:.*]] = coop.compute "aten.sin"
// LOOKAHEAD: %[[C:.*]] = coop.compute "aten.cos"
// LOOKAHEAD-NEXT: coop.evict %[[C]]
// LOOKAHEAD-NEXT: coop.compute "aten.neg"
// LOOKAHEAD-NEXT: coop.evict %[[B]]
// LOOKAHEAD-NEXT: coop.compute "aten.add"(%[[A]]

// The policies come first, one quick simulation each; the first schedule
// plans as lookahead does, and the first plan found of equal cost wins.
// coop, dtr and dte recompute three times where lookahead's plan does
// twice: each stops once its cost can no longer be below that plan's
// (branch and bound). The schedule with long recompute chains makes the
// same evictions as the first one: it is not simulated again (it would
// follow the first). The second half of the candidates is the first
// again, placing from one end. Last, each policy whose own run a bound
// stopped is planned as `policy=` plans it: coop's three recomputations,
// as above. Then the capped round: every candidate again, those whose
// schedule keeps the live bytes nearest the budget first, in an arena a
// quarter larger, their live bytes capped at the budget (lookahead's at
// the same cost: it keeps the first plan).
// SEARCH: coop-plan-memory @belady: policy lookahead, budget 2048 (2.00 KiB)
// SEARCH-NEXT: plan search: 46 candidates tried; won: lookahead, quick
// SEARCH-NEXT: lookahead, quick: 28.57 %
// SEARCH-NEXT: coop, quick: no plan (cost bound)
// SEARCH-NEXT: dtr, quick: no plan (cost bound)
// SEARCH-NEXT: dte, quick: no plan (cost bound)
// SEARCH-NEXT: lookahead after evictions scheduled for 100.0 % of the budget, quick: 28.57 %
// SEARCH: coop, thorough: no plan (cost bound)
// Then every candidate again with one-ended placement.
// SEARCH: lookahead after evictions scheduled for 100.0 % of the budget (one-ended placement), quick: 28.57 %
// SEARCH: coop (one-ended placement), thorough: no plan (cost bound)
// SEARCH: coop, unbounded: 42.86 %
// SEARCH: lookahead, capped: 28.57 %
// SEARCH: lookahead (single victims) (one-ended placement), capped: 28.57 %
// SEARCH: recomputations: 2
func.func @belady(%x: tensor<128xf32> {coop.role = #coop.role<input>})
    -> tensor<128xf32> attributes {coop.step} {
  %a = coop.compute "aten.exp"(%x) {cost_us = 1.0 : f64} : (tensor<128xf32>) -> tensor<128xf32>
  %b = coop.compute "aten.sin"(%x) {cost_us = 1.0 : f64} : (tensor<128xf32>) -> tensor<128xf32>
  %c = coop.compute "aten.cos"(%x) {cost_us = 1.0 : f64} : (tensor<128xf32>) -> tensor<128xf32>
  %d = coop.compute "aten.neg"(%x) {cost_us = 1.0 : f64} : (tensor<128xf32>) -> tensor<128xf32>
  %e = coop.compute "aten.add"(%a, %d) {cost_us = 1.0 : f64} : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
  %f = coop.compute "aten.add"(%e, %b) {cost_us = 1.0 : f64} : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
  %g = coop.compute "aten.add"(%f, %c) {cost_us = 1.0 : f64} : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
  return %g : tensor<128xf32>
}
