#!/usr/bin/env bash
# A longer random run of ctxkit's property tests, outside CI: every proptest of tests/ again and
# again, each round with a new seed, for SECONDS in all (default 1800), under `nice -n 19`.
#
#   scripts/proptest-long.sh [SECONDS] [TEST...]
#
# TEST names a test module of tests/tests/all/ (e.g. prefix_stability); by default every module
# with a proptest. Each round prints its seed; a failing round stops the run and prints the
# command that replays it (PROPTEST_RNG_SEED=<seed> cargo test -p ctxkit-tests --test all
# <TEST>::). Keep the failure's `cc` line proptest writes into
# tests/tests/all/<TEST>.proptest-regressions, with a
# comment, and fix the cause: CI replays it first on every run (scripts/test.sh fixes one
# printed seed per run; this script is where new counterexamples are looked for).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-1800}
shift || true
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || (( seconds < 1 )); then
  echo "proptest-long.sh: SECONDS must be a whole number of seconds, got '$seconds'" >&2
  exit 2
fi
tests=("$@")
if (( ${#tests[@]} == 0 )); then
  mapfile -t tests < <(grep -l 'proptest!' tests/tests/all/*.rs | xargs -n1 basename | sed 's/\.rs$//')
fi
for test in "${tests[@]}"; do
  if [[ ! -f "tests/tests/all/$test.rs" ]]; then
    echo "proptest-long.sh: no test module tests/tests/all/$test.rs" >&2
    exit 2
  fi
done

# One test binary holds every module (tests/tests/all/main.rs); each round runs one module's.
echo "==> building the test binary of ${#tests[@]} property test modules" >&2
nice -n 19 cargo test -p ctxkit-tests --test all --no-run >&2

end=$(( SECONDS + seconds ))
rounds=0
while (( SECONDS < end )); do
  for test in "${tests[@]}"; do
    (( SECONDS < end )) || break
    seed=$(od -An -N8 -tu8 /dev/urandom | tr -d ' ')
    rounds=$(( rounds + 1 ))
    echo "round $rounds: $test, PROPTEST_RNG_SEED=$seed" >&2
    if ! PROPTEST_RNG_SEED=$seed nice -n 19 cargo test -q -p ctxkit-tests --test all "$test::" >"/tmp/proptest-long-$$.log" 2>&1; then
      cat "/tmp/proptest-long-$$.log"
      echo "proptest-long.sh: $test failed; replay with: PROPTEST_RNG_SEED=$seed cargo test -p ctxkit-tests --test all $test::" >&2
      rm -f "/tmp/proptest-long-$$.log"
      exit 1
    fi
  done
done
rm -f "/tmp/proptest-long-$$.log"
echo "proptest-long.sh: $rounds rounds in ${seconds}s, no failure" >&2
