// The package as npm would ship it: one package for Node (ESM and CJS) and browsers, with the
// same exports everywhere, real TypeScript types, and only the intended files in the tarball.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as esm from 'ctxkit';
import initWeb, * as web from '../dist/ctxkit.js';
import { pkgDir } from './helpers.mjs';

const require = createRequire(import.meta.url);
const manifest = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));

test('ESM import and CJS require give the same exports as the browser build', () => {
  const cjs = require('ctxkit');
  const names = (module) => Object.keys(module).sort();
  assert.deepEqual(names(esm), names(cjs));
  // The file offload writer is Node's alone.
  assert.deepEqual(names(esm).filter((name) => name !== 'fileOffloadWriter'), names(web));
  assert.equal(typeof esm.fileOffloadWriter, 'function');
  for (const name of ['Engine', 'fromOpenAI', 'toOpenAI', 'fromAnthropic', 'toAnthropic', 'estimateTokens',
    'repairToolPairs', 'validate', 'planTurn', 'summaryCheckpoint', 'extractiveSummary', 'planOffload',
    'renderPrecis', 'buildSystemPrompt', 'advanceNudges', 'defaults', 'version', 'default', 'initSync']) {
    assert.equal(typeof esm[name], 'function', name);
  }
  assert.equal(esm.version(), manifest.version);
  assert.equal(cjs.version(), manifest.version);
  const log = [{ role: 'user', content: 'hi' }];
  const engine = new cjs.Engine();
  engine.append(log);
  assert.deepEqual(engine.view().messages, log);
});

test('the browser build runs once initialized, and agrees with the Node build', async () => {
  await initWeb({ module_or_path: readFileSync(join(pkgDir, 'dist', 'ctxkit_bg.wasm')) });
  const text = 'Fix the failing test in src/parser.rs: error[E0308]: mismatched types';
  assert.equal(web.estimateTokens(text, 'claude'), esm.estimateTokens(text, 'claude'));
  const engine = new web.Engine();
  engine.append([{ role: 'assistant', content: '', tool_calls: [{ id: 'c', name: 'ls', arguments: '{}' }] }]);
  assert.deepEqual(engine.view({ format: 'openai' }).messages.map((m) => m.role), ['user', 'assistant', 'tool']);
  assert.throws(() => web.toOpenAI(1), { message: 'toOpenAI: messages: expected an array of messages, found a number' });
});

test('the TypeScript types check against the usage files (node16, nodenext and bundler resolution, with and without the dom lib, with the official SDKs)', () => {
  const tsc = join(pkgDir, 'node_modules', 'typescript', 'bin', 'tsc');
  const configs = readdirSync(join(pkgDir, 'test', 'types')).filter((name) => /^tsconfig\..*\.json$/.test(name));
  assert.ok(configs.length >= 6, configs.join(', '));
  for (const config of configs) {
    const run = spawnSync(process.execPath, [tsc, '-p', join(pkgDir, 'test', 'types', config)], { encoding: 'utf8' });
    assert.equal(run.status, 0, `${config}:\n${run.stdout}${run.stderr}`);
  }
});

test('npm pack ships exactly the intended files', () => {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const out = execFileSync(npm, ['pack', '--dry-run', '--json'], { cwd: pkgDir, encoding: 'utf8' });
  const files = JSON.parse(out)[0].files.map((file) => file.path).sort();
  assert.deepEqual(files, [
    'LICENSE',
    'README.md',
    'dist/ai-sdk.d.ts',
    'dist/ai-sdk.mjs',
    'dist/conversations.d.ts',
    'dist/conversations.mjs',
    'dist/ctxkit.d.ts',
    'dist/ctxkit.js',
    'dist/ctxkit_bg.wasm',
    'dist/ctxkit_node.cjs',
    'dist/ctxkit_web.js',
    'dist/extras.cjs',
    'dist/extras.js',
    'dist/langchain.d.ts',
    'dist/langchain.mjs',
    'dist/node.cjs',
    'dist/node.d.cts',
    'dist/node.d.mts',
    'dist/node.mjs',
    'dist/node_offload.cjs',
    'package.json',
  ]);
  // Every file the exports map names is shipped.
  const targets = (value) => (typeof value === 'string' ? [value] : Object.values(value).flatMap(targets));
  for (const path of targets(manifest.exports)) assert.ok(files.includes(path.slice(2)), path);
  for (const path of [manifest.main, manifest.module, manifest.types]) assert.ok(files.includes(path.slice(2)), path);
});
