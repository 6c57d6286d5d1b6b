// The package README's Node example runs as it is (against the built package).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { pkgDir } from './helpers.mjs';

test('the README\'s Node example runs', () => {
  const readme = readFileSync(join(pkgDir, 'README.md'), 'utf8');
  const node = readme.slice(readme.indexOf('## Node'));
  const example = /```js\n([\s\S]*?)```/.exec(node)[1];
  const entry = pathToFileURL(join(pkgDir, 'dist', 'node.mjs')).href;
  const dir = mkdtempSync(join(tmpdir(), 'ctxkit-readme-'));
  try {
    const file = join(dir, 'example.mjs');
    writeFileSync(file, example.replace("from 'ctxkit'", `from '${entry}'`));
    const run = spawnSync(process.execPath, [file], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /^fits \d+ \[\]\n3 4\n$/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
