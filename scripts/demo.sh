#!/usr/bin/env bash
# Sets everything up on a fresh Debian 12 machine, builds, and runs the main
# job on the bundled default model (models/mlp.mlir): plan it into half of
# the arena it needs without rematerialization, verify the plan, lower it,
# write the Plan file and a picture of the arena to out/, then run it on the
# CPU runtime and check it computes exactly what the unconstrained plan does.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${COOP_BUILD_DIR:-$ROOT/build}"
OUT="${COOP_OUT_DIR:-$ROOT/out}"
STEPS=3

"$ROOT/scripts/install-deps.sh"
"$ROOT/scripts/build.sh"
mkdir -p "$OUT"

compile() { # compile OPTIONS NAME
  "$BUILD/bin/coop-opt" "$ROOT/models/mlp.mlir" --coop-compile="$1" \
    -o "$OUT/$2.coop_rt.mlir"
  "$BUILD/bin/coop-translate" --coop-rt-to-plan "$OUT/$2.coop_rt.mlir" \
    -o "$OUT/$2.plan"
}

"$BUILD/bin/coop-opt" "$ROOT/models/mlp.mlir" --coop-memory-stats -o /dev/null
compile "ratio=0.5 report=true svg=$OUT/mlp.svg" mlp
compile "ratio=1.0 policy=none" mlp-unconstrained

"$BUILD/bin/coop-run" "$OUT/mlp.plan" --backend cpu --steps "$STEPS" --seed 1 \
  --dump-arguments "$OUT/mlp.args"
"$BUILD/bin/coop-run" "$OUT/mlp-unconstrained.plan" --backend cpu \
  --steps "$STEPS" --seed 1 --dump-arguments "$OUT/mlp-unconstrained.args" \
  --quiet
if cmp -s "$OUT/mlp.args" "$OUT/mlp-unconstrained.args"; then
  echo "after $STEPS steps every parameter and optimizer state is" \
       "bit-identical to the unconstrained plan's"
else
  echo "error: the half-budget plan computed different values" >&2
  exit 1
fi
echo "wrote $OUT/mlp.plan (the runtime's input) and $OUT/mlp.svg"
