// The Engine's built-in offload (setOffload): big tool outputs written through the caller's
// writer at the seq they really get, stored as references, paged back with read_offload; the
// Node file writer's safety rules; a clear error on a freed engine.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

import * as ck from '../dist/node.mjs';

const big = (n) => Array.from({ length: n }, (_, i) => `line ${i}: ${'x'.repeat(40)}`).join('\n');

function batch(id, output) {
  return [
    { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'bash', arguments: '{"cmd":"make"}' } }] },
    { role: 'tool', tool_call_id: id, content: output },
  ];
}

test('append offloads big tool outputs at their real seq, and read_offload pages them back', () => {
  const engine = new ck.Engine();
  const store = ck.memoryOffloadStore();
  engine.setOffload({ session: 'run 1', writer: store, policy: { paging_tool: 'read_offload', offset_param: 'offset', limit_param: 'limit' } });
  engine.append([{ role: 'user', content: 'build it' }], 'openai');
  const seqs = engine.append([...batch('c1', 'ok'), ...batch('c2', big(400))], 'openai');
  assert.deepEqual(seqs, [2, 3, 4, 5]);
  assert.equal(store.files.size, 1, 'only the big output is offloaded');
  const [[file, content]] = [...store.files];
  assert.match(file, /^\.ctxkit\/tool_results\/run_1-[0-9a-f]+\/0000000005-c2\.txt$/, 'named by the seq it got (5), not nextSeq of the batch (2)');
  assert.equal(content, big(400));
  const stored = engine.toJSON().entries.find((entry) => entry.seq === 5).message;
  assert.ok(stored.content.includes(file), 'the log keeps the reference');
  assert.ok(stored.content.length < 5_000);
  assert.deepEqual(engine.lastOffloadErrors, []);
  const page = engine.executeTool({ id: 'r1', name: 'read_offload', arguments: JSON.stringify({ path: file, offset: 10, limit: 3 }) });
  assert.equal(page.is_error ?? false, false, page.content);
  assert.match(page.content, /line 9: x+\n/);
  assert.ok(!page.content.includes('line 13:'));
});

test('a writer that throws keeps the output in the log and says why', () => {
  const engine = new ck.Engine();
  engine.setOffload({ session: 's', writer: { write() { throw new Error('disk full'); }, read() { return ''; } } });
  engine.append(batch('c1', big(400)), 'openai');
  assert.equal(engine.toJSON().entries[1].message.content, big(400));
  assert.equal(engine.lastOffloadErrors.length, 1);
  assert.match(engine.lastOffloadErrors[0], /^seq 2: \.ctxkit\/tool_results\/s\/0000000002-c1\.txt was not written \(disk full\); the output stays in the log$/);
  assert.throws(() => engine.setOffload({ session: 's', writer: {} }), /^Error: Engine\.setOffload: options\.writer\.write: expected a function/);
  assert.throws(() => engine.setOffload({ session: 's', writer: ck.memoryOffloadStore(), policy: { threshold: 1 } }), /^Error: Engine\.setOffload: options\.policy\.threshold: unknown field/);
});

test('fileOffloadWriter: 0700 folders, 0600 files, no symbolic links, no way out of the folder', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ctxkit-offload-'));
  try {
    const writer = ck.fileOffloadWriter({ root });
    const engine = new ck.Engine();
    engine.setOffload({ session: 'agent', writer });
    engine.append(batch('c1', big(400)), 'openai');
    const folder = path.join(root, '.ctxkit', 'tool_results', 'agent');
    const [name] = fs.readdirSync(folder);
    assert.equal(fs.statSync(path.join(root, '.ctxkit')).mode & 0o777, 0o700);
    assert.equal(fs.statSync(folder).mode & 0o777, 0o700);
    assert.equal(fs.statSync(path.join(folder, name)).mode & 0o777, 0o600);
    assert.equal(writer.read(`.ctxkit/tool_results/agent/${name}`), big(400));
    for (const bad of ['../x', '/etc/passwd', 'a//b', 'a/./b', 'a\\b']) {
      assert.throws(() => writer.write(bad, 'x'), /^Error: offload path: /, bad);
    }
    // A .ctxkit that is a symbolic link is refused, and nothing is written through it.
    const other = fs.mkdtempSync(path.join(os.tmpdir(), 'ctxkit-elsewhere-'));
    const linked = fs.mkdtempSync(path.join(os.tmpdir(), 'ctxkit-linked-'));
    fs.symlinkSync(other, path.join(linked, '.ctxkit'));
    assert.throws(() => ck.fileOffloadWriter({ root: linked }).write('.ctxkit/tool_results/a/1-x.txt', 'x'), /\.ctxkit is a symbolic link; refused/);
    assert.deepEqual(fs.readdirSync(other), []);
    // A file that is a symbolic link is not followed.
    fs.symlinkSync(path.join(other, 'target'), path.join(folder, 'link.txt'));
    assert.throws(() => writer.write('.ctxkit/tool_results/agent/link.txt', 'x'), /is a symbolic link; refused/);
    assert.equal(fs.existsSync(path.join(other, 'target')), false);
    fs.rmSync(other, { recursive: true });
    fs.rmSync(linked, { recursive: true });
  } finally {
    fs.rmSync(root, { recursive: true });
  }
});

test('a call on a freed engine says so, in ESM and CJS', async () => {
  for (const module of [ck, createRequire(import.meta.url)('../dist/node.cjs')]) {
    const engine = new module.Engine();
    engine.free();
    assert.throws(() => engine.append([{ role: 'user', content: 'x' }]), {
      message: 'Engine.append: this Engine was freed (free() was called on it); make a new Engine, or Engine.fromJSON(state) from a state saved before',
    });
    assert.throws(() => engine.length, /^Error: Engine\.length: this Engine was freed/);
    await assert.rejects(engine.prepare({}), /^Error: Engine\.prepare: this Engine was freed/);
  }
});
