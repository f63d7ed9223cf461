// RUN: coop-opt %s --split-input-file --coop-lower-to-runtime | FileCheck %s

// A planned step, written by hand: x at 0, the relu of t(x) at 512, its
// slice at 1024. Views become strides: t swaps them, the slice moves the
// element offset by start * stride. Evictions and frees disappear.
// CHECK-LABEL: coop_rt.program @views arena(2048)
// CHECK-SAME: attributes {plan = {budget = 2048 : i64, policy = "coop"}}
// CHECK-NEXT: coop_rt.argument 0 "arg0" <input> <offset = 0, size = 128, element_type = f32, shape = [4, 8], strides = [8, 1], element_offset = 0>
// CHECK-NEXT: coop_rt.launch "aten.relu"([#coop_rt.buf<offset = 0, size = 128, element_type = f32, shape = [8, 4], strides = [1, 8], element_offset = 0>]) -> ([#coop_rt.buf<offset = 512, size = 128, element_type = f32, shape = [8, 4], strides = [4, 1], element_offset = 0>]) {cost_us = 2.000000e+00 : f64}
// CHECK-NEXT: coop_rt.launch "aten.neg"([#coop_rt.buf<offset = 512, size = 128, element_type = f32, shape = [3, 4], strides = [8, 1], element_offset = 4>]) -> ([#coop_rt.buf<offset = 1024, size = 48, element_type = f32, shape = [3, 4], strides = [4, 1], element_offset = 0>]) {workspace = #coop_rt.buf<offset = 1536, size = 64, element_type = i8, shape = [64], strides = [1], element_offset = 0>}
// CHECK-NEXT: coop_rt.launch "aten.relu"({{.*}}) -> ({{.*}}) {recompute_of = 1 : i64}
// CHECK-NEXT: coop_rt.output [#coop_rt.buf<offset = 1024, size = 48, element_type = f32, shape = [3, 4], strides = [4, 1], element_offset = 0>]
// CHECK-NEXT: }
// CHECK-NOT: func.func
func.func @views(%x: tensor<4x8xf32> {coop.offset = 0 : i64, coop.role = #coop.role<input>})
    -> tensor<3x4xf32> attributes {coop.plan = {budget = 2048 : i64, policy = "coop"}, coop.step} {
  %t = coop.view "aten.t"(%x) : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %r = coop.compute "aten.relu"(%t) {cost_us = 2.0 : f64, offsets = array<i64: 512>} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %s = coop.view "aten.slice.Tensor"(%r) {args = {dim = 0 : i64, start = 1 : i64, end = 7 : i64, step = 2 : i64}} : (tensor<8x4xf32>) -> tensor<3x4xf32>
  %n = coop.compute "aten.neg"(%s) {offsets = array<i64: 1024>, workspace_bytes = 64 : i64, workspace_offset = 1536 : i64} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  coop.evict %r : tensor<8x4xf32>
  %r2 = coop.compute "aten.relu"(%t) {offsets = array<i64: 512>, recompute_of = 1 : i64} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  coop.free %r2 : tensor<8x4xf32>
  return %n : tensor<3x4xf32>
}

// -----

// The strides of the other aten views.
// CHECK-LABEL: coop_rt.program @more_views
// permute [2, 0, 1] of a contiguous 2x3x4: strides [12, 4, 1] -> [1, 12, 4]
// CHECK: coop_rt.launch "aten.a"([#coop_rt.buf<{{.*}}shape = [4, 2, 3], strides = [1, 12, 4], element_offset = 0>])
// expand 1x4 -> 5x4: the broadcast dimension reads the same row
// CHECK: coop_rt.launch "aten.b"([#coop_rt.buf<{{.*}}shape = [5, 4], strides = [0, 1], element_offset = 0>])
// select dim 1 index 2 of 2x3x4: drops dimension 1, offset 2 * 4
// CHECK: coop_rt.launch "aten.c"([#coop_rt.buf<{{.*}}shape = [2, 4], strides = [12, 1], element_offset = 8>])
// split 2x3x4 along dim 2 into 4 = 1 + 3: offsets 0 and 1
// CHECK: coop_rt.launch "aten.d"([#coop_rt.buf<{{.*}}shape = [2, 3, 1], strides = [12, 4, 1], element_offset = 0>, #coop_rt.buf<{{.*}}shape = [2, 3, 3], strides = [12, 4, 1], element_offset = 1>])
// unsqueeze at 1 of 2x3x4, then a view of the contiguous result as 6x4
// CHECK: coop_rt.launch "aten.e"([#coop_rt.buf<{{.*}}shape = [2, 1, 3, 4], strides = [12, 12, 4, 1], element_offset = 0>, #coop_rt.buf<{{.*}}shape = [6, 4], strides = [4, 1], element_offset = 0>])
// transpose.int of dims 0 and 2, then a reshape that splits the last dim of
// the transposed tensor (allowed without a copy): 4x3x2 -> 4x3x2x1, with
// the strides torch gives: x.transpose(0, 2).view(4, 3, 2, 1).stride()
// CHECK: coop_rt.launch "aten.f"([#coop_rt.buf<{{.*}}shape = [4, 3, 2, 1], strides = [1, 4, 12, 12], element_offset = 0>])
func.func @more_views(%x: tensor<2x3x4xf32> {coop.offset = 0 : i64, coop.role = #coop.role<input>},
                      %b: tensor<1x4xf32> {coop.offset = 512 : i64, coop.role = #coop.role<parameter>})
    attributes {coop.plan = {budget = 8192 : i64, policy = "coop"}, coop.step} {
  %p = coop.view "aten.permute"(%x) {args = {dims = [2, 0, 1]}} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  %a = coop.compute "aten.a"(%p) {offsets = array<i64: 1024>} : (tensor<4x2x3xf32>) -> tensor<4x2x3xf32>
  %e = coop.view "aten.expand"(%b) {args = {size = [5, 4]}} : (tensor<1x4xf32>) -> tensor<5x4xf32>
  %be = coop.compute "aten.b"(%e) {offsets = array<i64: 2048>} : (tensor<5x4xf32>) -> tensor<5x4xf32>
  %s = coop.view "aten.select.int"(%x) {args = {dim = 1 : i64, index = 2 : i64}} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  %c = coop.compute "aten.c"(%s) {offsets = array<i64: 3072>} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %sp:2 = coop.view "aten.split_with_sizes"(%x) {args = {split_sizes = [1, 3], dim = -1 : i64}} : (tensor<2x3x4xf32>) -> (tensor<2x3x1xf32>, tensor<2x3x3xf32>)
  %d = coop.compute "aten.d"(%sp#0, %sp#1) {offsets = array<i64: 4096>} : (tensor<2x3x1xf32>, tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
  %u = coop.view "aten.unsqueeze"(%x) {args = {dim = 1 : i64}} : (tensor<2x3x4xf32>) -> tensor<2x1x3x4xf32>
  %v = coop.view "aten.view"(%x) {args = {size = [6, 4]}} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %f = coop.compute "aten.e"(%u, %v) {offsets = array<i64: 5120>} : (tensor<2x1x3x4xf32>, tensor<6x4xf32>) -> tensor<6x4xf32>
  %tr = coop.view "aten.transpose.int"(%x) {args = {dim0 = 0 : i64, dim1 = 2 : i64}} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  %rs = coop.view "aten.view"(%tr) {args = {size = [4, 3, 2, 1]}} : (tensor<4x3x2xf32>) -> tensor<4x3x2x1xf32>
  %g = coop.compute "aten.f"(%rs) {offsets = array<i64: 6144>} : (tensor<4x3x2x1xf32>) -> tensor<4x3x2x1xf32>
  return
}

// -----

// Attention heads, as GPT-2 writes them: split the fused qkv projection
// along its last dimension, view each third as 12 heads of 64, put the heads
// first. The views keep reading the fused buffer, with torch's strides:
//   q, k, v = x.split(768, dim=2); q.view(8, 1024, 12, 64).stride()
//     == (2359296, 2304, 64, 1)
// and permute(0, 2, 1, 3) gives (2359296, 64, 2304, 1); k starts 768 in.
// CHECK-LABEL: coop_rt.program @attention_heads
// CHECK: coop_rt.launch "aten.bmm"([#coop_rt.buf<offset = 0, size = 75497472, element_type = f32, shape = [8, 12, 1024, 64], strides = [2359296, 64, 2304, 1], element_offset = 0>, #coop_rt.buf<offset = 0, size = 75497472, element_type = f32, shape = [8, 12, 1024, 64], strides = [2359296, 64, 2304, 1], element_offset = 768>])
func.func @attention_heads(%qkv: tensor<8x1024x2304xf32> {coop.offset = 0 : i64, coop.role = #coop.role<input>})
    attributes {coop.plan = {budget = 134217728 : i64, policy = "coop"}, coop.step} {
  %parts:3 = coop.view "aten.split.Tensor"(%qkv) {args = {split_size = 768 : i64, dim = 2 : i64}} : (tensor<8x1024x2304xf32>) -> (tensor<8x1024x768xf32>, tensor<8x1024x768xf32>, tensor<8x1024x768xf32>)
  %q = coop.view "aten._reshape_alias"(%parts#0) {args = {size = [8, 1024, 12, 64], stride = [0, 0, 0, 0]}} : (tensor<8x1024x768xf32>) -> tensor<8x1024x12x64xf32>
  %k = coop.view "aten.view"(%parts#1) {args = {size = [8, 1024, 12, 64]}} : (tensor<8x1024x768xf32>) -> tensor<8x1024x12x64xf32>
  %qh = coop.view "aten.permute"(%q) {args = {dims = [0, 2, 1, 3]}} : (tensor<8x1024x12x64xf32>) -> tensor<8x12x1024x64xf32>
  %kh = coop.view "aten.permute"(%k) {args = {dims = [0, 2, 1, 3]}} : (tensor<8x1024x12x64xf32>) -> tensor<8x12x1024x64xf32>
  %s = coop.compute "aten.bmm"(%qh, %kh) {offsets = array<i64: 75497472>} : (tensor<8x12x1024x64xf32>, tensor<8x12x1024x64xf32>) -> tensor<8x12x1024x64xf32>
  return
}

// -----

// Functions that are not steps stay.
// CHECK-LABEL: func.func @helper
func.func @helper() {
  return
}
