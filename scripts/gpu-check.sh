#!/bin/bash
# The CUDA backend's checks on a lent GPU machine (docs/runtime.md, "On the
# H200"). That machine has the driver, CUDA and cuBLAS but no LLVM, so the
# binaries built here travel with what they load, and the two plans the
# CUDA tests compile are compiled here and handed over by stand-ins for
# coop-opt and coop-translate.
#
#   bash scripts/gpu-check.sh prepare   # here, after scripts/build.sh
#   bash scripts/gpu-check.sh run       # there: the device tool's run, with
#                                       # carry ["build/bin", "gpu-check",
#                                       #  "build/runtime/test/CoopRuntimeCudaTests"]
#
# `run` passes the six GPU tests, then runs every kept e2e plan (the
# fixtures' build/runtime/test/e2e-graphs, copied by `prepare`) two steps on
# the GPU and compares its arguments byte for byte with the unconstrained
# plan's; it exits 1 on any failure or difference.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$root/gpu-check
case "${1:-}" in
prepare)
  rm -rf "$dir" && mkdir -p "$dir/plans"
  for lib in libprotobuf.so.32 libstdc++.so.6 libgcc_s.so.1 libz.so.1; do
    cp -L "/lib/x86_64-linux-gnu/$lib" "$dir/"
  done
  for spec in "full:ratio=1 policy=none" "half:ratio=0.5 policy=coop"; do
    "$root/build/bin/coop-opt" "$root/models/mlp.mlir" \
      "--coop-compile=${spec#*:}" -o "$dir/${spec%%:*}.rt.mlir"
    "$root/build/bin/coop-translate" --coop-rt-to-plan \
      "$dir/${spec%%:*}.rt.mlir" -o "$dir/${spec%%:*}.plan"
    echo "${spec#*:}" > "$dir/${spec%%:*}.options"
  done
  # The kept e2e plans under 5 MB (the whole carry must stay under 64 MiB).
  find "$root/build/runtime/test/e2e-graphs" -name '*.plan' -size -5M \
    -exec cp {} "$dir/plans/" \;
  du -sh "$dir"
  ;;
run)
  export LD_LIBRARY_PATH=$dir:${LD_LIBRARY_PATH:-}
  command -v nvidia-smi > /dev/null || { echo "no GPU here" >&2; exit 2; }
  # The tests call coop-opt MLP "--coop-compile=OPTIONS" -o RT, then
  # coop-translate --coop-rt-to-plan RT -o PLAN, at the paths of the
  # checkout they were built in (linked to this one where it differs);
  # where coop-opt cannot load (no LLVM), stand-ins hand over the plans
  # compiled by `prepare`.
  tests=$root/build/runtime/test/CoopRuntimeCudaTests
  built=$(grep -m1 -aoE '/[[:alnum:]_./-]*/models/mlp\.mlir' "$tests")
  built=${built%%$'\n'*}
  built=${built%/models/mlp.mlir}
  [ -e "$built" ] || { mkdir -p "$(dirname "$built")" && ln -s "$root" "$built"; }
  if ldd "$root/build/bin/coop-opt" | grep "not found" > /dev/null; then
  cat > "$root/build/bin/coop-opt" <<'STAND_IN'
#!/bin/bash
while [ $# -gt 0 ]; do
  case "$1" in --coop-compile=*) opts=${1#--coop-compile=};; -o) out=$2; shift;; esac
  shift
done
echo "$opts" > "$out"
STAND_IN
  cat > "$root/build/bin/coop-translate" <<STAND_IN
#!/bin/bash
for name in full half; do
  if [ "\$(cat "\$2")" = "\$(cat "$dir/\$name.options")" ]; then cp "$dir/\$name.plan" "\$4"; exit 0; fi
done
echo "no plan compiled beforehand for \$(cat "\$2")" >&2; exit 1
STAND_IN
  chmod +x "$root/build/bin/coop-opt" "$root/build/bin/coop-translate"
  fi
  nvidia-smi -L
  status=0
  "$tests" || status=1
  run=$root/build/bin/coop-run
  same=0 other=0
  cd "$dir/plans"
  for none in *.none.1.0000.plan; do
    model=${none%%.none.1.0000.plan}
    "$run" "$none" --backend cuda --seed 1 --steps 2 \
      --dump-arguments "/tmp/$model.ref" --quiet > /dev/null
    for plan in "$model".*.plan; do
      [ "$plan" = "$none" ] && continue
      if "$run" "$plan" --backend cuda --seed 1 --steps 2 \
           --dump-arguments /tmp/args --quiet > /dev/null &&
         cmp -s /tmp/args "/tmp/$model.ref"; then
        same=$((same + 1))
      else
        other=$((other + 1)); echo "$plan: differs from the unconstrained run"
      fi
    done
  done
  echo "$same plans bit-identical to the unconstrained run on the GPU, $other not"
  [ "$other" -eq 0 ] || status=1
  exit $status
  ;;
*) echo "usage: $0 prepare|run" >&2; exit 2;;
esac
