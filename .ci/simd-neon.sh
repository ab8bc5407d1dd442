#!/usr/bin/env bash
# Run the ninfer-simd tests for aarch64 (the NEON paths, with and without dotprod, and the
# scalar twins) under qemu-user on an x86-64 CI machine. Expects root on Debian with rustup.
# The linker and runner for the target live in .cargo/config.toml at the repository root.
set -euo pipefail
cd "$(dirname "$0")/.."

export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user
rustup target add aarch64-unknown-linux-gnu

# qemu-aarch64 emulates the "max" CPU, which has dotprod: Isa::Neon runs `sdot`,
# Isa::NeonNoDotprod the widening-multiply fallback, Isa::Scalar the scalar twins.
# The AVX-512 tests print their SKIPPED lines here (no x86 on aarch64); --nocapture shows them.
# Release: the emulated tests run about ten times faster, which outweighs the longer build.
cargo test --release -p ninfer-simd --target aarch64-unknown-linux-gnu -- --nocapture
