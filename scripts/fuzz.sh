#!/usr/bin/env bash
# Coverage-guided fuzzing of ctxkit's entry points (cargo-fuzz, libFuzzer; nightly Rust).
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#
# Runs every fuzz target of fuzz/ (or the ones named) for SECONDS each (default 600, the
# campaign length docs/reliability.md reports), one after another under `nice -n 19` (or
# CTXKIT_FUZZ_JOBS at once), and prints
# per target the executions and the coverage of libFuzzer's last status line (`#N ... cov: X
# ft: Y`) as a markdown table. New inputs go to fuzz/corpus-work/<target>/ (git-ignored), seeded
# from the committed fuzz/corpus/<target>/. With CTXKIT_FUZZ_CMIN=1 each target's corpus is then
# minimized (`-merge=1`) back into fuzz/corpus/<target>/, to commit. A finding (a panic, an
# invariant that did not hold) is saved by libFuzzer under fuzz/artifacts/<target>/ and makes the
# script exit 1 after the table.
#
# CI does not run this (scripts/test.sh does not call it); the test suite replays the committed
# corpora instead (tests/tests/all/fuzz_corpus_replay.rs).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-600}
shift || true
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || (( seconds < 1 )); then
  echo "fuzz.sh: SECONDS must be a whole number of seconds, got '$seconds'" >&2
  exit 2
fi

if ! cargo +nightly --version >/dev/null 2>&1; then
  echo "fuzz.sh: the nightly toolchain is missing (rustup toolchain install nightly)" >&2
  exit 2
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz
fi

targets=("$@")
if (( ${#targets[@]} == 0 )); then
  mapfile -t targets < <(cd fuzz && cargo +nightly fuzz list)
fi

echo "==> building ${#targets[@]} fuzz targets (cargo +nightly fuzz build)" >&2
(cd fuzz && nice -n 19 cargo +nightly fuzz build)

logs=fuzz/corpus-work/logs
mkdir -p "$logs"

# One target's campaign; writes its table row to $logs/<target>.row.
run_target() {
  local target=$1 work=fuzz/corpus-work/$1 log=$logs/$1.log status=ok
  mkdir -p "$work" "fuzz/corpus/$target" "fuzz/artifacts/$target"
  echo "==> $target: ${seconds}s" >&2
  # -max_len: the committed seeds are small; longer inputs only slow the search down.
  if ! (cd fuzz && nice -n 19 cargo +nightly fuzz run "$target" "corpus-work/$target" "corpus/$target" -- \
      -max_total_time="$seconds" -max_len=16384 -rss_limit_mb=2048 -timeout=20 \
      -print_final_stats=1) >"$log" 2>&1; then
    status="FINDING (see $log, fuzz/artifacts/$target/)"
  fi
  local last execs cov ft
  last=$(grep -aE '^#[0-9]+.*cov: [0-9]+ ft: [0-9]+' "$log" | tail -n 1 || true)
  execs=$(sed -nE 's/^#([0-9]+).*/\1/p' <<<"$last")
  cov=$(sed -nE 's/.*cov: ([0-9]+).*/\1/p' <<<"$last")
  ft=$(sed -nE 's/.*ft: ([0-9]+).*/\1/p' <<<"$last")
  echo "| \`$target\` | ${seconds} s | ${execs:-?} | ${cov:-?} | ${ft:-?} | $status |" >"$logs/$target.row"
  if [[ "${CTXKIT_FUZZ_CMIN:-0}" == 1 && "$status" == ok ]]; then
    local merged=fuzz/corpus-work/$target-min
    rm -rf "$merged" && mkdir -p "$merged"
    (cd fuzz && nice -n 19 cargo +nightly fuzz run "$target" "corpus-work/$target-min" \
      "corpus/$target" "corpus-work/$target" -- -merge=1 -max_len=16384) >>"$log" 2>&1
    rm -rf "fuzz/corpus/$target" && mv "$merged" "fuzz/corpus/$target"
  fi
}

# CTXKIT_FUZZ_JOBS targets run at once (default 1: one after another, each with a core to
# itself; more shortens the campaign on a machine with spare cores, each run still lasting
# SECONDS).
lanes=${CTXKIT_FUZZ_JOBS:-1}
if ! [[ "$lanes" =~ ^[0-9]+$ ]] || (( lanes < 1 )); then
  echo "fuzz.sh: CTXKIT_FUZZ_JOBS must be a whole number of at least 1, got '$lanes'" >&2
  exit 2
fi
for target in "${targets[@]}"; do
  rm -f "$logs/$target.row"
  while (( $(jobs -rp | wc -l) >= lanes )); do wait -n || true; done
  run_target "$target" &
done
wait

printf '\n| target | time | executions | cov | ft | result |\n|---|---|---|---|---|---|\n'
failed=0
for target in "${targets[@]}"; do
  row=$(cat "$logs/$target.row" 2>/dev/null || echo "| \`$target\` | ${seconds} s | ? | ? | ? | did not run |")
  echo "$row"
  [[ "$row" == *"| ok |" ]] || failed=1
done
exit "$failed"
