// The npm package's TypeScript declarations as a reviewed snapshot (issue 35): the files the
// package's "types" point to, dist/ctxkit.d.ts (browsers and bundlers) and dist/node.d.mts
// (Node; node.d.cts is its copy), are what wasm-bindgen generates from the wasm/ crate's
// exports at build (scripts/build-pkg.sh) joined with the hand-written pkg/src/*.d.ts. They are
// not committed (pkg/dist is git-ignored), so a change to the JS API would go unreviewed; this
// test compares them with the committed copies in pkg/api/, so such a change is a diff there.
//
// node.d.mts repeats ctxkit.d.ts up to its entry's own lines (how the module is initialized),
// so its snapshot, api/node.tail.d.mts, holds only what follows the two files' common lines: a
// change inside the shared part shortens that prefix and shows in the tail's diff too.
//
// To accept a change deliberately, build the package (./scripts/build-pkg.sh), then from pkg/
// run
//   CTXKIT_API_UPDATE=1 node --test test/api_snapshot.test.mjs
// which rewrites pkg/api/ instead of comparing; commit it with the change that caused it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pkgDir } from './helpers.mjs';

const UPDATE = process.env.CTXKIT_API_UPDATE === '1';
const dist = join(pkgDir, 'dist');
const api = join(pkgDir, 'api');
// Each snapshot: the built file it is made from, and how (the whole text, or node.d.mts's tail).
const SNAPSHOTS = [
  { name: 'ctxkit.d.ts', built: 'ctxkit.d.ts', of: (text) => text },
  { name: 'node.tail.d.mts', built: 'node.d.mts', of: (text) => tailAfterShared(text) },
];

// The lines of `text` from the first one where it differs from the built ctxkit.d.ts.
function tailAfterShared(text) {
  const shared = readFileSync(join(dist, 'ctxkit.d.ts'), 'utf8').split('\n');
  const lines = text.split('\n');
  const first = lines.findIndex((line, i) => line !== shared[i]);
  return lines.slice(first === -1 ? lines.length : first).join('\n');
}

// The first line where two texts differ, for a readable failure.
function firstDifference(built, committed) {
  const a = built.split('\n');
  const b = committed.split('\n');
  const line = a.findIndex((text, i) => text !== b[i]);
  const at = line === -1 ? b.length : line;
  return `line ${at + 1}:\n  built:     ${a[at] ?? '(end)'}\n  committed: ${b[at] ?? '(end)'}`;
}

for (const { name, built: from, of } of SNAPSHOTS) {
  test(`dist/${from} is the reviewed copy in api/${name}`, () => {
    const builtPath = join(dist, from);
    assert.ok(existsSync(builtPath), `${builtPath} is missing: run ./scripts/build-pkg.sh first`);
    const built = of(readFileSync(builtPath, 'utf8'));
    const committedPath = join(api, name);
    if (UPDATE) {
      mkdirSync(api, { recursive: true });
      writeFileSync(committedPath, built);
      return;
    }
    assert.ok(existsSync(committedPath), `${committedPath} is missing: see this file's header`);
    const committed = readFileSync(committedPath, 'utf8');
    assert.ok(
      built === committed,
      `dist/${from} differs from api/${name} (CTXKIT_API_UPDATE=1 to accept): ${firstDifference(built, committed)}`,
    );
  });
}

test('the CommonJS declarations are the ESM ones', () => {
  const mts = readFileSync(join(dist, 'node.d.mts'), 'utf8');
  assert.equal(readFileSync(join(dist, 'node.d.cts'), 'utf8'), mts);
});

test('the snapshot declares the API the package exports', () => {
  const declared = readFileSync(join(api, 'ctxkit.d.ts'), 'utf8');
  for (const name of ['class Engine', 'function validate', 'function planTurn', 'default function __wbg_init']) {
    assert.ok(declared.includes(`export ${name}`), `api/ctxkit.d.ts declares ${name}`);
  }
});
