// Regressions for issue 25's findings about Engine.prepare (each failed on the code before its
// fix): an answer dropped as stale after a concurrent `view` compacted must say why, in the
// result and in its stats; options whose getters throw make prepare reject, never throw; free()
// while summarize runs makes prepare reject, never resolve with an `llm` view; a lone surrogate
// in input is named as one, at its field.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

import * as ck from '../dist/node.mjs';
import { budget, pipelineLog, QUIET, SYSTEM } from './helpers.mjs';

const overBudget = { system: SYSTEM, budget: budget(9_000), policy: { nudges: QUIET, max_summary_tokens: 2_000 } };

function sliceEngine(module = ck) {
  const engine = new module.Engine({ family: 'claude' });
  engine.append(pipelineLog());
  return engine;
}

test('an answer that arrives after a concurrent view compacted is dropped with its reason, in the result and the stats', async () => {
  const engine = sliceEngine();
  let release;
  const gate = new Promise((resolve) => { release = resolve; });
  let asked = 0;
  const pending = engine.prepare({
    ...overBudget,
    summarize: async () => { asked += 1; await gate; return '## Goal\nlate answer'; },
  });
  // Let prepare reach its summarizer, then compact the same messages with a view.
  while (asked === 0) await new Promise((resolve) => setTimeout(resolve, 1));
  const viewed = engine.view(overBudget);
  assert.equal(viewed.summary.method, 'extractive', 'the view compacted');
  release();
  const late = await pending;
  assert.equal(late.summary, null, 'the late answer was not stored');
  assert.match(late.summary_dropped, /^the summarizer's answer arrived after another turn of this session/);
  assert.deepEqual(late.stats.fallbacks, [{
    call: 'summary',
    kind: 'stale',
    reason: late.summary_dropped,
  }]);
  assert.equal(engine.latestCheckpoint.method, 'extractive', "the view's checkpoint was kept");
  assert.ok(!engine.latestCheckpoint.summary.includes('late answer'));
  assert.equal(engine.toJSON().checkpoints.length, 1);
});

test('options whose reading throws make prepare reject, not throw', async () => {
  const throwing = (name) => ({ ...overBudget, get [name]() { throw new Error(`no ${name} for you`); } });
  for (const name of ['signal', 'summarize', 'extract', 'summarize_timeout_ms', 'budget']) {
    const engine = sliceEngine();
    let returned;
    assert.doesNotThrow(() => { returned = engine.prepare(throwing(name)); }, name);
    assert.ok(returned instanceof Promise, name);
    await assert.rejects(returned, (error) => error instanceof Error && error.message.startsWith('Engine.prepare: ') && error.message.includes(`no ${name} for you`), name);
    assert.equal(engine.latestCheckpoint, null, 'the engine is as it was');
  }
  // A Proxy whose keys cannot be listed (the spread of the options throws).
  const engine = sliceEngine();
  const hostile = new Proxy({}, {
    ownKeys() { throw new Error('keys refused'); },
    get(target, key) { return key === 'signal' ? new AbortController().signal : undefined; },
  });
  const returned = engine.prepare(hostile);
  assert.ok(returned instanceof Promise);
  await assert.rejects(returned, /^Error: Engine\.prepare: .*keys refused/);
  assert.ok(engine.view(overBudget).messages.length > 0, 'the engine stays usable');
});

test('free() while summarize runs makes prepare reject, saying the engine was freed', async () => {
  for (const module of [ck, createRequire(import.meta.url)('../dist/node.cjs')]) {
    const engine = sliceEngine(module);
    const pending = engine.prepare({
      ...overBudget,
      summarize: async () => { engine.free(); return '## Goal\nanswered after free'; },
    });
    await assert.rejects(pending, (error) => {
      assert.match(error.message, /^Engine\.prepare: /);
      assert.match(error.message, /this Engine was freed \(free\(\) was called on it\) while prepare awaited summarize/);
      return true;
    });
    assert.throws(() => engine.length, /this Engine was freed/);
    // The same during extract.
    const other = sliceEngine(module);
    await assert.rejects(other.prepare({
      ...overBudget,
      summarize: async () => '## Goal\nx',
      extract: async () => { other.free(); return '[]'; },
    }), /this Engine was freed \(free\(\) was called on it\) while prepare awaited extract/);
  }
});

test('a lone surrogate in input names its field and says what it is', () => {
  const engine = new ck.Engine();
  assert.throws(
    () => engine.append([{ role: 'user', content: 'ok' }, { role: 'user', content: 'bad \uD800 text' }]),
    { message: 'Engine.append: messages[1].content: holds a lone surrogate (\\ud800), which is not valid Unicode text; remove it or pair it' },
  );
  assert.equal(engine.length, 0, 'nothing appended');
  assert.throws(
    () => engine.view({ system: 'fine \uDC00' }),
    { message: 'Engine.view: options.system: holds a lone surrogate (\\udc00), which is not valid Unicode text; remove it or pair it' },
  );
  assert.throws(
    () => ck.toOpenAI([{ role: 'user', content: [{ type: 'text', text: '\uD83D' }] }]),
    /^Error: toOpenAI: messages\[0\]\.content\[0\]\.text: holds a lone surrogate \(\\ud83d\)/,
  );
  // A surrogate pair is valid Unicode and kept as written.
  engine.append([{ role: 'user', content: 'ship it \uD83D\uDE80' }]);
  assert.equal(engine.toJSON().entries[0].message.content, 'ship it 🚀');
});
