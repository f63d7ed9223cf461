// Bad files: each gets one clear error and a non-zero exit, never a crash.
// RUN: split-file %s %t
// RUN: cd %t && for f in *.txtpb; do protoc --encode=coop_pb.TrainingGraph --proto_path=%coop_src_root/proto training_graph.proto < $f > ${f%%.txtpb}.pb; done

// A file cut short in the middle of a field does not parse.
// RUN: head -c -1 %t/good.pb > %t/truncated.pb
// RUN: not coop-translate --import-training-graph %t/truncated.pb 2>&1 | FileCheck %s --check-prefix=TRUNCATED
// TRUNCATED: error: cannot parse a coop TrainingGraph protobuf from {{[0-9]+}} bytes: the file is truncated or not a training graph

// RUN: printf 'not a protobuf' > %t/text.pb
// RUN: not coop-translate --import-training-graph %t/text.pb 2>&1 | FileCheck %s --check-prefix=TRUNCATED

// An empty file parses as an empty message.
// RUN: printf '' > %t/empty.pb
// RUN: not coop-translate --import-training-graph %t/empty.pb 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: error: not a coop training graph of format version 1 (the file says version 0; an empty file says 0)

// RUN: not coop-translate --import-training-graph %t/no_outputs.pb 2>&1 | FileCheck %s --check-prefix=NO-OUTPUTS
// NO-OUTPUTS: error: the training graph has no outputs (a truncated file?)

// RUN: not coop-translate --import-training-graph %t/future.pb 2>&1 | FileCheck %s --check-prefix=FUTURE
// FUTURE: error: not a coop training graph of format version 1 (the file says version 2

// RUN: not coop-translate --import-training-graph %t/operand_range.pb 2>&1 | FileCheck %s --check-prefix=OPERAND-RANGE
// OPERAND-RANGE: error: op #0 'aten.neg': operand #0 refers to tensor #9, but the graph has 3 tensors

// RUN: not coop-translate --import-training-graph %t/use_before_def.pb 2>&1 | FileCheck %s --check-prefix=USE-BEFORE-DEF
// USE-BEFORE-DEF: error: op #0 'aten.neg': operand #0 reads tensor #2 'b' before any earlier op produces it

// RUN: not coop-translate --import-training-graph %t/twice.pb 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: error: op #1 'aten.relu': result tensor #1 'a' is already produced by an earlier op

// RUN: not coop-translate --import-training-graph %t/writes_argument.pb 2>&1 | FileCheck %s --check-prefix=WRITES-ARG
// WRITES-ARG: error: op #0 'aten.neg': result tensor #0 'x' is a step argument; ops produce activations only

// RUN: not coop-translate --import-training-graph %t/inplace.pb 2>&1 | FileCheck %s --check-prefix=INPLACE
// INPLACE: error: op #0 'aten.relu_': 'inplace' names operand #3, but the op has 1 operands

// RUN: not coop-translate --import-training-graph %t/inplace_count.pb 2>&1 | FileCheck %s --check-prefix=INPLACE-COUNT
// INPLACE-COUNT: error: op #0 'aten.relu_': 'inplace' has 2 entries for 1 results

// RUN: not coop-translate --import-training-graph %t/arg_operand.pb 2>&1 | FileCheck %s --check-prefix=ARG-OPERAND
// ARG-OPERAND: error: op #0 'aten.neg': an argument refers to operand #4, but the op has 1 operands

// RUN: not coop-translate --import-training-graph %t/dtype.pb 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: error: tensor #0 'x' has unknown dtype 0

// RUN: not coop-translate --import-training-graph %t/negative_dim.pb 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE: error: tensor #0 'x' has negative dimension -3

// RUN: not coop-translate --import-training-graph %t/initial_value.pb 2>&1 | FileCheck %s --check-prefix=INITIAL
// INITIAL: error: tensor #0 'x' has an initial value of 3 bytes, but its type 'tensor<2xf32>' needs 8

// RUN: not coop-translate --import-training-graph %t/view_operands.pb 2>&1 | FileCheck %s --check-prefix=VIEW
// VIEW: error: op #0 'aten.expand': a view has exactly one operand, its source, and neither 'inplace' nor 'rng'

// RUN: not coop-translate --import-training-graph %t/output.pb 2>&1 | FileCheck %s --check-prefix=OUTPUT
// OUTPUT: error: step output tensor #5 is not a tensor of the graph or is never produced

// The dialect verifier still runs on what the importer built.
// RUN: not coop-translate --import-training-graph %t/random.pb 2>&1 | FileCheck %s --check-prefix=RANDOM
// RANDOM: error: 'coop.compute' op 'aten.native_dropout' is a random kernel and needs an 'rng' attribute

//--- good.txtpb
format_version: 1
tensors { name: "x" shape: [2] dtype: FLOAT32 role: INPUT }
tensors { name: "a" shape: [2] dtype: FLOAT32 }
ops { kernel: "aten.neg" operands: [0] results: [1] }
outputs: [1]
//--- no_outputs.txtpb
format_version: 1
tensors { name: "x" shape: [2] dtype: FLOAT32 role: INPUT }
//--- future.txtpb
format_version: 2
outputs: [0]
//--- operand_range.txtpb
format_version: 1
tensors { name: "x" shape: [2] dtype: FLOAT32 role: INPUT }
tensors { name: "a" shape: [2] dtype: FLOAT32 }
tensors { name: "b" shape: [2] dtype: FLOAT32 }
ops { kernel: "aten.neg" operands: [9] results: [1] }
outputs: [1]
//--- use_before_def.txtpb
format_version: 1
tensors { name: "x" shape: [2] dtype: FLOAT32 role: INPUT }
tensors { name: "a" shape: [2] dtype: FLOAT32 }
tensors { name: "b" shape: [2] dtype: FLOAT32 }
ops { kernel: "aten.neg" operands: [2] results: [1] }
ops { kernel: "aten.neg" operands: [1] results: [2] }
outputs: [2]
//--- twice.txtpb
format_version: 1
tensors { name: "x" shape: [2] dtype: FLOAT32 role: INPUT }
tensors { name: "a" shape: [2] dtype: FLOAT32 }
ops { kernel: "aten.neg" operands: [0] results: [1] }
ops { kernel: "aten.relu" operands: [1] results: [1] }
outputs: [1]
//--- writes_argument.txtpb
format_version: 1
tensors { name: "x" shape: [2] dtype: FLOAT32 role: INPUT }
ops { kernel: "aten.neg" operands: [0] results: [0] }
outputs: [0]
//--- inplace.txtpb
format_version: 1
tensors { name: "x" shape: [2] dtype: FLOAT32 role: INPUT }
tensors { name: "a" shape: [2] dtype: FLOAT32 }
ops { kernel: "aten.relu_" operands: [0] results: [1] inplace: [3] }
outputs: [1]
//--- inplace_count.txtpb
format_version: 1
tensors { name: "x" shape: [2] dtype: FLOAT32 role: INPUT }
tensors { name: "a" shape: [2] dtype: FLOAT32 }
ops { kernel: "aten.relu_" operands: [0] results: [1] inplace: [0, -1] }
outputs: [1]
//--- arg_operand.txtpb
format_version: 1
tensors { name: "x" shape: [2] dtype: FLOAT32 role: INPUT }
tensors { name: "a" shape: [2] dtype: FLOAT32 }
ops { kernel: "aten.neg" operands: [0] results: [1]
      args { name: "self" value { operand: 4 } } }
outputs: [1]
//--- dtype.txtpb
format_version: 1
tensors { name: "x" shape: [2] role: INPUT }
outputs: [0]
//--- negative_dim.txtpb
format_version: 1
tensors { name: "x" shape: [-3] dtype: FLOAT32 role: INPUT }
outputs: [0]
//--- initial_value.txtpb
format_version: 1
tensors { name: "x" shape: [2] dtype: FLOAT32 role: PARAMETER initial_value: "abc" }
outputs: [0]
//--- view_operands.txtpb
format_version: 1
tensors { name: "x" shape: [2] dtype: FLOAT32 role: INPUT }
tensors { name: "y" shape: [2] dtype: FLOAT32 role: INPUT }
tensors { name: "a" shape: [2] dtype: FLOAT32 }
ops { kind: VIEW kernel: "aten.expand" operands: [0, 1] results: [2] }
outputs: [2]
//--- output.txtpb
format_version: 1
tensors { name: "x" shape: [2] dtype: FLOAT32 role: INPUT }
outputs: [5]
//--- random.txtpb
format_version: 1
tensors { name: "x" shape: [2] dtype: FLOAT32 role: INPUT }
tensors { name: "a" shape: [2] dtype: FLOAT32 }
tensors { name: "mask" shape: [2] dtype: BOOL }
ops { kernel: "aten.native_dropout" operands: [0] results: [1, 2] }
outputs: [1]
