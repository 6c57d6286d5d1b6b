// Engine.prepare's callbacks: memory extraction with the core's rules, and an AbortSignal.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import * as ck from '../dist/node.mjs';

function longSession() {
  const engine = new ck.Engine();
  engine.append([{ role: 'user', content: 'Plan a week in Lisbon; I prefer trains over planes.' }]);
  for (let i = 0; i < 30; i += 1) {
    engine.append([
      { role: 'assistant', content: null, tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'search', arguments: `{"q":"hotel ${i}"}` } }] },
      { role: 'tool', tool_call_id: `c${i}`, content: `Hotel ${i}: ${'a fine place near the river. '.repeat(20)}` },
    ], 'openai');
  }
  return engine;
}

const BUDGET = { context_window: 6_000 };

test('prepare asks extract before a summary and keeps what the core accepts', async () => {
  const engine = longSession();
  const asked = [];
  const result = await engine.prepare({
    budget: BUDGET,
    summarize: async () => '<summary>## Goal\nA week in Lisbon.</summary>',
    extract: async (request, context) => {
      asked.push({ request, context });
      return JSON.stringify([
        { title: 'Prefers trains', content: 'The user prefers trains over planes.', category: 'preference', importance: 7 },
        { title: '', content: 'no title', category: 'preference', importance: 5 },
      ]);
    },
  });
  assert.equal(asked.length, 1);
  assert.match(asked[0].request.system, /extract durable memories/);
  assert.match(asked[0].request.prompt, /trains over planes/);
  assert.equal(typeof asked[0].request.max_output_tokens, 'number');
  assert.ok(result.summary, 'the turn summarized');
  assert.deepEqual(result.extraction.outcome.drafts, [
    { title: 'Prefers trains', content: 'The user prefers trains over planes.', category: 'preference', importance: 7 },
  ]);
  assert.equal(result.extraction.outcome.rejected.length, 1);
  assert.equal(result.extraction.outcome.rejected[0].index, 1);
  assert.equal(result.extraction.failure_reason, null);
  // Without extract, no extraction is asked for.
  const plain = await longSession().prepare({ budget: BUDGET });
  assert.equal(plain.extraction, undefined);
});

test('an aborted signal stops the wait for summarize: the turn falls back, and the summarizer saw the signal', async () => {
  const engine = longSession();
  const controller = new AbortController();
  let seen;
  const pending = engine.prepare({
    budget: BUDGET,
    signal: controller.signal,
    summarize: (request, { signal }) => {
      seen = signal;
      setTimeout(() => controller.abort(new Error('user left')), 10);
      return new Promise(() => {}); // never settles
    },
  });
  const result = await pending;
  assert.equal(seen, controller.signal);
  assert.equal(result.summary.method, 'extractive');
  assert.equal(result.summary.fallback_reason, 'summarize rejected: aborted (user left)');
  // The engine stays usable.
  assert.ok(engine.view({ budget: BUDGET }).messages.length > 0);
  await assert.rejects(engine.prepare({ extract: 'no' }), /^Error: Engine\.prepare: options\.extract: expected a function/);
});
