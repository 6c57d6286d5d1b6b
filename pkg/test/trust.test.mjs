// Trust boundaries of the npm package (issue 25, items 2 and 7): a reported usage outside the
// plausible band of the estimate is refused and said so, the provider's whole input (cached
// tokens included) is counted per usage shape, summarize_timeout_ms refuses NaN and Infinity,
// the file offload writer never writes or reads through a hard link, and the AI SDK adapter
// reads a system message made of parts and names a null prompt.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { linkSync, mkdtempSync, rmSync, writeFileSync, readFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Engine, fileOffloadWriter } from 'ctxkit';
import { ctxkitMiddleware } from 'ctxkit/ai-sdk';

/** An engine whose log the estimator puts far over an 8k window. */
function bigEngine() {
  const engine = new Engine();
  for (let i = 0; i < 40; i += 1) {
    engine.append([
      { role: 'user', content: `question ${i}: ${'about the data and the report '.repeat(20)}` },
      { role: 'assistant', content: `answer ${i}: ${'the findings are as follows '.repeat(20)}` },
    ]);
  }
  return engine;
}

const OFF = { strategy: { kind: 'off' } };

test('recordUsage refuses a count far below the estimate, says why, and the view stays over the window', () => {
  const engine = bigEngine();
  const budget = { context_window: 8_000 };
  const view = engine.view({ budget, policy: OFF });
  assert.ok(view.stats.total_tokens > 8_000, `estimated ${view.stats.total_tokens}`);
  const verdict = engine.recordUsage(view.stats, 10);
  assert.equal(verdict.accepted, false);
  assert.match(verdict.reason, /reported usage of 10 input tokens refused: the view was estimated at \d+ tokens/);
  const next = engine.view({ budget, policy: OFF });
  assert.equal(next.stats.fits, false, 'a refused usage never makes a view fit');
  assert.equal(next.stats.calibrated_tokens, null);
  assert.equal(next.stats.refused_usage.input_tokens, 10);
  // With compaction on, the same session compacts.
  assert.notEqual(engine.view({ budget }).stats.tier, 'fits');
  assert.equal(engine.toJSON().usage_anchor, null);
});

test('recordUsage counts the provider\'s whole input per usage shape (cached tokens included)', () => {
  const engine = bigEngine();
  const view = engine.view({ budget: { context_window: 200_000 } });
  const total = view.stats.total_tokens;
  const anthropic = { input_tokens: 12, cache_read_input_tokens: total - 500, cache_creation_input_tokens: 488, output_tokens: 40 };
  // The README's old recipe (usage.input_tokens alone) is refused with caching on...
  assert.equal(engine.recordUsage(view.stats, anthropic.input_tokens).accepted, false);
  // ...and the whole usage is taken.
  assert.deepEqual(engine.recordUsage(view.stats, anthropic, 'anthropic'), { accepted: true, input_tokens: total, reason: null });
  assert.equal(engine.toJSON().usage_anchor.input_tokens, total);
  assert.equal(engine.recordUsage(view.stats, { prompt_tokens: total + 7, prompt_tokens_details: { cached_tokens: total } }, 'openai').input_tokens, total + 7);
  assert.equal(engine.recordUsage(view.stats, { inputTokens: { total: undefined, noCache: 3, cacheRead: total, cacheWrite: 4 } }, 'ai-sdk').input_tokens, total + 7);
  assert.equal(engine.recordUsage(view.stats, { inputTokens: total + 1, inputTokenDetails: { cacheReadTokens: total } }, 'ai-sdk').input_tokens, total + 1);
  assert.throws(() => engine.recordUsage(view.stats, { output_tokens: 3 }, 'anthropic'), /^Error: Engine\.recordUsage: usage\.input_tokens: missing/);
  assert.throws(() => engine.recordUsage(view.stats, anthropic, 'gemini'), /unknown usage shape "gemini"/);
});

test('prepare refuses a summarize_timeout_ms of NaN or Infinity (it used to mean the default)', async () => {
  const engine = bigEngine();
  for (const value of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
    await assert.rejects(engine.prepare({ summarize_timeout_ms: value, summarize: async () => 'x' }),
      /options\.summarize_timeout_ms: is (NaN|inf|-inf)/);
  }
});

test('fileOffloadWriter never writes through or reads a hard link', () => {
  const root = mkdtempSync(join(tmpdir(), 'ctxkit-links-'));
  const outside = mkdtempSync(join(tmpdir(), 'ctxkit-outside-'));
  try {
    const writer = fileOffloadWriter({ root });
    writer.write('.ctxkit/tool_results/s/1-a.txt', 'first');
    const victim = join(outside, 'victim.txt');
    writeFileSync(victim, 'precious', { mode: 0o644 });
    // A hard link planted at the next (predictable) name.
    linkSync(victim, join(root, '.ctxkit/tool_results/s/2-b.txt'));
    assert.throws(() => writer.write('.ctxkit/tool_results/s/2-b.txt', 'overwritten'), /already exists; refused/);
    assert.equal(readFileSync(victim, 'utf8'), 'precious');
    assert.throws(() => writer.read('.ctxkit/tool_results/s/2-b.txt'), /has 2 hard links; refused/);
    assert.equal(writer.read('.ctxkit/tool_results/s/1-a.txt'), 'first');
    mkdirSync(join(root, 'plain'));
  } finally {
    rmSync(root, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  }
});

test('AI SDK adapter: a system message made of parts is its text; a null prompt or message names the field', async () => {
  const middleware = ctxkitMiddleware();
  const { prompt } = await middleware.transformParams({
    params: { prompt: [{ role: 'system', content: [{ type: 'text', text: 'Be brief.' }, { type: 'text', text: ' Cite.' }] }, { role: 'user', content: [{ type: 'text', text: 'hi' }] }] },
  });
  assert.deepEqual(prompt[0], { role: 'system', content: 'Be brief. Cite.' });
  await assert.rejects(middleware.transformParams({ params: { prompt: null } }), /^Error: ctxkit\/ai-sdk: prompt: expected an array of messages, got null$/);
  await assert.rejects(middleware.transformParams({ params: { prompt: [null] } }), /^Error: ctxkit\/ai-sdk: prompt\[0\]: expected a message object, got null$/);
  await assert.rejects(middleware.transformParams({ params: { prompt: [{ role: 'system', content: [{ type: 'image' }] }] } }), /prompt\[0\]\.content\[0\]: a system message part must be text/);
});

test('setOffload pages with read_offload unless the agent has a read_file tool', async () => {
  const { memoryOffloadStore } = await import('ctxkit');
  const big = 'line of output\n'.repeat(2_000);
  const run = (options) => {
    const engine = new Engine();
    engine.setOffload({ session: 's', writer: memoryOffloadStore(), ...options });
    engine.append([
      { role: 'user', content: 'go' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'c1', name: 'shell', arguments: '{}' }] },
      { role: 'tool', tool_call_id: 'c1', content: big },
    ]);
    return JSON.stringify(engine.toJSON().entries[2].message);
  };
  assert.match(run({}), /read_offload/);
  assert.doesNotMatch(run({}), /read_file/);
  assert.match(run({ agent_tools: ['read_file', 'shell'] }), /read_file/);
  assert.match(run({ agent_tools: ['shell'], policy: { paging_tool: 'view' } }), /view/);
});
