// Where the planner's costs come from, in the report of --coop-compile
// (which costs the ops that have none) and of --coop-plan-memory (which
// does not, and warns).
// RUN: split-file %s %t
// RUN: coop-opt %t/uncosted.mlir --coop-compile="budget=2048 report=true" -o /dev/null | FileCheck %s --check-prefix=ROOFLINE
// RUN: coop-opt %t/costed.mlir --coop-compile="budget=2048 report=true" -o /dev/null | FileCheck %s --check-prefix=GIVEN
// RUN: coop-opt %t/uncosted.mlir "--coop-annotate-costs=profile=%t/profile.txt" --coop-compile="budget=2048 report=true" -o /dev/null | FileCheck %s --check-prefix=PROFILE
// RUN: coop-opt %t/uncosted.mlir "--coop-annotate-costs=device=cpu" --coop-compile="budget=2048 report=true" -o /dev/null | FileCheck %s --check-prefix=DEVICE
// RUN: coop-opt %t/uncosted.mlir --coop-plan-memory="budget=2048 report=true" -o /dev/null | FileCheck %s --check-prefix=NONE
// RUN: coop-opt %t/costed.mlir --coop-plan-memory="budget=2048 report=true" -o /dev/null | FileCheck %s --check-prefix=GIVEN

// Every op costed by the a100 roofline, planned with those costs.
// ROOFLINE: costs:              roofline (a100) for 5 ops
// ROOFLINE-NOT: warning
// ROOFLINE: compute overhead:

// Costs in the input are kept, and said to be.
// GIVEN: costs:              given in the input for 5 ops
// GIVEN-NOT: warning

// A profile for one kernel, the roofline for the rest; the pipeline's own
// costing then has nothing left to do.
// PROFILE: costs:              profile table '{{.*}}profile.txt' for 1 ops, roofline (a100) for 4 ops
// PROFILE-NOT: warning

// A roofline of another device, run before the pipeline, is kept.
// DEVICE: costs:              roofline (cpu) for 5 ops

// Planning with every cost zero recomputes blindly: a warning.
// NONE: costs:              none for 5 ops
// NONE-NEXT: warning: 5 of 5 compute ops have no cost (cost_us): the planner counts their recomputation as free; cost them with --coop-annotate-costs (--coop-compile does)

//--- uncosted.mlir
func.func @step(%x: tensor<128xf32> {coop.role = #coop.role<input>}) -> tensor<128xf32> attributes {coop.step} {
  %a = coop.compute "aten.exp"(%x) : (tensor<128xf32>) -> tensor<128xf32>
  %d = coop.compute "aten.cos"(%x) : (tensor<128xf32>) -> tensor<128xf32>
  %b = coop.compute "aten.sin"(%a) : (tensor<128xf32>) -> tensor<128xf32>
  %c = coop.compute "aten.add"(%a, %b) : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
  %e = coop.compute "aten.mul"(%c, %d) : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
  return %e : tensor<128xf32>
}

//--- costed.mlir
func.func @step(%x: tensor<128xf32> {coop.role = #coop.role<input>}) -> tensor<128xf32> attributes {coop.step} {
  %a = coop.compute "aten.exp"(%x) {cost_us = 9.0 : f64} : (tensor<128xf32>) -> tensor<128xf32>
  %d = coop.compute "aten.cos"(%x) {cost_us = 1.0 : f64} : (tensor<128xf32>) -> tensor<128xf32>
  %b = coop.compute "aten.sin"(%a) {cost_us = 1.0 : f64} : (tensor<128xf32>) -> tensor<128xf32>
  %c = coop.compute "aten.add"(%a, %b) {cost_us = 1.0 : f64} : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
  %e = coop.compute "aten.mul"(%c, %d) {cost_us = 1.0 : f64} : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
  return %e : tensor<128xf32>
}

//--- profile.txt
aten.exp  128xf32  7.5
