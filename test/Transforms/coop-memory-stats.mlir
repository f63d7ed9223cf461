// RUN: coop-opt %s --coop-memory-stats --split-input-file | FileCheck %s
// The pass prints figures and leaves the IR as it was.
// RUN: coop-opt %s --coop-memory-stats --split-input-file | FileCheck %s --check-prefix=IR

// Persistent: w1 128 + x 32 + y 16 = 176 B. Transient storages:
//   h 64 B (op 0 to op 3: relu_ and the view share its buffer),
//   l 4 B (op 3 to the end: it is returned), g 128 B (op 4 to op 5).
// Live per op: 64, 64, 64, 68, 4+128+100 (workspace) = 232, 132.
// Working sets: op 4 touches {l, g} + 100 B workspace = 232.
// CHECK-LABEL: coop-memory-stats @mlp
// CHECK-NEXT:   ops:               6
// CHECK-NEXT:   tensors:           9
// CHECK-NEXT:   storages:          6
// CHECK-NEXT:   persistent bytes:  176 (176 B)
// CHECK-NEXT:   peak live bytes:   408 (408 B) at op #4 'aten.grad'
// CHECK-NEXT:   memory floor:      408 (408 B) at op #4 'aten.grad'
// IR-LABEL: func.func @mlp
// IR: coop.compute "aten.sub_"
func.func @mlp(%w1: tensor<4x8xf32> {coop.role = #coop.role<parameter>},
               %x: tensor<2x4xf32> {coop.role = #coop.role<input>},
               %y: tensor<2xi64> {coop.role = #coop.role<input>})
    -> tensor<f32> attributes {coop.step} {
  %h = coop.compute "aten.mm"(%x, %w1) : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>
  %r = coop.compute "aten.relu_"(%h) {inplace = array<i64: 0>} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %v = coop.view "aten.view"(%r) : (tensor<2x8xf32>) -> tensor<16xf32>
  %l = coop.compute "aten.loss"(%v, %y) : (tensor<16xf32>, tensor<2xi64>) -> tensor<f32>
  %g = coop.compute "aten.grad"(%l, %x) {workspace_bytes = 100 : i64} : (tensor<f32>, tensor<2x4xf32>) -> tensor<4x8xf32>
  %w2 = coop.compute "aten.sub_"(%w1, %g) {inplace = array<i64: 0>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %l : tensor<f32>
}

// -----

// Three branches of 16 B live at once: live per op 16, 32, 48, 64, 48, so
// the peak is 16 + 64 at op 3; the largest working set is op 3's {a, b, d}
// (op 4's {c, d, e} ties, and the first op wins): floor 16 + 48.
// CHECK-LABEL: coop-memory-stats @fan_out
// CHECK:        peak live bytes:   80 (80 B) at op #3 'aten.add'
// CHECK-NEXT:   memory floor:      64 (64 B) at op #3 'aten.add'
func.func @fan_out(%x: tensor<4xf32> {coop.role = #coop.role<input>})
    -> tensor<4xf32> attributes {coop.step} {
  %a = coop.compute "aten.sin"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = coop.compute "aten.cos"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %c = coop.compute "aten.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %d = coop.compute "aten.add"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %e = coop.compute "aten.add"(%d, %c) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %e : tensor<4xf32>
}

// -----

// Sizes are also shown in binary units; functions that are not steps are
// skipped.
// CHECK-NOT: @helper
// CHECK-LABEL: coop-memory-stats @large
// CHECK:        persistent bytes:  4194304 (4.00 MiB)
// CHECK-NEXT:   peak live bytes:   8388608 (8.00 MiB) at op #0 'aten.relu'
func.func @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func @large(%x: tensor<1024x1024xf32> {coop.role = #coop.role<input>})
    -> tensor<1024x1024xf32> attributes {coop.step} {
  %y = coop.compute "aten.relu"(%x) : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  return %y : tensor<1024x1024xf32>
}

// -----

// A step with no ops: everything is persistent and the floor is the
// persistent state.
// CHECK-LABEL: coop-memory-stats @no_ops
// CHECK-NEXT:   ops:               0
// CHECK:        persistent bytes:  1536 (1.50 KiB)
// CHECK-NEXT:   peak live bytes:   1536 (1.50 KiB)
// CHECK-NEXT:   memory floor:      1536 (1.50 KiB)
func.func @no_ops(%w: tensor<384xf32> {coop.role = #coop.role<parameter>}) attributes {coop.step} {
  return
}
