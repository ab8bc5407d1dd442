#!/usr/bin/env bash
# Bounded fuzzing of every cargo-fuzz target (nightly + libFuzzer + AddressSanitizer), each
# started from its committed seed corpus. FUZZ_SECONDS per target (default 30). A crash fails
# the run and leaves its input under fuzz/artifacts/<target>/. The long local campaigns are
# recorded in docs/reliability.md.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
secs="${FUZZ_SECONDS:-30}"
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
cargo +nightly fuzz build -O
for t in $(cargo +nightly fuzz list); do
  echo "--- fuzz $t for ${secs}s"
  mkdir -p "corpus/$t"
  # The run's new corpus entries go to a scratch folder; the committed seeds stay untouched.
  scratch="$(mktemp -d)"
  cargo +nightly fuzz run -O "$t" "$scratch" "corpus/$t" -- -max_total_time="$secs" -print_final_stats=1 2>&1 \
    | grep -E '^(Done|stat::number_of_executed_units)|SUMMARY|panicked|ERROR' || true
  rm -rf "$scratch"
  if ls "artifacts/$t"/crash-* >/dev/null 2>&1; then
    echo "fuzz target $t crashed: see fuzz/artifacts/$t"; exit 1
  fi
done
