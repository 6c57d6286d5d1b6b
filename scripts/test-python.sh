#!/usr/bin/env bash
# The Python package's tests, from a fresh clone: builds the wheel (maturin, abi3, the dev profile) into
# a throwaway virtual environment that has the adapters' pinned packages
# (python/requirements-test.txt: pydantic-ai, langchain, langgraph, openai-agents), builds the
# CLI the corpus tests compare against, type-checks the examples with mypy --strict, and runs
# pytest. With CI=true nothing may skip, and pytest finding no test (its exit code 5) fails.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step says when it started (UTC), so a CI log shows where the run's minutes go.
step() { printf '\n==> [%s] %s\n' "$(date -u +%H:%M:%S)" "$*"; }
python=${PYTHON:-python3}

step "python: a Python 3.9+ with venv"
if ! "$python" -c 'import sys, venv, ensurepip; assert sys.version_info >= (3, 9)' 2>/dev/null; then
    apt-get update -qq && apt-get install -y -qq python3 python3-venv python3-pip >/dev/null
    python=python3
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
"$python" -m venv "$scratch/venv"
venv="$scratch/venv/bin"

step "python: the pinned test packages (python/requirements-test.txt)"
"$venv/pip" install -q --disable-pip-version-check -r python/requirements-test.txt

# The dev profile, which is the test profile's settings (Cargo.toml: opt-level 1, debug
# assertions on), in target/debug: the dependencies scripts/test.sh's cargo test compiled there
# are reused, so only the crates whose features differ for the wheel (PyO3's, the shell's) are
# compiled: about a minute on two cores, where a profile of its own rebuilt the whole tree in 3.5
# (docs/performance.md, "The test suite"). Not `--profile test`: cargo rustc then compiles the
# library as a test harness, an executable Python cannot load.
step "python: the wheel (maturin build, the dev profile), installed into the throwaway environment"
(cd python && "$venv/maturin" build --profile dev --quiet --out "$scratch/wheels")
"$venv/pip" install -q --disable-pip-version-check "$scratch"/wheels/ctxkit_core-*.whl

step "python: the CLI the corpus tests compare with (the build scripts/test.sh's cargo test made)"
# The same cargo invocation as scripts/test.sh's (the whole workspace): its features resolve as
# that run's did, so after it nothing is rebuilt (`-p ctxkit` alone resolved them otherwise and
# rebuilt the crate and its tests, about 3 minutes on two cores).
cargo test --workspace --locked --tests --no-run
export CTXKIT_CLI="$PWD/target/debug/ctxkit"

step "python: mypy --strict on the examples"
(cd python && "$venv/mypy" --strict examples)

step "python: pytest (the adapters with the real pydantic-ai, langchain, langgraph, openai-agents)"
set +e
(cd python && "$venv/pytest" -q -p no:cacheprovider -rs tests | tee "$scratch/pytest.log")
status=${PIPESTATUS[0]}
set -e
if [ "$status" -eq 5 ]; then
    echo "python: pytest collected no tests" >&2
    exit 1
fi
if [ "$status" -ne 0 ]; then exit "$status"; fi
if [ "${CI:-}" = "true" ] && grep -qE '[0-9]+ skipped' "$scratch/pytest.log"; then
    echo "python: tests were skipped with CI=true" >&2
    exit 1
fi
