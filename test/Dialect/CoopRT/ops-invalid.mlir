// RUN: coop-opt %s --split-input-file --verify-diagnostics

// Strides near 2^63: the farthest element must not wrap back into storage.
coop_rt.program @stride_overflow arena(2048) {
  // expected-error@+1 {{buffer's last element lies past 2^63 bytes}}
  coop_rt.argument 0 "x" #coop.role<input> #coop_rt.buf<offset = 0, size = 16, element_type = f32, shape = [3], strides = [4611686018427387904], element_offset = 0>
}

// -----

coop_rt.program @element_offset_overflow arena(2048) {
  // expected-error@+1 {{buffer's last element lies past 2^63 bytes}}
  coop_rt.argument 0 "x" #coop.role<input> #coop_rt.buf<offset = 0, size = 16, element_type = f32, shape = [2], strides = [1], element_offset = 9223372036854775807>
}

// -----

// Bytes of the last element: (2^61 + 1) f32 elements overflow.
coop_rt.program @byte_end_overflow arena(2048) {
  // expected-error@+1 {{buffer's last element lies past 2^63 bytes}}
  coop_rt.argument 0 "x" #coop.role<input> #coop_rt.buf<offset = 0, size = 16, element_type = f32, shape = [2], strides = [2305843009213693952], element_offset = 0>
}

// -----

// offset + size wraps past 2^63: still outside the arena.
coop_rt.program @offset_overflow arena(2048) {
  // expected-error@+1 {{'coop_rt.argument' op uses bytes [9223372036854775800, 9223372036854775800 + 16) outside the arena of 2048 bytes}}
  coop_rt.argument 0 "x" #coop.role<input> #coop_rt.buf<offset = 9223372036854775800, size = 16, element_type = f32, shape = [4], strides = [1], element_offset = 0>
}

// -----

coop_rt.program @index_element arena(2048) {
  // expected-error@+1 {{buffer element type must be an integer or float, got 'index'}}
  coop_rt.argument 0 "x" #coop.role<input> #coop_rt.buf<offset = 0, size = 32, element_type = index, shape = [4], strides = [1], element_offset = 0>
}
