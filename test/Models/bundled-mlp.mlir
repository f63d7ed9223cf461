// The bundled default model that README's main command plans.
// RUN: coop-opt %coop_src_root/models/mlp.mlir --coop-memory-stats -o /dev/null | FileCheck %s
// The checked-in file is exactly what its generator writes.
// RUN: %python %coop_src_root/models/gen_mlp_step.py | diff - %coop_src_root/models/mlp.mlir

// CHECK-LABEL: coop-memory-stats @mlp_train_step
// CHECK-NEXT:   ops:               176
// CHECK-NEXT:   tensors:           233
// CHECK-NEXT:   storages:          135
// CHECK-NEXT:   persistent bytes:  2519120 (2.40 MiB)
// CHECK-NEXT:   peak live bytes:   14845052 (14.16 MiB) at op #51 'aten.native_dropout_backward'
// CHECK-NEXT:   memory floor:      4091984 (3.90 MiB) at op #52 'aten.threshold_backward'
