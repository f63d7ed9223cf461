#!/usr/bin/env bash
# Writes the seed corpora of the fuzzers (fuzz/README.md) from the
# repository's tests and models: OUT/plan (Plan files compiled with the
# tools in BIN), OUT/training-graph (the importer tests' graphs and the
# smallest zoo graph), OUT/mlir (every split of every lit test, and planned
# steps). Usage: fuzz/make-corpus.sh BIN OUT
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${1:?usage: make-corpus.sh BIN OUT}"
OUT="${2:?usage: make-corpus.sh BIN OUT}"
LLVM_BIN=/usr/lib/llvm-19/bin
mkdir -p "$OUT/plan" "$OUT/training-graph" "$OUT/mlir"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

# .mlir: each `// -----` piece of every lit test is a seed of its own.
find "$ROOT/test" -name '*.mlir' | sort | while read -r test; do
  name="$(basename "${test%.mlir}")"
  awk -v out="$OUT/mlir/$name" '
    BEGIN { n = 0; file = out "-" n ".mlir" }
    /^\/\/ -----/ { n++; file = out "-" n ".mlir"; next }
    { print > file }' "$test"
done

# Planned steps and the Plan files they compile to: a tiny step that
# evicts and recomputes, and the bundled MLP at two ratios.
tiny="$OUT/mlir/coop-plan-memory-invalid-0.mlir"
"$BIN/coop-opt" "$tiny" --coop-plan-memory="budget=2048 policy=coop" \
  > "$OUT/mlir/tiny-planned.mlir"
"$BIN/coop-opt" "$tiny" --coop-compile="budget=2048 policy=coop" |
  "$BIN/coop-translate" --coop-rt-to-plan -o "$OUT/plan/tiny.plan"
for ratio in 1.0 0.5; do
  "$BIN/coop-opt" "$ROOT/models/mlp.mlir" \
    --coop-plan-memory="ratio=$ratio policy=coop" \
    > "$OUT/mlir/mlp-planned-$ratio.mlir"
  "$BIN/coop-opt" "$ROOT/models/mlp.mlir" \
    --coop-compile="ratio=$ratio policy=coop" |
    "$BIN/coop-translate" --coop-rt-to-plan -o "$OUT/plan/mlp-$ratio.plan"
done

# TrainingGraphs: the importer tests' text graphs, encoded, and UNet.
for test in "$ROOT"/test/Target/import-training-graph*.mlir; do
  "$LLVM_BIN/split-file" "$test" "$TMP/$(basename "$test")"
done
find "$TMP" -name '*.txtpb' | while read -r graph; do
  name="$(basename "$(dirname "$graph")")-$(basename "${graph%.txtpb}")"
  protoc --encode=coop_pb.TrainingGraph --proto_path="$ROOT/proto" \
    training_graph.proto < "$graph" > "$OUT/training-graph/$name.pb" || true
done
zcat "$ROOT/models/zoo/unet.pb.gz" > "$OUT/training-graph/unet.pb"
