// Write the Plan file and read it back: the same program.
// RUN: coop-translate --coop-rt-to-plan %s -o %t.plan
// RUN: coop-translate --plan-to-coop-rt %t.plan | FileCheck %s
// The bundled model, compiled end to end, survives the round trip too.
// RUN: coop-opt %coop_src_root/models/mlp.mlir --coop-compile="ratio=0.9" -o %t.rt.mlir
// RUN: coop-translate --coop-rt-to-plan %t.rt.mlir -o %t.mlp.plan
// RUN: coop-translate --plan-to-coop-rt %t.mlp.plan -o %t.back.mlir
// RUN: coop-opt %t.rt.mlir > %t.expected.mlir
// RUN: coop-opt %t.back.mlir | diff %t.expected.mlir -

// CHECK-LABEL: coop_rt.program @step arena(4096)
// CHECK-SAME: attributes {plan = {budget = 4096 : i64, compute_overhead = 2.500000e-01 : f64, policy = "coop"}}
// CHECK-NEXT: coop_rt.argument 0 "x" <input> <offset = 0, size = 32, element_type = f32, shape = [8], strides = [1], element_offset = 0>
// CHECK-NEXT: coop_rt.argument 1 "w" <parameter> <offset = 512, size = 8, element_type = bf16, shape = [2, 2], strides = [1, 2], element_offset = 0>
// CHECK-NEXT: coop_rt.launch "aten.native_dropout"([#coop_rt.buf<offset = 0, size = 32, element_type = f32, shape = [8], strides = [1], element_offset = 0>]) -> ([#coop_rt.buf<offset = 1024, size = 32, element_type = f32, shape = [8], strides = [1], element_offset = 0>, #coop_rt.buf<offset = 1536, size = 8, element_type = i1, shape = [8], strides = [1], element_offset = 0>])
// CHECK-SAME: {args = {dims = [1, -1], flag = true, gone, name = "mean", p = 1.000000e-01 : f64}, cost_us = 3.500000e+00 : f64, recompute_of = 3 : i64, rng = #coop.rng<seed = 42, offset = 7>, workspace = #coop_rt.buf<offset = 2048, size = 16, element_type = i8, shape = [16], strides = [1], element_offset = 0>}
// CHECK-NEXT: coop_rt.launch "aten.add_.Tensor"({{.*}}) -> ({{.*}}) {inplace = array<i64: 0>}
// CHECK-NEXT: coop_rt.output [#coop_rt.buf<offset = 1024, size = 32, element_type = f32, shape = [8], strides = [1], element_offset = 0>]
coop_rt.program @step arena(4096) attributes {plan = {budget = 4096 : i64, policy = "coop", compute_overhead = 0.25 : f64}} {
  coop_rt.argument 0 "x" <input> <offset = 0, size = 32, element_type = f32, shape = [8], strides = [1], element_offset = 0>
  coop_rt.argument 1 "w" <parameter> <offset = 512, size = 8, element_type = bf16, shape = [2, 2], strides = [1, 2], element_offset = 0>
  coop_rt.launch "aten.native_dropout"([#coop_rt.buf<offset = 0, size = 32, element_type = f32, shape = [8], strides = [1], element_offset = 0>]) -> ([#coop_rt.buf<offset = 1024, size = 32, element_type = f32, shape = [8], strides = [1], element_offset = 0>, #coop_rt.buf<offset = 1536, size = 8, element_type = i1, shape = [8], strides = [1], element_offset = 0>]) {args = {p = 0.1 : f64, flag = true, dims = [1, -1], gone, name = "mean"}, cost_us = 3.5 : f64, recompute_of = 3 : i64, rng = #coop.rng<seed = 42, offset = 7>, workspace = #coop_rt.buf<offset = 2048, size = 16, element_type = i8, shape = [16], strides = [1], element_offset = 0>}
  coop_rt.launch "aten.add_.Tensor"([#coop_rt.buf<offset = 1024, size = 32, element_type = f32, shape = [8], strides = [1], element_offset = 0>, #coop_rt.buf<offset = 0, size = 32, element_type = f32, shape = [8], strides = [1], element_offset = 0>]) -> ([#coop_rt.buf<offset = 1024, size = 32, element_type = f32, shape = [8], strides = [1], element_offset = 0>]) {inplace = array<i64: 0>}
  coop_rt.output [#coop_rt.buf<offset = 1024, size = 32, element_type = f32, shape = [8], strides = [1], element_offset = 0>]
}
