// coop-run --check proves a plan before anything is allocated: the first
// violation is named with its launch, kernel and buffers, exit non-zero; a
// plain run refuses the same plan before it allocates the arena.

// RUN: coop-translate --coop-rt-to-plan %s -o %t.plan
// RUN: not coop-run %t.plan --check 2>&1 | FileCheck %s --check-prefix=BATCH
// RUN: not coop-run %t.plan --steps 1 2>&1 | FileCheck %s --check-prefix=BATCH
// BATCH: coop-run: cannot load the plan: {{.*}}: invalid Plan: launch #2 'aten.mul.Tensor': input #1 reads bytes [0, 16), which hold no single value there: launch #1 'aten.sum' output #0 (bytes [0, 4)) wrote over them

// x [4] at 0, w [4] at 16: a = x * w at 32, the loss sum(a) written over
// the batch x, which the backward (g = a * x) reads again.
coop_rt.program @step arena(64) {
  coop_rt.argument 0 "x" <input> <offset = 0, size = 16, element_type = f32, shape = [4], strides = [1], element_offset = 0>
  coop_rt.argument 1 "w" <parameter> <offset = 16, size = 16, element_type = f32, shape = [4], strides = [1], element_offset = 0>
  coop_rt.launch "aten.mul.Tensor"([#coop_rt.buf<offset = 0, size = 16, element_type = f32, shape = [4], strides = [1], element_offset = 0>, #coop_rt.buf<offset = 16, size = 16, element_type = f32, shape = [4], strides = [1], element_offset = 0>]) -> ([#coop_rt.buf<offset = 32, size = 16, element_type = f32, shape = [4], strides = [1], element_offset = 0>])
  coop_rt.launch "aten.sum"([#coop_rt.buf<offset = 32, size = 16, element_type = f32, shape = [4], strides = [1], element_offset = 0>]) -> ([#coop_rt.buf<offset = 0, size = 4, element_type = f32, shape = [], strides = [], element_offset = 0>])
  coop_rt.launch "aten.mul.Tensor"([#coop_rt.buf<offset = 32, size = 16, element_type = f32, shape = [4], strides = [1], element_offset = 0>, #coop_rt.buf<offset = 0, size = 16, element_type = f32, shape = [4], strides = [1], element_offset = 0>]) -> ([#coop_rt.buf<offset = 48, size = 16, element_type = f32, shape = [4], strides = [1], element_offset = 0>])
  coop_rt.output [#coop_rt.buf<offset = 0, size = 4, element_type = f32, shape = [], strides = [], element_offset = 0>]
}
