// Cache breakpoints from JS: every view's stats say where they are; `cache: true` with the
// Anthropic shape marks them as `cache_control` blocks, with the Responses and Chat
// Completions shapes as OpenAI's `prompt_cache_breakpoint` on input parts (GPT-5.6 and later:
// at most four, none on assistant output, none under 1,024 tokens), each the plain view but
// for its markers and still valid; the other shapes are the same with or without it.
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

// The items (Responses) or messages (Chat) of an OpenAI view, markers taken out (a marked
// part's one-part array back to its string, a marked system message back to `instructions`),
// and the marked parts as [index, type].
function unmarkOpenai(view) {
  const copy = structuredClone(view);
  const items = copy.input ?? copy.messages;
  const marked = [];
  items.forEach((item, index) => {
    for (const key of ['content', 'output']) {
      if (!Array.isArray(item[key])) continue;
      let wasMarked = false;
      for (const part of item[key]) {
        if ('prompt_cache_breakpoint' in part) {
          assert.deepEqual(part.prompt_cache_breakpoint, { mode: 'explicit' });
          delete part.prompt_cache_breakpoint;
          marked.push([index, part.type]);
          wasMarked = true;
        }
      }
      if (wasMarked && item[key].length === 1 && typeof item[key][0].text === 'string') item[key] = item[key][0].text;
    }
  });
  if (copy.input && copy.instructions === undefined && copy.input[0]?.role === 'system' && typeof copy.input[0].content === 'string') {
    copy.instructions = copy.input.shift().content;
  }
  return { view: copy, marked };
}

test('a Responses view with cache: true marks OpenAI breakpoints on input parts', () => {
  const cached = engine().view({ ...options, format: 'responses', cache: true });
  const plain = engine().view({ ...options, format: 'responses' });
  assert.deepEqual(ck.validate(cached, 'responses'), []);
  const { view, marked } = unmarkOpenai(cached);
  assert.ok(marked.length >= 1 && marked.length <= 4, JSON.stringify(marked));
  for (const [index, type] of marked) {
    assert.ok(['input_text', 'input_image', 'input_file'].includes(type), type);
    assert.notEqual(cached.input[index].role, 'assistant');
  }
  assert.deepEqual(unmarkOpenai(plain).marked, []);
  assert.deepEqual(view.input, plain.input, 'the markers are the only change');
  assert.equal(view.instructions, plain.instructions);
});

test('a Chat Completions view with cache: true marks non-assistant parts', () => {
  const cached = engine().view({ ...options, format: 'openai', cache: true });
  const plain = engine().view({ ...options, format: 'openai' });
  assert.deepEqual(ck.validate(cached, 'openai'), []);
  const { view, marked } = unmarkOpenai(cached);
  assert.ok(marked.length >= 1 && marked.length <= 4, JSON.stringify(marked));
  for (const [index, type] of marked) {
    assert.ok(['text', 'image_url', 'file'].includes(type), type);
    assert.notEqual(cached.messages[index].role, 'assistant');
  }
  assert.deepEqual(view.messages, plain.messages, 'the markers are the only change');
});

test('the other shapes are the same with or without cache', () => {
  for (const format of ['ctxkit', 'gemini']) {
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
