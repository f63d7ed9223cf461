// bench/lowerbound's --check-plan on real plans of the bundled MLP: each plan
// is a point of the Checkmate-style relaxation, and run stage by stage with
// the bytes made and freed inside a stage counted (realize()) it fits its
// budget, as a plan the verifier accepts must. No solver needed.
// RUN: coop-opt %coop_src_root/models/mlp.mlir --coop-plan-memory="ratio=0.5" -o %t.default.mlir
// RUN: coop-dump-graph %t.default.mlir -o %t.default.json
// RUN: %python %coop_src_root/bench/lowerbound/checkmate_bound.py %t.default.json --check-plan | FileCheck %s
// RUN: coop-opt %coop_src_root/models/mlp.mlir --coop-plan-memory="ratio=0.5 policy=coop" -o %t.coop.mlir
// RUN: coop-dump-graph %t.coop.mlir -o %t.coop.json
// RUN: %python %coop_src_root/bench/lowerbound/checkmate_bound.py %t.coop.json --check-plan | FileCheck %s

// CHECK-LABEL: mlp_train_step: checking the plan at 7423488 bytes
// CHECK:       the plan's point run stage by stage: peak {{[0-9]+}} B ({{(index order|depth first)}} at stage {{[0-9]+}}), {{[0-9.]+}} % of the budget: fits
// CHECK-NEXT:  the plan is a point of the relaxation: OK
