#!/usr/bin/env bash
# Bounded fuzzing of every cargo-fuzz target (nightly + libFuzzer + AddressSanitizer), each
# started from its committed seed corpus, after replaying the inputs that once broke it
# (fuzz/regressions/<target>/). FUZZ_SECONDS per target (default 30). A crash, leak, OOM or
# timeout fails the run and leaves its input under fuzz/artifacts/<target>/. The long local
# campaigns are recorded in docs/reliability.md.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
secs="${FUZZ_SECONDS:-30}"
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
cargo +nightly fuzz build -O
rm -rf artifacts
for t in $(cargo +nightly fuzz list); do
  if [ -d "regressions/$t" ]; then
    echo "--- replay regressions/$t"
    if ! out=$(cargo +nightly fuzz run -O "$t" regressions/"$t"/* -- -runs=1 2>&1); then
      echo "$out" | tail -40
      echo "a regression input of $t fails again"
      exit 1
    fi
    echo "$out" | grep -E '^Executed' || true
  fi
  echo "--- fuzz $t for ${secs}s"
  mkdir -p "corpus/$t"
  # New corpus entries go to a scratch folder; the committed seeds stay untouched.
  scratch="$(mktemp -d)"
  if ! out=$(cargo +nightly fuzz run -O "$t" "$scratch" "corpus/$t" -- -max_total_time="$secs" -print_final_stats=1 2>&1); then
    echo "$out" | tail -60
    echo "fuzz target $t failed: see fuzz/artifacts/$t"
    exit 1
  fi
  echo "$out" | grep -E '^(Done|stat::number_of_executed_units)' || true
  rm -rf "$scratch"
  if [ -n "$(ls -A "artifacts/$t" 2>/dev/null)" ]; then
    echo "fuzz target $t left artifacts: $(ls "artifacts/$t")"
    exit 1
  fi
done
