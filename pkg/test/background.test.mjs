// Background compaction in the JS Engine (policy.background_percent): past the soft threshold
// `prepare` starts `summarize` without awaiting it; the turn that reaches the trigger uses the
// finished checkpoint instead of calling `summarize` on the critical path; a summarizer that
// fails in the background leaves the trigger to compact synchronously. The summarizer here is
// a promise the test settles by hand (a model that is slow on demand; no real server can be).
import { test } from 'node:test';
import assert from 'node:assert/strict';

import * as ck from '../dist/node.mjs';

const OPTIONS = {
  budget: { context_window: 8_000 },
  policy: { background_percent: 50 },
};

/** One agent turn's messages: a call and its ~300-token result. */
function turn(engine, i) {
  engine.append([
    { role: 'user', content: `Step ${i}: read src/file${i}.rs` },
    { role: 'assistant', content: null, tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'read_file', arguments: `{"path":"src/file${i}.rs"}` } }] },
    { role: 'tool', tool_call_id: `c${i}`, content: `fn f${i}() {}\n${'// a line of the file\n'.repeat(60)}` },
  ], 'openai');
}

/** A summarizer whose answers the test gives (or refuses) when it chooses. */
function handSummarizer() {
  const pending = [];
  const summarize = (request) => new Promise((resolve, reject) => {
    const tag = /wrapped in <([^>]+)>/.exec(request.prompt)?.[1] ?? 'summary';
    pending.push({
      request,
      answer: () => resolve(`<${tag}>\n## Goal\nRead the files.\n## Progress\nRead src/file1.rs onwards.\n## Next Steps\nKeep reading.\n</${tag}>`),
      fail: () => reject(new Error('model down')),
    });
  });
  return { summarize, pending };
}

/** Lets settled promises run their continuations (the engine's background task). */
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

test('past the soft threshold prepare starts summarize without awaiting it; the trigger uses its checkpoint', async () => {
  const engine = new ck.Engine();
  const { summarize, pending } = handSummarizer();
  let started;
  for (let i = 1; i <= 40 && started === undefined; i += 1) {
    turn(engine, i);
    // The summarizer never settles here, so a prepare that awaited it would never return.
    const result = await engine.prepare({ ...OPTIONS, summarize });
    assert.equal(result.summary, null, `turn ${i} did not compact synchronously`);
    if (result.background === 'started') started = i;
  }
  assert.ok(started, 'a turn past the soft threshold started a background summary');
  assert.equal(pending.length, 1, 'one request in flight');
  // While it is in flight, no other is started.
  turn(engine, 100);
  const during = await engine.prepare({ ...OPTIONS, summarize });
  assert.notEqual(during.background, 'started');
  assert.equal(pending.length, 1);
  pending[0].answer();
  await tick();
  let used;
  for (let i = started + 1; i <= 80 && used === undefined; i += 1) {
    turn(engine, i);
    const result = await engine.prepare({ ...OPTIONS, summarize });
    if (result.summary) {
      used = result;
    }
  }
  assert.ok(used, 'the trigger was reached');
  assert.equal(used.background, 'used');
  assert.equal(used.summary.method, 'llm');
  assert.equal(pending.length, 1, 'the trigger made no summary call of its own');
  assert.equal(used.summary.through_seq, pending[0].request.through_seq);
  assert.equal(engine.latestCheckpoint.through_seq, pending[0].request.through_seq);
  assert.match(engine.latestCheckpoint.summary, /Read the files\./);
  assert.ok(used.stats.fits);
});

test('a background summarizer that fails is dropped: the trigger compacts synchronously', async () => {
  const engine = new ck.Engine();
  const { summarize, pending } = handSummarizer();
  let synchronous;
  let failed = 0;
  for (let i = 1; i <= 80 && synchronous === undefined; i += 1) {
    turn(engine, i);
    const before = pending.length;
    const waiting = engine.prepare({ ...OPTIONS, summarize });
    await tick();
    // A summary asked for on the critical path is answered; a background one fails.
    if (pending.length > before) {
      const asked = pending[pending.length - 1];
      const result = await Promise.race([waiting, tick().then(() => null)]);
      if (result === null) {
        asked.answer();
        synchronous = await waiting;
        continue;
      }
      assert.equal(result.background, 'started');
      asked.fail();
      failed += 1;
      await tick();
    } else {
      await waiting;
    }
  }
  assert.ok(synchronous, 'the trigger compacted');
  assert.equal(synchronous.summary.method, 'llm');
  assert.equal(synchronous.background, undefined, 'the failed background summary was not used');
  // Each failed request was dropped (the next turn past the soft threshold may ask again);
  // the trigger made its own call.
  assert.ok(failed >= 1);
  assert.equal(pending.length, failed + 1, 'the background calls, then one at the trigger');
});

test('without background_percent, prepare never starts a background summary', async () => {
  const engine = new ck.Engine();
  const { summarize, pending } = handSummarizer();
  for (let i = 1; i <= 12; i += 1) {
    turn(engine, i);
    const waiting = engine.prepare({ budget: OPTIONS.budget, summarize });
    await tick();
    pending.at(-1)?.answer();
    const result = await waiting;
    assert.equal(result.background, undefined);
  }
});

test('a background answer that arrives after a view compacted is dropped with its reason in the next turn\'s stats', async () => {
  const engine = new ck.Engine();
  const { summarize, pending } = handSummarizer();
  let started;
  for (let i = 1; i <= 40 && started === undefined; i += 1) {
    turn(engine, i);
    const result = await engine.prepare({ ...OPTIONS, summarize });
    if (result.background === 'started') started = i;
  }
  assert.ok(started, 'a background summary was started');
  // While the model writes, a view with a smaller window compacts the session.
  const viewed = engine.view({ budget: { context_window: 3_000 } });
  assert.equal(viewed.summary.method, 'extractive', 'the view compacted');
  const kept = engine.latestCheckpoint.through_seq;
  pending[0].answer();
  await tick();
  turn(engine, 1000);
  const next = await engine.prepare({ ...OPTIONS, summarize });
  const stale = (next.stats.fallbacks ?? []).filter((fallback) => fallback.kind === 'stale');
  assert.equal(stale.length, 1, JSON.stringify(next.stats.fallbacks));
  assert.equal(stale[0].call, 'summary');
  assert.match(stale[0].reason, /^the background summarizer's answer arrived after another turn/);
  assert.equal(next.summary_dropped, stale[0].reason);
  assert.notEqual(next.background, 'used');
  assert.ok(engine.latestCheckpoint.through_seq >= kept, "the view's checkpoint was kept");
  assert.ok(!engine.latestCheckpoint.summary.includes('Read the files.'), 'the stale answer was not stored');
});
