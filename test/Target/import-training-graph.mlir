// Graphs are written as protobuf text and encoded with protoc.
// RUN: split-file %s %t
// RUN: protoc --encode=coop_pb.TrainingGraph --proto_path=%coop_src_root/proto training_graph.proto < %t/step.txtpb > %t/step.pb
// RUN: coop-translate --import-training-graph %t/step.pb | FileCheck %s
// Round trip: the imported module parses and verifies again.
// RUN: coop-translate --import-training-graph %t/step.pb | coop-opt | FileCheck %s

// Arguments in tensor order, with their roles; activations are op results.
// CHECK-LABEL: func.func @tiny_step(
// CHECK-SAME: %[[W:.*]]: tensor<4x8xf32> {coop.name = "w", coop.role = #coop.role<parameter>}
// CHECK-SAME: %[[M:.*]]: tensor<4x8xf32> {coop.name = "w.momentum_buffer", coop.role = #coop.role<optimizer_state>}
// CHECK-SAME: %[[MEAN:.*]]: tensor<4xf32> {coop.name = "bn.running_mean", coop.role = #coop.role<buffer>}
// CHECK-SAME: %[[X:.*]]: tensor<2x8xf32> {coop.name = "input0", coop.role = #coop.role<input>}
// CHECK-SAME: -> tensor<f32> attributes {coop.step}

// Views keep their schema arguments; the tensor argument is named by
// operand index under tensor_args.
// CHECK: %[[WT:.*]] = coop.view "aten.t"(%[[W]]) {args = {tensor_args = {self = 0 : i64}}} : (tensor<4x8xf32>) -> tensor<8x4xf32>

// None arguments become unit attributes (printed as a bare name); scalars
// and lists keep their types.
// CHECK: %[[H:.*]] = coop.compute "aten.addmm"(%[[X]], %[[WT]])
// CHECK-SAME: alpha = 1 : i64, beta = 5.000000e-01 : f64, bias,
// CHECK-SAME: tensor_args = {mat1 = 0 : i64, mat2 = 1 : i64}

// An in-place op yields a new version of its operand's storage.
// CHECK: %[[R:.*]] = coop.compute "aten.relu_"(%[[H]]) {{{.*}}inplace = array<i64: 0>}

// Tensor lists keep None entries and operand order; random kernels keep
// their stream key.
// CHECK: %[[D:.*]]:2 = coop.compute "aten.native_dropout"(%[[R]])
// CHECK-SAME: rng = #coop.rng<seed = 7, offset = 16>

// CHECK: coop.compute "aten.index.Tensor"(%[[D]]#0, %[[MEAN]])
// CHECK-SAME: tensor_args = {indices = [unit, 1], self = 0 : i64}

// Extra results are new versions of arguments (running statistics).
// CHECK: coop.compute "aten.update_stats"(%[[MEAN]])
// CHECK-SAME: cost_us = 2.500000e+00 : f64, inplace = array<i64: 0>, workspace_bytes = 64 : i64

// CHECK: %[[LOSS:.*]] = coop.compute "aten.sum"
// CHECK: return %[[LOSS]] : tensor<f32>

//--- step.txtpb
format_version: 1
name: "tiny_step"
tensors { name: "w" shape: [4, 8] dtype: FLOAT32 role: PARAMETER }
tensors { name: "w.momentum_buffer" shape: [4, 8] dtype: FLOAT32 role: OPTIMIZER_STATE }
tensors { name: "bn.running_mean" shape: [4] dtype: FLOAT32 role: BUFFER }
tensors { name: "input0" shape: [2, 8] dtype: FLOAT32 role: INPUT }
tensors { name: "t" shape: [8, 4] dtype: FLOAT32 }
tensors { name: "addmm" shape: [2, 4] dtype: FLOAT32 }
tensors { name: "relu_" shape: [2, 4] dtype: FLOAT32 }
tensors { name: "dropout" shape: [2, 4] dtype: FLOAT32 }
tensors { name: "dropout_mask" shape: [2, 4] dtype: BOOL }
tensors { name: "index" shape: [2] dtype: FLOAT32 }
tensors { name: "mean_v1" shape: [4] dtype: FLOAT32 }
tensors { name: "loss" shape: [] dtype: FLOAT32 }
ops { kind: VIEW kernel: "aten.t" operands: [0] results: [4]
      args { name: "self" value { operand: 0 } } }
ops { kernel: "aten.addmm" operands: [3, 4] results: [5]
      args { name: "bias" value { none: true } }
      args { name: "mat1" value { operand: 0 } }
      args { name: "mat2" value { operand: 1 } }
      args { name: "beta" value { float_value: 0.5 } }
      args { name: "alpha" value { int_value: 1 } } }
ops { kernel: "aten.relu_" operands: [5] results: [6] inplace: [0]
      args { name: "self" value { operand: 0 } } }
ops { kernel: "aten.native_dropout" operands: [6] results: [7, 8]
      rng { seed: 7 offset: 16 }
      args { name: "input" value { operand: 0 } }
      args { name: "p" value { float_value: 0.1 } }
      args { name: "train" value { bool_value: true } } }
ops { kernel: "aten.index.Tensor" operands: [7, 2] results: [9]
      args { name: "self" value { operand: 0 } }
      args { name: "indices" value { list { items { none: true } items { operand: 1 } } } } }
ops { kernel: "aten.update_stats" operands: [2] results: [10] inplace: [0]
      cost_us: 2.5 workspace_bytes: 64
      args { name: "dims" value { list { items { int_value: 0 } items { int_value: 1 } } } } }
ops { kernel: "aten.sum" operands: [9] results: [11] }
outputs: [11]
