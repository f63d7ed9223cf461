// The bundled default model that README's main command plans.
// RUN: coop-opt %coop_src_root/models/mlp.mlir --coop-memory-stats -o /dev/null | FileCheck %s
// The checked-in file is exactly what its generator writes.
// RUN: %python %coop_src_root/models/gen_mlp_step.py | diff - %coop_src_root/models/mlp.mlir

// CHECK-LABEL: coop-memory-stats @mlp_train_step
// CHECK-NEXT:   ops:               112
// CHECK-NEXT:   tensors:           149
// CHECK-NEXT:   storages:          87
// CHECK-NEXT:   persistent bytes:  1462352 (1.39 MiB)
// CHECK-NEXT:   peak live bytes:   5268604 (5.02 MiB) at op #35 'aten.native_dropout_backward'
// CHECK-NEXT:   memory floor:      2248784 (2.14 MiB) at op #36 'aten.threshold_backward'
