#!/bin/bash
# Units of search work per second of planning: how the default work limit
# (--coop-plan-memory's work-limit, include/coop/Planner/Deadline.h) maps
# to time on this machine. For each MLIR file and ratio, plans with the
# default search three times and prints the work, the least planning time
# and their ratio.
#
#   bench/planner/work_rate.sh [-b build] [-r "0.7 0.5 0.3"] [-p PASS] M.mlir...
#
# -p adds a pass before planning (e.g. --coop-annotate-costs for a graph
# without costs).
set -euo pipefail
build=build ratios="0.7 0.5 0.3" pre=""
while getopts "b:r:p:" opt; do
  case $opt in
    b) build=$OPTARG ;; r) ratios=$OPTARG ;; p) pre=$OPTARG ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "usage: $0 [-b build] [-r ratios] [-p pass] M.mlir..." >&2; exit 2; }
echo "model ratio work least_ms Munits_per_s overhead_pct"
for f in "$@"; do
  for r in $ratios; do
    least="" work="" overhead="no-plan"
    for _ in 1 2 3; do
      out=$("$build/bin/coop-opt" "$f" $pre --coop-plan-memory="ratio=$r report=true" \
              -o /dev/null 2>&1 || true)
      ms=$(sed -n 's/.*planning time: *\([0-9.]*\) ms.*/\1/p' <<<"$out")
      [ -n "$ms" ] || continue
      work=$(sed -n 's/.*search work: *\([0-9]*\) units.*/\1/p' <<<"$out")
      overhead=$(sed -n 's/.*compute overhead: *\([0-9.]*\) %.*/\1/p' <<<"$out")
      least=$(awk -v a="${least:-$ms}" -v b="$ms" 'BEGIN { print (a < b ? a : b) }')
    done
    if [ -z "$least" ]; then
      echo "$(basename "$f" .mlir) $r - - - no-plan"
    else
      awk -v m="$(basename "$f" .mlir)" -v r="$r" -v w="$work" -v t="$least" \
          -v o="$overhead" 'BEGIN { printf "%s %s %s %.1f %.1f %s\n", m, r, w, t, w / t / 1000, o }'
    fi
  done
done
