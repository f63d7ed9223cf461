// RUN: coop-opt %s --coop-plan-memory="budget=440 alignment=4 partition=false pack=false policy=coop" --coop-verify-plan | FileCheck %s --check-prefix=COOP
// RUN: coop-opt %s --coop-plan-memory="budget=440 alignment=4 partition=false pack=false policy=dtr" --coop-verify-plan | FileCheck %s --check-prefix=DTR
// RUN: coop-opt %s --coop-plan-memory="budget=440 alignment=4 partition=false pack=false policy=coop window=false" --coop-verify-plan | FileCheck %s --check-prefix=NOWINDOW
// RUN: coop-opt %s --coop-plan-memory="budget=440 alignment=4 partition=false pack=false policy=dte" --coop-verify-plan | FileCheck %s --check-prefix=DTE
// RUN: not coop-opt %s --coop-plan-memory="budget=440 alignment=4 partition=false pack=false policy=none" 2>&1 | FileCheck %s --check-prefix=NONE

// The paper's motivating example, byte-exact (alignment 4, one-ended
// placement). x [0, 40), then A0..A4 of 80 bytes each fill [40, 440), with
// costs 1, 10, 1, 10, 1. BIG needs 160 contiguous bytes. The window's
// cheapest contiguous run is {A0, A1} = [40, 200): two evictions, BIG lands
// there. DTR evicts the cheapest tensors wherever they are: A0 and A2 leave
// two 80-byte holes that do not touch, so it must evict A1 too.
// COOP-LABEL: func.func @motivating
// COOP: %[[A0:.*]] = coop.compute "aten.relu"(%arg0) {{{.*}}offsets = array<i64: 40>}
// COOP-NEXT: %[[A1:.*]] = coop.compute "aten.relu"(%arg0) {{{.*}}offsets = array<i64: 120>}
// COOP-NEXT: %[[A2:.*]] = coop.compute "aten.relu"(%arg0) {{{.*}}offsets = array<i64: 200>}
// COOP: coop.evict %[[A0]]
// COOP-NEXT: coop.evict %[[A1]]
// COOP-NEXT: coop.compute "aten.big"(%arg0) {offsets = array<i64: 40>}
// DTR-LABEL: func.func @motivating
// DTR: %[[A0:.*]] = coop.compute "aten.relu"
// DTR-NEXT: %[[A1:.*]] = coop.compute "aten.relu"
// DTR-NEXT: %[[A2:.*]] = coop.compute "aten.relu"
// DTR: coop.evict %[[A0]]
// DTR-NEXT: coop.evict %[[A2]]
// DTR-NEXT: coop.evict %[[A1]]
// DTR-NEXT: coop.compute "aten.big"(%arg0) {offsets = array<i64: 40>}
// DTE counts the free bytes beside a tensor: once A0 is gone, A1 (cost 10,
// staleness 12, 80 free bytes beside it) scores 10 / (12 * 160) and A2
// (cost 1, staleness 11, none) 1 / (11 * 80), lower: DTE also takes A2
// before A1, three evictions.
// DTE-LABEL: func.func @motivating
// DTE: %[[A0:.*]] = coop.compute "aten.relu"
// DTE-NEXT: %[[A1:.*]] = coop.compute "aten.relu"
// DTE-NEXT: %[[A2:.*]] = coop.compute "aten.relu"
// DTE: coop.evict %[[A0]]
// DTE-NEXT: coop.evict %[[A2]]
// DTE-NEXT: coop.evict %[[A1]]
// DTE-NEXT: coop.compute "aten.big"(%arg0) {offsets = array<i64: 40>}
// Without rematerialization the step does not fit at all.
// NONE: error: cannot plan @motivating with policy 'none': out of memory at op #5 'aten.big' under policy none
// Without the window, coop's score picks single tensors like DTR does.
// NOWINDOW-LABEL: func.func @motivating
// NOWINDOW: %[[A0:.*]] = coop.compute "aten.relu"
// NOWINDOW-NEXT: %[[A1:.*]] = coop.compute "aten.relu"
// NOWINDOW-NEXT: %[[A2:.*]] = coop.compute "aten.relu"
// NOWINDOW: coop.evict %[[A0]]
// NOWINDOW-NEXT: coop.evict %[[A2]]
// NOWINDOW-NEXT: coop.evict %[[A1]]
func.func @motivating(%x: tensor<10xf32> {coop.role = #coop.role<input>})
    -> (tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>)
    attributes {coop.step} {
  %a0 = coop.compute "aten.relu"(%x) {cost_us = 1.0 : f64} : (tensor<10xf32>) -> tensor<20xf32>
  %a1 = coop.compute "aten.relu"(%x) {cost_us = 10.0 : f64} : (tensor<10xf32>) -> tensor<20xf32>
  %a2 = coop.compute "aten.relu"(%x) {cost_us = 1.0 : f64} : (tensor<10xf32>) -> tensor<20xf32>
  %a3 = coop.compute "aten.relu"(%x) {cost_us = 10.0 : f64} : (tensor<10xf32>) -> tensor<20xf32>
  %a4 = coop.compute "aten.relu"(%x) {cost_us = 1.0 : f64} : (tensor<10xf32>) -> tensor<20xf32>
  %big = coop.compute "aten.big"(%x) : (tensor<10xf32>) -> tensor<40xf32>
  %u0 = coop.compute "aten.use"(%a0, %big) {cost_us = 1.0 : f64} : (tensor<20xf32>, tensor<40xf32>) -> tensor<1xf32>
  %u1 = coop.compute "aten.use"(%a1, %big) {cost_us = 1.0 : f64} : (tensor<20xf32>, tensor<40xf32>) -> tensor<1xf32>
  %u2 = coop.compute "aten.use"(%a2, %big) {cost_us = 1.0 : f64} : (tensor<20xf32>, tensor<40xf32>) -> tensor<1xf32>
  %u3 = coop.compute "aten.use"(%a3, %big) {cost_us = 1.0 : f64} : (tensor<20xf32>, tensor<40xf32>) -> tensor<1xf32>
  %u4 = coop.compute "aten.use"(%a4, %big) {cost_us = 1.0 : f64} : (tensor<20xf32>, tensor<40xf32>) -> tensor<1xf32>
  return %u0, %u1, %u2, %u3, %u4 : tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>
}
