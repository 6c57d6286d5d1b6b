#!/usr/bin/env bash
# The JS side of ctxkit, from a fresh clone: installs what it needs (the wasm32 target, the
# pinned wasm-bindgen CLI and pkg's npm dev dependencies through scripts/build-pkg.sh, Debian's
# chromium for the browser test), lints the wasm shell for its real target, builds pkg/, and
# runs the package's tests: the same fixtures and snapshots as the Rust tests, bad input from
# JS, the Engine protocol, ESM/CJS/browser exports, the TypeScript types, the `npm pack` file
# list, and the browser test in headless Chromium. scripts/test.sh calls it last.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step says when it started (UTC), so a CI log shows where the run's minutes go.
step() { printf '\n==> [%s] %s\n' "$(date -u +%H:%M:%S)" "$*"; }

step "chromium for the browser test (/usr/bin/chromium)"
if [[ ! -x /usr/bin/chromium ]]; then
  if [[ "$(id -u)" == 0 ]]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "test-pkg: /usr/bin/chromium is missing and this is not root: the browser test will skip (or fail with CI=true)" >&2
  fi
fi

# The target first: clippy below checks the shell as it is compiled for the browser.
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  rustup target add wasm32-unknown-unknown
fi
step "clippy: the wasm shell for wasm32-unknown-unknown"
cargo clippy --locked -p ctxkit-wasm --target wasm32-unknown-unknown -- -D warnings

./scripts/build-pkg.sh

step "tsc --strict: the typings with the official SDKs and the frameworks (pkg/test/types)"
for config in pkg/test/types/tsconfig.*.json; do
  echo "  $config"
  node pkg/node_modules/typescript/bin/tsc -p "$config"
done

step "node --test (pkg/test: fixtures, errors, engine, package, types, npm pack, browser)"
(cd pkg && node --test test/*.test.mjs)

# The peer ranges admit the AI SDK 5 and 6 (package.json): a fresh project installs the packed
# package beside ai@5 (an ERESOLVE here is the bug AI SDK 5 users hit) and runs the adapter's
# test there. AI SDK 6 and LangChain 1.x are the dev dependencies the tests above ran with.
step "peer range: npm install ctxkit with ai@5, and the AI SDK adapter's test on it"
project=$(mktemp -d)
trap 'rm -rf "$project"' EXIT
(cd pkg && npm pack --silent --pack-destination "$project" >/dev/null)
cp pkg/test/ai-sdk-majors.test.mjs "$project/"
(cd "$project" && echo '{ "name": "peer-range-check", "private": true, "type": "module" }' > package.json \
  && npm install --no-audit --no-fund 'ai@5' ./ctxkit-*.tgz >/dev/null \
  && node -e 'const v = require("ai/package.json").version; if (!v.startsWith("5.")) { console.error("ai " + v + " installed, not 5"); process.exit(1); } console.log("  ai " + v)' \
  && node --test ai-sdk-majors.test.mjs)
