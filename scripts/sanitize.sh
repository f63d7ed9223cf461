#!/usr/bin/env bash
# Builds the project with AddressSanitizer and UndefinedBehaviorSanitizer
# into its own directory (build-asan/, or $COOP_ASAN_BUILD_DIR) and runs the
# test suite there; any sanitizer report fails the test that triggered it.
# Arguments are passed to ctest (e.g. -R lit/); without any, everything runs
# but the end-to-end comparisons with PyTorch (runtime/e2e*, whose models
# run for minutes uninstrumented), runtime/zoo-check (compiles the whole zoo:
# past its 300 s timeout instrumented), the pure-Python exporter tests and
# the evaluation smoke test. COOP_TEST_JOBS sets ctest -j (default: nproc).
# With --planner first, only the MLIR-free planner core, its unit tests and
# benchmarks are built (COOP_PLANNER_ONLY, in build-asan-planner/) and all
# of their tests run: what CI runs, a few minutes on 2 cores.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PLANNER_ONLY=OFF
if [ "${1:-}" = "--planner" ]; then
  PLANNER_ONLY=ON
  shift
fi
if [ "$PLANNER_ONLY" = ON ]; then
  BUILD="${COOP_ASAN_BUILD_DIR:-$ROOT/build-asan-planner}"
else
  BUILD="${COOP_ASAN_BUILD_DIR:-$ROOT/build-asan}"
fi
SANITIZE="-fsanitize=address,undefined -fno-sanitize-recover=undefined"

if [ ! -f "$BUILD/build.ninja" ]; then
  # -O1 keeps the instrumented tools fast enough for the suite's timeouts;
  # NDEBUG as in Debian's LLVM, whose headers we compile against. The CUDA
  # backend (nvcc) is left out.
  cmake -S "$ROOT" -B "$BUILD" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS_RELEASE="-O1 -g1 -DNDEBUG" \
    -DCMAKE_CXX_FLAGS_RELEASE="-O1 -g1 -DNDEBUG" \
    -DCMAKE_C_FLAGS="$SANITIZE -fno-omit-frame-pointer" \
    -DCMAKE_CXX_FLAGS="$SANITIZE -fno-omit-frame-pointer" \
    -DCMAKE_EXE_LINKER_FLAGS="$SANITIZE" \
    -DCMAKE_SHARED_LINKER_FLAGS="$SANITIZE" \
    -DCOOP_ENABLE_CUDA=OFF \
    -DCOOP_PLANNER_ONLY="$PLANNER_ONLY" \
    -DMLIR_DIR=/usr/lib/llvm-19/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-19/build/utils/lit/lit.py
fi
cmake --build "$BUILD"

# Every sanitizer report aborts the process, so the test running it fails.
# allow_user_poisoning=0: LLVM's inline allocator code, instrumented here,
# poisons slabs that Debian's uninstrumented MLIR libraries then use
# legitimately (false "use-after-poison" reports).
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:allow_user_poisoning=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
if [ "$#" -eq 0 ] && [ "$PLANNER_ONLY" = OFF ]; then
  set -- -E '^(runtime/e2e|runtime/zoo-check|python/|coop-eval)'
fi
ctest --test-dir "$BUILD" --output-on-failure -j "${COOP_TEST_JOBS:-$(nproc)}" "$@"
