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

test('the README\'s install from the repository works in a fresh project', () => {
  const readme = readFileSync(join(pkgDir, 'README.md'), 'utf8');
  const install = /```sh\n([\s\S]*?)```/.exec(readme)[1];
  assert.match(install, /^\.\/scripts\/build-pkg\.sh\b/m);
  assert.match(install, /^npm install \/path\/to\/ctxkit\/pkg\b/m);
  const dir = mkdtempSync(join(tmpdir(), 'ctxkit-install-'));
  try {
    writeFileSync(join(dir, 'package.json'), '{"name":"app","version":"1.0.0","type":"module"}');
    // The README's second line, with this repository's pkg folder (built: the suite runs on it).
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const installed = spawnSync(npm, ['install', '--no-audit', '--no-fund', '--offline', '--legacy-peer-deps', pkgDir],
      { cwd: dir, encoding: 'utf8' });
    assert.equal(installed.status, 0, installed.stderr);
    writeFileSync(join(dir, 'app.mjs'),
      "import { Engine } from 'ctxkit';\nconst e = new Engine({ family: 'claude' });\n"
      + "e.append([{ role: 'user', content: 'hi' }]);\n"
      + "const view = await e.prepare({ budget: { context_window: 16000 }, format: 'openai' });\n"
      + "console.log(view.messages.length);\n");
    const run = spawnSync(process.execPath, [join(dir, 'app.mjs')], { cwd: dir, encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout, '1\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
