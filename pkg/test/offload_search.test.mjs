// search_history sees offloaded outputs (issue 25, item 3): with an offload writer it can read
// back (memoryOffloadStore, fileOffloadWriter, or executeTool's read_file with its session), a
// word only an offloaded output holds is found, and the hit points to read_offload with the
// output's path and the match's line, whose page starts there. Without one, the log alone is
// searched.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import * as ck from '../dist/node.mjs';

// The unique word on line 1,234 of a big output.
const output = `${'compiling...\n'.repeat(1233)}thread 'main' panicked: the Quokka migration failed\n${'done\n'.repeat(20)}`;

function appendRun(engine) {
  engine.append([
    { role: 'user', content: 'run the migrations' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'bash', arguments: '{"cmd":"migrate"}' } }] },
    { role: 'tool', tool_call_id: 'c1', content: output },
    { role: 'user', content: 'what failed?' },
  ], 'openai');
}

/** The read_offload call an offload hit gives, as its arguments. */
function offloadCall(text) {
  const match = text.match(/, in its offloaded output at line (\d+): read_offload (\{.*\}):\n/);
  assert.ok(match, text);
  return { line: Number(match[1]), args: JSON.parse(match[2]) };
}

function checkFound(engine, file, search) {
  const text = search('QUOKKA migration');
  assert.ok(!text.includes('No message of the log holds'), text);
  assert.match(text, /^#3 tool \(bash\), in its offloaded output at line 1234: read_offload /m);
  assert.ok(text.includes('the Quokka migration failed'), text);
  const { line, args } = offloadCall(text);
  assert.deepEqual(args, { path: file, offset: 1234 });
  assert.equal(line, 1234);
  const page = engine.executeTool({ id: 'r1', name: 'read_offload', arguments: JSON.stringify(args) });
  assert.match(page.content, /^\s*1234\tthread 'main' panicked: the Quokka migration failed$/m, page.content);
}

test('a word only an offloaded output holds is found, pointing to read_offload at its line', () => {
  const engine = new ck.Engine();
  const store = ck.memoryOffloadStore();
  engine.setOffload({ session: 's', writer: store });
  appendRun(engine);
  const [[file]] = [...store.files];
  const reference = engine.toJSON().entries.find((entry) => entry.seq === 3).message.content;
  assert.ok(!reference.toLowerCase().includes('quokka'), 'the log holds only the reference');
  checkFound(engine, file, (query) => engine.searchHistory(query));
  checkFound(engine, file, (query) => engine.executeTool({ id: 's1', name: 'search_history', arguments: JSON.stringify({ query }) }).content);
  // Every word: the output holds both.
  assert.match(engine.searchHistory('quokka done'), /^#3 tool \(bash\) \(every word\), in its offloaded output at line 1234: /m);
});

test('the file writer is read back too, and a caller\'s read_file with its session', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ctxkit-offsearch-'));
  try {
    const writer = ck.fileOffloadWriter({ root });
    const engine = new ck.Engine();
    engine.setOffload({ session: 's', writer });
    appendRun(engine);
    const file = '.ctxkit/tool_results/s/0000000003-c1.txt';
    assert.equal(fs.readFileSync(path.join(root, file), 'utf8'), output);
    checkFound(engine, file, (query) => engine.searchHistory(query));

    // An engine restored without its writer searches the log only; given read_file and the
    // session, executeTool searches the outputs as well.
    const restored = ck.Engine.fromJSON(engine.toJSON());
    assert.match(restored.searchHistory('quokka migration'), /No message of the log holds this text/);
    const call = { id: 's2', name: 'search_history', arguments: '{"query":"quokka migration"}' };
    const read_file = (p) => fs.readFileSync(path.join(root, p), 'utf8');
    assert.match(restored.executeTool(call, { read_file, session: 's' }).content, /in its offloaded output at line 1234: read_offload /);
    assert.match(restored.executeTool(call, { read_file }).content, /No message of the log holds/, 'no session: no paths to read');
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
