// Bad Plan files get one clear error and a non-zero exit, never a crash.
// Plan files are a Plan with its length and checksum; Inputs/plan_file.py
// seals the bare Plans written here byte by byte.

// Not a protobuf at all.
// RUN: printf 'this is not a plan' > %t.garbage
// RUN: not coop-translate --plan-to-coop-rt %t.garbage 2>&1 | FileCheck %s --check-prefix=GARBAGE
// GARBAGE: error: invalid Plan: not a Plan file (truncated or corrupted protobuf, 18 bytes)

// An empty file.
// RUN: printf '' > %t.empty
// RUN: not coop-translate --plan-to-coop-rt %t.empty 2>&1 | FileCheck %s --check-prefix=EMPTYFILE
// EMPTYFILE: error: invalid Plan: empty file, not a Plan file

// A real plan cut short, and one with a byte of its Plan altered.
// RUN: coop-opt %coop_src_root/models/mlp.mlir --coop-compile="ratio=0.9" | coop-translate --coop-rt-to-plan -o %t.plan
// RUN: head -c 1000 %t.plan > %t.truncated
// RUN: not coop-translate --plan-to-coop-rt %t.truncated 2>&1 | FileCheck %s --check-prefix=TRUNCATED
// TRUNCATED: error: invalid Plan: not a Plan file (truncated or corrupted protobuf, 1000 bytes)
// RUN: %python %S/Inputs/plan_file.py flip %t.plan %t.altered 20
// RUN: not coop-translate --plan-to-coop-rt %t.altered 2>&1 | FileCheck %s --check-prefix=ALTERED
// ALTERED: error: invalid Plan: corrupted: the plan's bytes were altered (checksum 0x

// Cut at a record boundary: the version and the length, no Plan.
// RUN: printf '\x08\x02\x40\x05' > %t.cut
// RUN: not coop-translate --plan-to-coop-rt %t.cut 2>&1 | FileCheck %s --check-prefix=CUT
// CUT: error: invalid Plan: truncated: the file holds 0 of the plan's 5 bytes

// A bare Plan of format version 1, as files were before they had a
// checksum; and a newer version.
// RUN: printf '\x08\x01\x12\x01s\x18\x80\x08' > %t.version1
// RUN: not coop-translate --plan-to-coop-rt %t.version1 2>&1 | FileCheck %s --check-prefix=VERSION1
// VERSION1: error: invalid Plan: format version 1 is not the supported version 2 (a bare Plan without length and checksum: translate it again)
// RUN: printf '\x08\x03' > %t.version
// RUN: not coop-translate --plan-to-coop-rt %t.version 2>&1 | FileCheck %s --check-prefix=VERSION
// VERSION: error: invalid Plan: format version 3 is not the supported version 2

// Name "s", no arena.
// RUN: printf '\x08\x02\x12\x01s' > %t.arena.raw
// RUN: %python %S/Inputs/plan_file.py seal %t.arena.raw %t.arena
// RUN: not coop-translate --plan-to-coop-rt %t.arena 2>&1 | FileCheck %s --check-prefix=ARENA
// ARENA: error: invalid Plan: needs a name and a positive arena size

// An argument "a" whose buffer has dtype 99.
// RUN: printf '\x08\x02\x12\x01s\x18\x80\x08\x22\x0b\x12\x01a\x18\x05\x22\x04\x10\x04\x18\x63' > %t.dtype.raw
// RUN: %python %S/Inputs/plan_file.py seal %t.dtype.raw %t.dtype
// RUN: not coop-translate --plan-to-coop-rt %t.dtype 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: error: invalid Plan: argument #0 'a' has unknown dtype 99

// An argument whose f32 buffer of 4 bytes claims two elements.
// RUN: printf '\x08\x02\x12\x01s\x18\x80\x08\x22\x11\x12\x01a\x18\x05\x22\x0a\x10\x04\x18\x01\x22\x01\x02\x2a\x01\x01' > %t.toolong.raw
// RUN: %python %S/Inputs/plan_file.py seal %t.toolong.raw %t.toolong
// RUN: not coop-translate --plan-to-coop-rt %t.toolong 2>&1 | FileCheck %s --check-prefix=TOOLONG
// TOOLONG: error: invalid Plan: argument #0 'a': buffer reads element 1, past the end of its 4-byte storage

// A buffer past the end of the arena (arena 1024, buffer [2048, 2052)).
// RUN: printf '\x08\x02\x12\x01s\x18\x80\x08\x22\x14\x12\x01a\x18\x05\x22\x0d\x08\x80\x10\x10\x04\x18\x01\x22\x01\x01\x2a\x01\x01' > %t.outside.raw
// RUN: %python %S/Inputs/plan_file.py seal %t.outside.raw %t.outside
// RUN: not coop-translate --plan-to-coop-rt %t.outside 2>&1 | FileCheck %s --check-prefix=OUTSIDE
// OUTSIDE: error: 'coop_rt.argument' op uses bytes [2048, 2052) outside the arena of 1024 bytes

// A launch of kernel "k" with argument "p" twice: printed, its argument
// dictionary would not parse.
// RUN: printf '\x08\x02\x12\x01s\x18\x80\x08\x2a\x15\x0a\x01k\x22\x07\x0a\x01p\x12\x02\x10\x01\x22\x07\x0a\x01p\x12\x02\x10\x01' > %t.twice.raw
// RUN: %python %S/Inputs/plan_file.py seal %t.twice.raw %t.twice
// RUN: not coop-translate --plan-to-coop-rt %t.twice 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: error: invalid Plan: launch #0 'k' argument 'p' is given twice

// The same launch with an argument without a name.
// RUN: printf '\x08\x02\x12\x01s\x18\x80\x08\x2a\x09\x0a\x01k\x22\x04\x12\x02\x10\x01' > %t.unnamed.raw
// RUN: %python %S/Inputs/plan_file.py seal %t.unnamed.raw %t.unnamed
// RUN: not coop-translate --plan-to-coop-rt %t.unnamed 2>&1 | FileCheck %s --check-prefix=UNNAMED
// UNNAMED: error: invalid Plan: launch #0 'k' argument name '' is empty

// A module with nothing to write.
// RUN: echo 'module {}' | not coop-translate --coop-rt-to-plan 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: error: no coop_rt.program to write; lower a planned step with --coop-lower-to-runtime first
