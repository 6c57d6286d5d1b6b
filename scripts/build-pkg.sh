#!/usr/bin/env bash
# Builds the npm package `ctxkit` into pkg/dist from the wasm/ crate, installing what it needs:
# the wasm32 target, the wasm-bindgen CLI at the exact version Cargo.lock pins (wasm-bindgen
# refuses a CLI of another version), and pkg's dev dependencies (wasm-opt comes from the npm
# package binaryen). No wasm-pack.
#
# Output (pkg/dist, git-ignored):
#   ctxkit.js, ctxkit.d.ts    browsers and bundlers (`await init()`): ctxkit_web.js, wasm-bindgen's
#                             web target, with the package's additions (extras.mjs)
#   ctxkit_bg.wasm            the module, shared by both glues
#   ctxkit_node.cjs           Node glue (nodejs target: loads the .wasm synchronously)
#   node.mjs, node.cjs        Node entries (ESM import and CJS require), ready on import
#   node.d.mts, node.d.cts    their types
#   extras.js, extras.cjs     the freed-Engine guard and the in-memory offload store
#   node_offload.cjs          the Node file offload writer
#   ai-sdk.*, langchain.*     the framework adapters (subpath exports)
#   conversations.*           their conversation router (one Engine per conversation)
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step says when it started (UTC), so a CI log shows where the run's minutes go.
step() { printf '\n==> [%s] %s\n' "$(date -u +%H:%M:%S)" "$*"; }

# The wasm-bindgen version Cargo.lock pins (the CLI must match it exactly).
version=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
if [[ -z "$version" ]]; then
  echo "build-pkg: wasm-bindgen not found in Cargo.lock" >&2
  exit 1
fi

step "toolchain: wasm32-unknown-unknown target, wasm-bindgen-cli $version"
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  rustup target add wasm32-unknown-unknown
fi
if [[ "$(wasm-bindgen --version 2>/dev/null || true)" != "wasm-bindgen $version" ]]; then
  # Not --locked: the CLI's own lock file does not build with this toolchain.
  cargo install wasm-bindgen-cli --version "$version"
fi

step "npm dependencies (pkg/node_modules)"
if [[ ! -x pkg/node_modules/.bin/wasm-opt || pkg/package-lock.json -nt pkg/node_modules/.package-lock.json ]]; then
  (cd pkg && npm ci --no-audit --no-fund)
fi

# The wasm-release profile (workspace Cargo.toml): size over speed, for every crate, with std
# itself rebuilt for size on nightly (-Zbuild-std, std's optimize_for_size feature) and panics
# compiled to a bare trap (-Cpanic=immediate-abort: no panic message formatting is linked; the
# module never panics on any input, lib.rs's guarantee, so nothing observable changes), and
# without the source locations panics would have named (-Zlocation-detail=none: the trap prints
# nothing, and wasm-bindgen reads Location only in debug builds; 0.5 KB gzipped). That is
# 25 KB gzipped (docs/performance.md, "Size"). Its own target directory and flags passed to
# this one command only, so no other build in target/ sees them or rebuilds.
step "cargo +nightly build -Zbuild-std --profile wasm-release --target wasm32-unknown-unknown -p ctxkit-wasm"
if ! rustup toolchain list | grep -q '^nightly'; then
  echo "build-pkg: the nightly toolchain is missing (the module is built with -Zbuild-std): rustup toolchain install nightly --component rust-src" >&2
  exit 1
fi
if ! rustup component list --installed --toolchain nightly | grep -qx rust-src; then
  rustup component add rust-src --toolchain nightly
fi
wasm_target=target/wasm-nightly
CARGO_ENCODED_RUSTFLAGS=$'-Zunstable-options\x1f-Cpanic=immediate-abort\x1f-Zlocation-detail=none' \
  cargo +nightly build -Zbuild-std=std,panic_abort -Zbuild-std-features=optimize_for_size \
  --profile wasm-release --locked --target wasm32-unknown-unknown --target-dir "$wasm_target" -p ctxkit-wasm
wasm=$wasm_target/wasm32-unknown-unknown/wasm-release/ctxkit_wasm.wasm

step "wasm-bindgen: web and nodejs glue"
out=pkg/dist
work=target/pkg-build
rm -rf "$out" "$work"
mkdir -p "$out" "$work/web" "$work/node"
wasm-bindgen --target web --out-name ctxkit --out-dir "$work/web" "$wasm"
wasm-bindgen --target nodejs --out-name ctxkit --out-dir "$work/node" "$wasm"
# Both glues must load the same module, so the package ships one .wasm.
if ! cmp -s "$work/web/ctxkit_bg.wasm" "$work/node/ctxkit_bg.wasm"; then
  echo "build-pkg: the web and nodejs targets produced different .wasm files" >&2
  exit 1
fi

# --one-caller-inline-max-function-size: binaryen inlines every function that has a single
# caller, whatever its size, by default; on this module that made the .wasm 2% smaller raw but
# 13% larger gzipped (459,783 against 404,657 bytes with the limit at 10: the inlined bodies
# repeat less for gzip to find), and it is the gzipped size that is downloaded.
# --low-memory-unused: binaryen may fold a constant added to an address into the load's or
# store's offset, which differs only when the addition wraps past 2^32 onto the first 1 KiB of
# memory. Rust's wasm32 layout puts the 1 MiB stack first (data from 1 MiB up), so that KiB is
# the stack's far end and no pointer wraps onto it: 0.8 KB gzipped off (docs/performance.md).
# -O2 rather than -Oz: binaryen's size levels (-Os, -Oz) choose smaller encodings that repeat
# less, and gzip, which is what is downloaded, undoes most of their gain: on this module -O2
# came out about 3% larger raw and 1.6 KB smaller gzipped (docs/performance.md, "Size").
# --always-inline-max-function-size=3 (binaryen's default 2): functions of 3 bytes' body inlined
# everywhere, 0.5 KB gzipped off; 4 and more made it larger again.
# --reorder-functions-by-name (after the optimizations, while the name section is still there;
# --strip-debug drops it from the output): the functions in the order of their names, so the
# instances of one generic function and the functions of one module sit together, where gzip's
# 32 KB window finds what they repeat: 5.2 KB gzipped off. The order changes no behaviour (calls
# and the exports go by index and name, which binaryen keeps in step).
step "wasm-opt -O2 --converge --one-caller-inline-max-function-size=10 --always-inline-max-function-size=3 --reorder-functions-by-name --low-memory-unused (binaryen)"
pkg/node_modules/.bin/wasm-opt -O2 --converge --one-caller-inline-max-function-size=10 --always-inline-max-function-size=3 --reorder-functions-by-name --low-memory-unused --strip-debug --strip-producers --enable-bulk-memory --enable-nontrapping-float-to-int \
  --enable-sign-ext --enable-reference-types --enable-multivalue --enable-mutable-globals \
  "$work/web/ctxkit_bg.wasm" -o "$out/ctxkit_bg.wasm"

cp "$work/web/ctxkit.js" "$out/ctxkit_web.js"
cp pkg/src/browser.mjs "$out/ctxkit.js"
# The browser typings without the DOM lib: wasm-bindgen's init types name RequestInfo, URL,
# Response, BufferSource and WebAssembly, which a Node project with `moduleResolution: bundler`
# and no `dom` lib does not have; pkg/src/web-globals.d.ts gives structural stand-ins.
sed -e 's/^export type InitInput = RequestInfo | URL | Response | BufferSource | WebAssembly.Module;$/export type InitInput = string | { readonly href: string } | { readonly url: string } | { arrayBuffer(): Promise<ArrayBuffer> } | ArrayBuffer | ArrayBufferView | WebAssembly.Module;/' \
  -e 's/^export type SyncInitInput = BufferSource | WebAssembly.Module;$/export type SyncInitInput = ArrayBuffer | ArrayBufferView | WebAssembly.Module;/' \
  "$work/web/ctxkit.d.ts" > "$work/web/ctxkit.nodom.d.ts"
if grep -qE 'RequestInfo \||BufferSource \|' "$work/web/ctxkit.nodom.d.ts"; then
  echo "build-pkg: the web typings still name DOM types (wasm-bindgen changed its InitInput)" >&2
  exit 1
fi
cat "$work/web/ctxkit.nodom.d.ts" pkg/src/web-globals.d.ts pkg/src/extras.d.ts > "$out/ctxkit.d.ts"
cp "$work/node/ctxkit.js" "$out/ctxkit_node.cjs"
cp pkg/src/node.mjs pkg/src/node.cjs "$out/"
cp pkg/src/extras.mjs "$out/extras.js"
cp pkg/src/node-offload.cjs "$out/node_offload.cjs"
# The CJS copy of extras.mjs (Node 20 cannot require an ES module).
node -e '
  const fs = require("fs");
  const source = fs.readFileSync(process.argv[1], "utf8");
  const names = [...source.matchAll(/^export function (\w+)/gm)].map((m) => m[1]);
  fs.writeFileSync(process.argv[2], "\x27use strict\x27;\n" + source.replace(/^export function/gm, "function")
    + "\nmodule.exports = { " + names.join(", ") + " };\n");
' pkg/src/extras.mjs "$out/extras.cjs"
cat "$work/node/ctxkit.d.ts" pkg/src/node-init.d.ts pkg/src/extras.d.ts pkg/src/node-offload.d.ts > "$out/node.d.mts"
cp "$out/node.d.mts" "$out/node.d.cts"
# The adapters' shared conversation router (imported by both as ./conversations.mjs).
cp pkg/src/conversations.mjs "$out/conversations.mjs"
cp pkg/src/conversations.d.ts "$out/conversations.d.ts"
for adapter in ai-sdk langchain; do
  if [[ -f "pkg/src/$adapter.mjs" ]]; then
    cp "pkg/src/$adapter.mjs" "$out/$adapter.mjs"
    cp "pkg/src/$adapter.d.ts" "$out/$adapter.d.ts"
  fi
done

raw=$(wc -c < "$out/ctxkit_bg.wasm")
gz=$(gzip -9 -c "$out/ctxkit_bg.wasm" | wc -c)
step "built pkg/dist: ctxkit_bg.wasm $raw bytes, $gz gzipped"
# The size limit (docs/performance.md, "Size"): the gzipped module stays under 297,000 bytes (the
# module after issue 35's fifth pass, 294,447 B, plus room for a nightly toolchain's drift: a
# bigger step fails here).
if (( gz >= 297000 )); then
  echo "build-pkg: ctxkit_bg.wasm is $gz bytes gzipped, over the limit of 297,000" >&2
  exit 1
fi
