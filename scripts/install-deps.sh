#!/usr/bin/env bash
# Installs every system package the build, the tests and the exporter need on
# a fresh Debian 12 machine. Safe to run again.
set -euo pipefail

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo

PACKAGES=(
  # Build
  cmake ninja-build g++ python3 zlib1g-dev libzstd-dev
  # LLVM/MLIR 19, lit and FileCheck
  llvm-19-dev libmlir-19-dev mlir-19-tools llvm-19-tools
  # Serialized graphs and plans
  protobuf-compiler libprotobuf-dev python3-protobuf
  # Unit tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev
  # Exporter (PyTorch training steps)
  python3-torch python3-torchvision
  # The Python front end's example (examples/digits): its data set and plot
  python3-sklearn python3-matplotlib
)

$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends \
  "${PACKAGES[@]}"
