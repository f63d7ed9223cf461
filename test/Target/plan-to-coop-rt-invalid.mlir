// Bad Plan files get one clear error and a non-zero exit, never a crash.

// Not a protobuf at all.
// RUN: printf 'this is not a plan' > %t.garbage
// RUN: not coop-translate --plan-to-coop-rt %t.garbage 2>&1 | FileCheck %s --check-prefix=GARBAGE
// GARBAGE: error: invalid Plan: not a serialized Plan (truncated or corrupted protobuf, 18 bytes)

// A real plan cut short.
// RUN: coop-opt %coop_src_root/models/mlp.mlir --coop-compile="ratio=0.9" | coop-translate --coop-rt-to-plan -o %t.plan
// RUN: head -c 1000 %t.plan > %t.truncated
// RUN: not coop-translate --plan-to-coop-rt %t.truncated 2>&1 | FileCheck %s --check-prefix=TRUNCATED
// TRUNCATED: error: invalid Plan: not a serialized Plan (truncated or corrupted protobuf, 1000 bytes)

// Written by a newer format: version 2.
// RUN: printf '\x08\x02' > %t.version
// RUN: not coop-translate --plan-to-coop-rt %t.version 2>&1 | FileCheck %s --check-prefix=VERSION
// VERSION: error: invalid Plan: format version 2 is not the supported version 1

// Version 1, name "s", no arena.
// RUN: printf '\x08\x01\x12\x01s' > %t.arena
// RUN: not coop-translate --plan-to-coop-rt %t.arena 2>&1 | FileCheck %s --check-prefix=ARENA
// ARENA: error: invalid Plan: needs a name and a positive arena size

// An argument "a" whose buffer has dtype 99.
// RUN: printf '\x08\x01\x12\x01s\x18\x80\x08\x22\x0b\x12\x01a\x18\x05\x22\x04\x10\x04\x18\x63' > %t.dtype
// RUN: not coop-translate --plan-to-coop-rt %t.dtype 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: error: invalid Plan: argument #0 'a' has unknown dtype 99

// An argument whose f32 buffer of 4 bytes claims two elements.
// RUN: printf '\x08\x01\x12\x01s\x18\x80\x08\x22\x11\x12\x01a\x18\x05\x22\x0a\x10\x04\x18\x01\x22\x01\x02\x2a\x01\x01' > %t.toolong
// RUN: not coop-translate --plan-to-coop-rt %t.toolong 2>&1 | FileCheck %s --check-prefix=TOOLONG
// TOOLONG: error: invalid Plan: argument #0 'a': buffer reads element 1, past the end of its 4-byte storage

// A buffer past the end of the arena (arena 1024, buffer [2048, 2052)).
// RUN: printf '\x08\x01\x12\x01s\x18\x80\x08\x22\x14\x12\x01a\x18\x05\x22\x0d\x08\x80\x10\x10\x04\x18\x01\x22\x01\x01\x2a\x01\x01' > %t.outside
// RUN: not coop-translate --plan-to-coop-rt %t.outside 2>&1 | FileCheck %s --check-prefix=OUTSIDE
// OUTSIDE: error: 'coop_rt.argument' op uses bytes [2048, 2052) outside the arena of 1024 bytes

// A module with nothing to write.
// RUN: echo 'module {}' | not coop-translate --coop-rt-to-plan 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: error: no coop_rt.program to write; lower a planned step with --coop-lower-to-runtime first
