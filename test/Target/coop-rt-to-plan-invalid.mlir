// RUN: coop-translate --coop-rt-to-plan --split-input-file --verify-diagnostics %s -o /dev/null

// A kernel name that is not UTF-8 would make a Plan no reader parses.
coop_rt.program @step arena(64) {
  coop_rt.argument 0 "x" <input> <offset = 0, size = 16, element_type = f32, shape = [4], strides = [1], element_offset = 0>
  // expected-error @+1 {{kernel name is not valid UTF-8}}
  coop_rt.launch "aten.\FFrelu"([#coop_rt.buf<offset = 0, size = 16, element_type = f32, shape = [4], strides = [1], element_offset = 0>]) -> ([#coop_rt.buf<offset = 16, size = 16, element_type = f32, shape = [4], strides = [1], element_offset = 0>])
  coop_rt.output [#coop_rt.buf<offset = 16, size = 16, element_type = f32, shape = [4], strides = [1], element_offset = 0>]
}

// -----

// An argument named both as a scalar and as a tensor: the runtime reads
// them as one map.
coop_rt.program @step arena(64) {
  coop_rt.argument 0 "x" <input> <offset = 0, size = 16, element_type = f32, shape = [4], strides = [1], element_offset = 0>
  // expected-error @+1 {{argument 'self' is given twice}}
  coop_rt.launch "aten.relu"([#coop_rt.buf<offset = 0, size = 16, element_type = f32, shape = [4], strides = [1], element_offset = 0>]) -> ([#coop_rt.buf<offset = 16, size = 16, element_type = f32, shape = [4], strides = [1], element_offset = 0>]) {args = {self = 1 : i64, tensor_args = {self = 0 : i64}}}
  coop_rt.output [#coop_rt.buf<offset = 16, size = 16, element_type = f32, shape = [4], strides = [1], element_offset = 0>]
}

// -----

// An argument value that is not UTF-8.
coop_rt.program @step arena(64) {
  coop_rt.argument 0 "x" <input> <offset = 0, size = 16, element_type = f32, shape = [4], strides = [1], element_offset = 0>
  // expected-error @+1 {{argument 'approximate' holds a string that is not valid UTF-8}}
  coop_rt.launch "aten.gelu"([#coop_rt.buf<offset = 0, size = 16, element_type = f32, shape = [4], strides = [1], element_offset = 0>]) -> ([#coop_rt.buf<offset = 16, size = 16, element_type = f32, shape = [4], strides = [1], element_offset = 0>]) {args = {approximate = "\FF"}}
  coop_rt.output [#coop_rt.buf<offset = 16, size = 16, element_type = f32, shape = [4], strides = [1], element_offset = 0>]
}
