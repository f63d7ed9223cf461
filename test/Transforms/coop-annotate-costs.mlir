// RUN: split-file %s %t
// RUN: coop-opt %t/step.mlir --coop-annotate-costs=device=a100 | FileCheck %s
// RUN: coop-opt %t/step.mlir "--coop-annotate-costs=device=a100 profile=%t/profile.txt" | FileCheck %s --check-prefix=PROFILE
// RUN: not coop-opt %t/step.mlir --coop-annotate-costs=device=tpu 2>&1 | FileCheck %s --check-prefix=DEVICE
// RUN: not coop-opt %t/step.mlir "--coop-annotate-costs=profile=%t/bad.txt" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not coop-opt %t/step.mlir "--coop-annotate-costs=profile=%t/missing.txt" 2>&1 | FileCheck %s --check-prefix=MISSING

// Where the costs came from, for the report of coop-plan-memory.
// CHECK: attributes {coop.costs = {device = "a100", given = 1 : i64, profile = 0 : i64, roofline = 3 : i64}, coop.step}
// PROFILE: attributes {coop.costs = {device = "a100", given = 1 : i64, profile = 2 : i64, profile_table = "{{.*}}profile.txt", roofline = 1 : i64}, coop.step}
// Views get no cost.
// CHECK: coop.view "aten.t"(%{{.*}}) : (tensor<128x256xf32>) -> tensor<256x128xf32>
// A matmul is compute bound: 2 * 512 * 256 * 128 FLOP at 19.5 TFLOP/s.
// CHECK: coop.compute "aten.mm"({{.*}}) {cost_us = 1.72074010{{[0-9]*}} : f64}
// relu_ is memory bound: 2 * 256 KiB at 1.555 TB/s.
// CHECK: coop.compute "aten.relu_"({{.*}}) {cost_us = 0.3371627{{[0-9]*}} : f64, inplace = array<i64: 0>}
// A convolution: 2 * (2 * 64 * 112 * 112) * (3 * 7 * 7) FLOP.
// CHECK: coop.compute "aten.convolution"({{.*}}) {args = {transposed = false}, cost_us = 24.20799{{[0-9]*}} : f64}
// A cost that is already there is kept.
// CHECK: coop.compute "aten.sum"({{.*}}) {cost_us = 4.250000e+00 : f64}

// PROFILE: coop.compute "aten.mm"({{.*}}) {cost_us = 8.500000e+00 : f64}
// PROFILE: coop.compute "aten.relu_"({{.*}}) {cost_us = 2.500000e-01 : f64
// PROFILE: coop.compute "aten.convolution"({{.*}}) {args = {transposed = false}, cost_us = 24.20799

// DEVICE: coop-annotate-costs: unknown device 'tpu'; expected one of a100, v100, h100, cpu
// BAD: bad.txt:0:0: error: coop-annotate-costs: bad profile table, line 2: 'fast' is not a non-negative time in microseconds
// MISSING: coop-annotate-costs: cannot read profile: cannot open input file

//--- step.mlir
func.func @step(%w: tensor<128x256xf32> {coop.role = #coop.role<parameter>},
                %x: tensor<512x256xf32> {coop.role = #coop.role<input>},
                %img: tensor<2x3x224x224xf32> {coop.role = #coop.role<input>},
                %k: tensor<64x3x7x7xf32> {coop.role = #coop.role<parameter>})
    -> (tensor<512x128xf32>, tensor<f32>) attributes {coop.step} {
  %wt = coop.view "aten.t"(%w) : (tensor<128x256xf32>) -> tensor<256x128xf32>
  %y = coop.compute "aten.mm"(%x, %wt)
      : (tensor<512x256xf32>, tensor<256x128xf32>) -> tensor<512x128xf32>
  %r = coop.compute "aten.relu_"(%y) {inplace = array<i64: 0>}
      : (tensor<512x128xf32>) -> tensor<512x128xf32>
  %c = coop.compute "aten.convolution"(%img, %k) {args = {transposed = false}}
      : (tensor<2x3x224x224xf32>, tensor<64x3x7x7xf32>) -> tensor<2x64x112x112xf32>
  %s = coop.compute "aten.sum"(%c) {cost_us = 4.25 : f64}
      : (tensor<2x64x112x112xf32>) -> tensor<f32>
  return %r, %s : tensor<512x128xf32>, tensor<f32>
}
//--- profile.txt
# kernel  operand signatures  microseconds
aten.mm 512x256xf32,256x128xf32 8.5
aten.relu_ * 0.25
//--- bad.txt
aten.mm * 1.0
aten.relu_ * fast
