#!/usr/bin/env bash
# Sets everything up on a fresh Debian 12 machine, builds, and runs the main
# job on the bundled default model (models/mlp.mlir): plan it into 55% of
# the arena it needs without rematerialization, verify the plan, lower it,
# and write the Plan file and a picture of the arena to out/.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${COOP_BUILD_DIR:-$ROOT/build}"
OUT="${COOP_OUT_DIR:-$ROOT/out}"

"$ROOT/scripts/install-deps.sh"
"$ROOT/scripts/build.sh"
mkdir -p "$OUT"
"$BUILD/bin/coop-opt" "$ROOT/models/mlp.mlir" --coop-memory-stats \
  --coop-compile="ratio=0.55 policy=coop report=true svg=$OUT/mlp.svg" \
  -o "$OUT/mlp.coop_rt.mlir"
"$BUILD/bin/coop-translate" --coop-rt-to-plan "$OUT/mlp.coop_rt.mlir" \
  -o "$OUT/mlp.plan"
echo "wrote $OUT/mlp.plan (the runtime's input) and $OUT/mlp.svg"
