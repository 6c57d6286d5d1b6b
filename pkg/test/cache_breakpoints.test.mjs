// Cache breakpoints from JS: every view's stats say where they are; `cache: true` with the
// Anthropic shape marks them as `cache_control` blocks (the plain view but for its markers,
// still valid), and the other shapes are the same with or without it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as ck from 'ctxkit';
import { budget, pipelineLog, QUIET, SYSTEM } from './helpers.mjs';

// Over its budget, so the view starts from a checkpoint summary: all four places get one.
const options = { system: SYSTEM, budget: budget(9_000), policy: { nudges: QUIET, max_summary_tokens: 2_000 } };

function engine() {
  const engine = new ck.Engine({ family: 'claude' });
  engine.append(pipelineLog());
  return engine;
}

// Every content block (system first, string content as one text block), markers taken out,
// and where the markers were.
function blocks(view) {
  const asBlocks = (content) => (typeof content === 'string' ? [{ type: 'text', text: content }] : content.map((b) => ({ ...b })));
  const all = [...asBlocks(view.system), ...view.messages.flatMap((m) => asBlocks(m.content))];
  const marked = [];
  all.forEach((block, index) => {
    if ('cache_control' in block) {
      assert.deepEqual(block.cache_control, { type: 'ephemeral' });
      delete block.cache_control;
      marked.push(index);
    }
  });
  return { all, marked };
}

test('an Anthropic view with cache: true marks the breakpoints its stats name', () => {
  const cached = engine().view({ ...options, format: 'anthropic', cache: true });
  const plain = engine().view({ ...options, format: 'anthropic' });
  assert.deepEqual(ck.validate(cached, 'anthropic'), []);
  assert.deepEqual(
    cached.stats.cache_breakpoints.map((b) => b.reason),
    ['system', 'summary', 'previous_turn', 'last_message'],
  );
  assert.deepEqual(cached.stats.cache_breakpoints, plain.stats.cache_breakpoints);
  const withMarkers = blocks(cached);
  const without = blocks(plain);
  assert.deepEqual(without.marked, []);
  assert.deepEqual(withMarkers.all, without.all, 'the markers are the only change');
  assert.equal(withMarkers.marked.length, 4);
  assert.equal(withMarkers.marked[0], 0, 'the system prompt is one block, marked');
});

test('the other shapes are the same with or without cache', () => {
  for (const format of ['openai', 'ctxkit', 'responses', 'gemini']) {
    const cached = engine().view({ ...options, format, cache: true });
    const plain = engine().view({ ...options, format });
    assert.deepEqual(cached, plain, format);
    assert.ok(cached.stats.cache_breakpoints.length >= 2, format);
  }
});

test('planTurn marks them too', () => {
  const roomy = { system: SYSTEM, budget: budget(200_000), policy: { nudges: QUIET } };
  const plan = ck.planTurn({ ...roomy, log: pipelineLog(), format: 'anthropic', cache: true });
  assert.equal(plan.kind, 'ready');
  const { marked } = blocks(plan.view);
  assert.equal(marked.length, plan.stats.cache_breakpoints.length);
  assert.deepEqual(plan.stats.cache_breakpoints.map((b) => b.reason), ['system', 'previous_turn', 'last_message']);
});
