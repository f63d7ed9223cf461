#!/usr/bin/env bash
# Runs one fuzzer for SECONDS on a copy of its seed corpus; new inputs go
# to WORK/corpus, a crash to WORK/crash-* (and a non-zero exit).
# Usage: fuzz/run.sh FUZZER SEEDS SECONDS [WORK]
set -euo pipefail

FUZZER="${1:?usage: run.sh FUZZER SEEDS SECONDS [WORK]}"
SEEDS="${2:?usage: run.sh FUZZER SEEDS SECONDS [WORK]}"
SECONDS_TO_RUN="${3:?usage: run.sh FUZZER SEEDS SECONDS [WORK]}"
WORK="${4:-$(mktemp -d)}"
mkdir -p "$WORK/corpus"
# -timeout: one input running 10 s is a hang; -max_len fits the seeds.
"$FUZZER" -max_total_time="$SECONDS_TO_RUN" -timeout=10 -rss_limit_mb=4096 \
  -max_len=262144 -print_final_stats=1 -artifact_prefix="$WORK/" \
  "$WORK/corpus" "$SEEDS"
