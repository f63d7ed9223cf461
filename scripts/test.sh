#!/usr/bin/env bash
# Builds and runs the whole test suite: unit tests and lit tests, through
# ctest, whose summary line reports the counts.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${COOP_BUILD_DIR:-$ROOT/build}"

"$ROOT/scripts/build.sh"
ctest --test-dir "$BUILD" --output-on-failure -j "$(nproc)"
