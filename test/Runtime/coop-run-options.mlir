// coop-run's numeric options are range-checked, naming the option and its
// range; a directory, an empty file or an altered Plan file is named as such.

// RUN: coop-translate --coop-rt-to-plan %s -o %t.plan
// RUN: coop-run %t.plan --check | FileCheck %s --check-prefix=OK
// OK: plan 'step': 1 launches, arena 64 bytes: verified

// RUN: not coop-run %t.plan --steps 99999999999999999999 2>&1 | FileCheck %s --check-prefix=STEPS
// STEPS: coop-run: --steps needs an integer in [0, 1000000], not '99999999999999999999'
// RUN: not coop-run %t.plan --steps 1000001 2>&1 | FileCheck %s --check-prefix=STEPS-MAX
// STEPS-MAX: coop-run: --steps needs an integer in [0, 1000000], not '1000001'
// RUN: not coop-run %t.plan --steps 2>&1 | FileCheck %s --check-prefix=STEPS-NONE
// STEPS-NONE: coop-run: --steps needs an integer in [0, 1000000]
// RUN: not coop-run %t.plan --seed 99999999999999999999 2>&1 | FileCheck %s --check-prefix=SEED
// SEED: coop-run: --seed needs an integer in [0, 9223372036854775807], not '99999999999999999999'
// RUN: not coop-run %t.plan --seed -1 2>&1 | FileCheck %s --check-prefix=SEED-NEGATIVE
// SEED-NEGATIVE: coop-run: --seed needs an integer in [0, 9223372036854775807], not '-1'
// RUN: not coop-run %t.plan --profile %t.table --repeat 1x 2>&1 | FileCheck %s --check-prefix=REPEAT
// REPEAT: coop-run: --repeat needs an integer in [1, 1000000], not '1x'

// RUN: not coop-run %S --check 2>&1 | FileCheck %s --check-prefix=DIRECTORY
// DIRECTORY: coop-run: cannot load the plan: '{{.*}}Runtime' is a directory, not a file
// RUN: printf '' > %t.empty
// RUN: not coop-run %t.empty --check 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: coop-run: cannot load the plan: {{.*}}: invalid Plan: empty file, not a Plan file
// RUN: %python %S/../Target/Inputs/plan_file.py flip %t.plan %t.altered 3
// RUN: not coop-run %t.altered --check 2>&1 | FileCheck %s --check-prefix=ALTERED
// ALTERED: coop-run: cannot load the plan: {{.*}}: invalid Plan: corrupted: the plan's bytes were altered

coop_rt.program @step arena(64) {
  coop_rt.argument 0 "x" <input> <offset = 0, size = 16, element_type = f32, shape = [4], strides = [1], element_offset = 0>
  coop_rt.launch "aten.relu"([#coop_rt.buf<offset = 0, size = 16, element_type = f32, shape = [4], strides = [1], element_offset = 0>]) -> ([#coop_rt.buf<offset = 16, size = 16, element_type = f32, shape = [4], strides = [1], element_offset = 0>])
  coop_rt.output [#coop_rt.buf<offset = 16, size = 16, element_type = f32, shape = [4], strides = [1], element_offset = 0>]
}
