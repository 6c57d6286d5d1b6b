// The Engine's turn protocol from JS: append, view, prepare with a summarizer (and every way a
// summarizer can fail), state export and import, usage calibration; and the smaller functions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as ck from 'ctxkit';
import { budget, pipelineLog, QUIET, SYSTEM } from './helpers.mjs';

const overBudget = { system: SYSTEM, budget: budget(9_000), policy: { nudges: QUIET, max_summary_tokens: 2_000 } };

function sliceEngine() {
  const engine = new ck.Engine({ family: 'claude' });
  engine.append(pipelineLog());
  return engine;
}

test('append takes ctxkit, OpenAI and Anthropic messages and returns their seqs', () => {
  const engine = new ck.Engine();
  assert.equal(engine.nextSeq, 1);
  assert.deepEqual(engine.append([{ role: 'user', content: 'hi' }]), [1]);
  const openai = [
    { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'ls', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'c1', content: 'a.txt' },
  ];
  assert.deepEqual(engine.append(openai, 'openai'), [2, 3]);
  const anthropic = [
    { role: 'assistant', content: [{ type: 'tool_use', id: 'c2', name: 'cat', input: { path: 'a.txt' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c2', content: 'hello' }, { type: 'text', text: 'thanks' }] },
  ];
  assert.deepEqual(engine.append(anthropic, 'anthropic'), [4, 5, 6]);
  assert.equal(engine.length, 6);
  assert.equal(engine.nextSeq, 7);
  assert.deepEqual(engine.toJSON().entries.map((e) => e.message), [
    { role: 'user', content: 'hi' }, ...ck.fromOpenAI(openai), ...ck.fromAnthropic(anthropic),
  ]);
  const view = engine.view({ format: 'anthropic', system: 'be brief' });
  assert.equal(view.system, 'be brief');
  assert.deepEqual(ck.validate(view, 'anthropic'), []);
});

test('prepare asks the summarizer and keeps its summary', async () => {
  const engine = sliceEngine();
  let asked;
  const view = await engine.prepare({
    ...overBudget,
    format: 'openai',
    summarize: async (request) => {
      asked = request;
      assert.equal(engine.length, 48, 'the engine may be used while the summarizer runs');
      return '<analysis>thinking</analysis><summary>## Goal\nUnify transcript views.</summary>';
    },
  });
  assert.match(asked.system, /You summarize the history/);
  assert.match(asked.prompt, /## Critical Context/);
  assert.deepEqual(view.summary, { method: 'llm', through_seq: asked.through_seq, fallback_reason: null });
  // The log's Goal (the user's request, verbatim), then the LLM's summary with its own goal
  // under a heading saying whose it is, then what both left out: the identifiers and error
  // lines of the covered messages (read as the extractive summary reads them), then the pinned
  // facts.
  const kept = engine.latestCheckpoint.summary;
  assert.match(kept, /^## Goal\n- Work on bead spotter-dov\./, kept);
  assert.match(kept, /\n\n## The summarizer's own account of the goal \(not the user's words\)\nUnify transcript views\.\n\n(## Identifiers in use\n`[^\n]+\n\n)?(## Errors \(verbatim\)\n(- [^\n]+\n)+\n)?(## Pinned facts\n|$)/, kept);
  assert.match(kept, /\n## Identifiers in use\n`/, 'the identifiers the agent used are appended');
  assert.ok(engine.latestCheckpoint.pinned.every((fact) => kept.includes(fact.text)));
  assert.equal(view.stats.tier, 'summarized');
  assert.equal(view.stats.checkpoint_method, 'llm');
  assert.equal(view.messages[0].role, 'system');
  assert.match(view.messages[1].content, /Unify transcript views/);
  assert.deepEqual(ck.validate(view, 'openai'), []);

  // The next turn starts from the checkpoint: no new summary.
  let again = 0;
  const next = await engine.prepare({ ...overBudget, summarize: async () => { again += 1; return 'x'; } });
  assert.equal(again, 0);
  assert.equal(next.summary, null);
  assert.equal(next.stats.checkpoint_through, asked.through_seq);
});

test('a summarizer that fails or answers badly falls back to the extractive summary', async () => {
  const cases = [
    [async () => { throw new Error('rate limited'); }, 'summarize rejected: rate limited'],
    [() => Promise.reject('timeout'), 'summarize rejected: timeout'],
    [() => { throw new TypeError('bad key'); }, 'summarize threw: bad key'],
    [async () => 42, 'summarize returned a number, not a string'],
    [async () => undefined, 'summarize returned undefined, not a string'],
    [async () => ({ text: 'x' }), 'summarize returned an object, not a string'],
    [async () => '   ', 'summary: the summarizer returned an empty summary'],
    [async () => 'word '.repeat(5_000), /^summary: the summary with the \d+ pinned facts it left out is about \d+ tokens, over the limit of \d+$/],
  ];
  for (const [summarize, reason] of cases) {
    const engine = sliceEngine();
    const view = await engine.prepare({ ...overBudget, summarize });
    assert.equal(view.summary.method, 'extractive');
    if (typeof reason === 'string') assert.equal(view.summary.fallback_reason, reason);
    else assert.match(view.summary.fallback_reason, reason);
    assert.equal(engine.latestCheckpoint.method, 'extractive');
    assert.ok(view.stats.fits);
  }
  // A plain string (not a promise) is an answer too.
  const engine = sliceEngine();
  const view = await engine.prepare({ ...overBudget, summarize: () => '## Goal\nsync answer' });
  assert.equal(view.summary.method, 'llm');
});

test('a summarizer that never settles times out into the extractive summary', async () => {
  const engine = sliceEngine();
  let asked = 0;
  const started = Date.now();
  const view = await engine.prepare({
    ...overBudget,
    format: 'openai',
    summarize: () => { asked += 1; return new Promise(() => {}); },
    summarize_timeout_ms: 50,
  });
  const waited = Date.now() - started;
  assert.equal(asked, 1);
  assert.ok(waited >= 45 && waited < 5_000, `waited ${waited} ms for a 50 ms timeout`);
  assert.equal(view.summary.method, 'extractive');
  assert.equal(view.summary.fallback_reason, 'summarize did not settle within 50 ms (options.summarize_timeout_ms)');
  assert.equal(engine.latestCheckpoint.method, 'extractive');
  assert.ok(view.stats.fits);
  assert.deepEqual(ck.validate(view, 'openai'), []);
  // An answer inside the deadline is used, and its timer does not keep the process waiting:
  // node --test would otherwise report this file only after the 120 s default.
  const quick = await sliceEngine().prepare({ ...overBudget, summarize: async () => '## Goal\nquick' });
  assert.equal(quick.summary.method, 'llm');
  assert.equal(quick.summary.fallback_reason, null);
});

test('summarize_timeout_ms must be a whole number of milliseconds a JS timer can hold', async () => {
  for (const bad of [0, -1, 1.5, 2_147_483_648, 'soon', true]) {
    const engine = sliceEngine();
    await assert.rejects(
      engine.prepare({ ...overBudget, summarize: async () => 'x', summarize_timeout_ms: bad }),
      (error) => error instanceof Error && /^Engine\.prepare: options\.summarize_timeout_ms: /.test(error.message),
      String(bad),
    );
    assert.equal(engine.latestCheckpoint, null, 'a refused prepare leaves the engine as it was');
  }
  const view = await sliceEngine().prepare({ ...overBudget, summarize: async () => '## Goal\nok', summarize_timeout_ms: null });
  assert.equal(view.summary.method, 'llm');
});

test('a summary with a lone surrogate is refused, not stored with U+FFFD', async () => {
  for (const [answer, at] of [['## Goal\nfix \uD800 now', 12], ['## Goal\n\uDC00', 8], ['## Goal\nend \uD83D', 12]]) {
    const engine = sliceEngine();
    const view = await engine.prepare({ ...overBudget, summarize: async () => answer });
    assert.equal(view.summary.method, 'extractive');
    assert.equal(
      view.summary.fallback_reason,
      `summarize returned a string with a lone surrogate (not valid Unicode) at UTF-16 index ${at}`,
    );
    assert.ok(!engine.latestCheckpoint.summary.includes('\uFFFD'));
  }
  // A surrogate pair (an emoji) is valid Unicode and is kept as written.
  const engine = sliceEngine();
  const view = await engine.prepare({ ...overBudget, summarize: async () => '## Goal\nship it \uD83D\uDE80' });
  assert.equal(view.summary.method, 'llm');
  assert.ok(engine.latestCheckpoint.summary.includes("## The summarizer's own account of the goal (not the user's words)\nship it 🚀"));
});

test('two overlapping prepares: the second finds the checkpoint already made', async () => {
  const engine = sliceEngine();
  let release;
  const gate = new Promise((resolve) => { release = resolve; });
  const slow = engine.prepare({ ...overBudget, summarize: async () => { await gate; return '## Goal\nslow'; } });
  const fast = await engine.prepare({ ...overBudget, summarize: async () => '## Goal\nfast' });
  release();
  const late = await slow;
  assert.equal(fast.summary.method, 'llm');
  assert.equal(late.summary, null, 'a stale request is dropped');
  assert.match(late.summary_dropped, /^the summarizer's answer arrived after another turn of this session/, 'and says so');
  assert.equal(fast.summary_dropped, undefined);
  assert.equal(engine.toJSON().checkpoints.length, 1);
  assert.match(engine.latestCheckpoint.summary, /^## Goal\n- Work on bead spotter-dov\./);
  assert.match(engine.latestCheckpoint.summary, /\n## The summarizer's own account of the goal \(not the user's words\)\nfast\n/);
});

test('views share unchanged messages (frozen), and a cached view equals a fresh one', () => {
  const engine = sliceEngine();
  const settings = { system: SYSTEM, budget: budget(200_000), policy: { nudges: QUIET } };
  for (const format of ['openai', 'ctxkit', 'anthropic', 'openai']) {
    const first = engine.view({ ...settings, format });
    engine.append([{ role: 'user', content: `one more (${format})` }]);
    const state = JSON.stringify(engine);
    const second = engine.view({ ...settings, format });
    const fresh = ck.Engine.fromJSON(state).view({ ...settings, format });
    assert.deepEqual(second, fresh, format);
    if (format === 'anthropic') {
      assert.notEqual(second.messages[0], first.messages[0], 'the Anthropic shape is rendered whole');
      continue;
    }
    assert.equal(second.messages[1], first.messages[1], `${format}: the same object`);
    assert.ok(Object.isFrozen(second.messages[1]));
    assert.throws(() => { second.messages[1].role = 'system'; }, TypeError);
    const call = second.messages.find((m) => m.tool_calls);
    assert.throws(() => { call.tool_calls[0].id = 'x'; }, TypeError, 'frozen all the way down');
    second.messages.push({ role: 'user', content: 'the array is the caller\'s' });
  }
  assert.deepEqual(engine.view(settings).messages.at(-1), { role: 'user', content: 'one more (openai)' });
});

test('the state exports to JSON and imports back into an equal engine', async () => {
  const engine = sliceEngine();
  await engine.prepare({ ...overBudget, summarize: async () => '## Goal\nkept' });
  engine.append([{ role: 'user', content: 'and now?' }]);
  const text = JSON.stringify(engine);
  for (const restored of [ck.Engine.fromJSON(text), ck.Engine.fromJSON(JSON.parse(text))]) {
    assert.equal(JSON.stringify(restored), text);
    assert.equal(restored.family, 'claude');
    assert.deepEqual(restored.view(overBudget), engine.view(overBudget));
  }
});

test('recordUsage calibrates later views with the real count', () => {
  const engine = new ck.Engine();
  engine.append([{ role: 'user', content: 'hello there' }]);
  const first = engine.view();
  assert.equal(first.stats.calibrated_tokens, null);
  engine.recordUsage(first.stats, first.stats.total_tokens + 100);
  engine.append([{ role: 'assistant', content: 'hi' }]);
  const second = engine.view();
  assert.equal(second.stats.calibrated_tokens, second.stats.total_tokens + 100);
  assert.deepEqual(engine.toJSON().usage_anchor, {
    checkpoint_through: null, last_seq: 1, input_tokens: first.stats.total_tokens + 100,
    estimated_tokens: first.stats.total_tokens,
  });
});

test('nudges go into views, never into the log', () => {
  const engine = new ck.Engine();
  const policy = { nudges: { memory_every_turns: 2, stall_after_turns: 0 } };
  engine.append([{ role: 'user', content: 'go' }]);
  assert.deepEqual(engine.view({ policy }).stats.nudges, []);
  const second = engine.view({ policy });
  assert.deepEqual(second.stats.nudges, ['memory']);
  assert.match(second.messages.at(-1).content, /long-term memory/);
  assert.equal(engine.length, 1);

  const outcome = ck.advanceNudges({ state: { turn: 1 }, log: [{ role: 'user', content: 'go' }], policy: policy.nudges });
  assert.deepEqual(outcome.kinds, ['memory']);
  assert.deepEqual(outcome.next, { turn: 2, last_seq: 1, turns_without_progress: 0 });
});

test('offload, precis, system prompt, estimates and defaults', () => {
  const engine = new ck.Engine();
  engine.append([
    { role: 'user', content: 'run the tests' },
    { role: 'assistant', content: '', tool_calls: [{ id: '../c1', name: 'bash', arguments: '{"cmd":"make test"}' }] },
  ]);
  const output = { role: 'tool', tool_call_id: '../c1', content: 'ok line\n'.repeat(3_000) };
  const plan = ck.planOffload({ seq: engine.nextSeq, session: 's1', result: output, tool_name: 'bash' });
  assert.equal(plan.relative_path, `.ctxkit/tool_results/s1/${plan.file_name}`);
  assert.match(plan.file_name, /^0000000003-/);
  assert.equal(plan.content, output.content);
  assert.equal(plan.reference.tool_call_id, '../c1');
  engine.append([plan.reference]);
  assert.equal(engine.view().stats.offload_references, 1);
  assert.equal(ck.planOffload({ seq: 9, session: 's1', result: { role: 'tool', tool_call_id: 'c', content: 'small' } }), null);

  const precis = ck.renderPrecis([
    { id: 'm1', title: 'Use pnpm', content: 'The user wants pnpm, not npm.', category: 'preference', importance: 5, source: 'user' },
  ]);
  assert.equal(precis, '- **Use pnpm** [preference] (from the user): The user wants pnpm, not npm.');
  const prompt = ck.buildSystemPrompt({
    base: 'You are a test agent.', working_directory: '/work/app', date: '2026-02-28',
    skills: [{ name: 'pdf', description: 'Read PDF files.' }], memory_precis: precis,
  });
  assert.match(prompt, /^You are a test agent\.\n\nWorking directory: \/work\/app\nCurrent date: 2026-02-28\n\n## Available Skills\n- pdf: Read PDF files\.\n\n## Long-Term Memory\n/);

  const text = 'The quick brown fox jumps over the lazy dog.';
  assert.ok(ck.estimateTokens(text) > 5);
  assert.ok(ck.estimateTokens(text, 'claude-4.7') >= ck.estimateTokens(text, 'claude'));
  const messages = [{ role: 'user', content: text }, { role: 'assistant', content: 'ok' }];
  assert.equal(ck.estimateTokens(messages), ck.estimateTokens(messages[0]) + ck.estimateTokens(messages[1]));

  const summary = ck.extractiveSummary([{ role: 'user', content: 'Fix src/parser.rs' }], { limits: { max_bytes: 400 } });
  assert.match(summary, /^## Goal\n- Fix src\/parser\.rs/);
  assert.ok(new TextEncoder().encode(summary).length <= 400);

  const defaults = ck.defaults();
  assert.equal(defaults.budget.context_window, 200_000);
  assert.equal(defaults.policy.keep_last_messages, 6);
  assert.deepEqual(defaults.policy.strategy, { kind: 'summarize' });
  assert.equal(defaults.offload.threshold_bytes, 10_000);
  assert.deepEqual(defaults.precis, { max_entries: 30, max_bytes: 5120 });
});

test('a view counts the provider-bound state its format cannot carry (dropped_state)', () => {
  const engine = new ck.Engine();
  engine.append([
    { role: 'user', content: 'What is 2 + 2?' },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'Simple sum.', signature: 'EqQBCkgIARABGAIiQL4' },
        { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix' },
        { type: 'text', text: '4' },
      ],
    },
    { role: 'user', content: 'Thanks.' },
  ], 'anthropic');
  const counts = Object.fromEntries(['ctxkit', 'anthropic', 'openai', 'responses', 'gemini', 'ai-sdk', 'langchain']
    .map((format) => [format, engine.view({ format }).dropped_state]));
  // Anthropic keeps both; the AI SDK and LangChain carry the signed thinking but not the
  // redacted block; the others can send neither.
  assert.deepEqual(counts, { ctxkit: 0, anthropic: 0, openai: 2, responses: 2, gemini: 2, 'ai-sdk': 1, langchain: 1 });
  // The cached path of the Engine (ctxkit and OpenAI shapes) counts the same on a later view.
  assert.equal(engine.view({ format: 'openai' }).dropped_state, 2);
  const plan = ck.planTurn({ log: engine.toJSON().entries.map((entry) => entry.message), format: 'gemini' });
  assert.equal(plan.view.dropped_state, 2);
});

test('cache_expired makes a view compact from the lower cold trigger, and cold_trigger_percent: null ignores it', () => {
  const firstCompaction = (options) => {
    const engine = new ck.Engine();
    for (let i = 0; i < 300; i += 1) {
      engine.append([
        { role: 'user', content: `step ${i}: look at src/file${i}.rs` },
        { role: 'assistant', content: `fn main() {}\n`.repeat(20) },
      ]);
      const view = engine.view({ budget: { context_window: 12_000 }, ...options });
      if (view.summary) return i;
    }
    throw new Error('no compaction in 300 turns');
  };
  const warm = firstCompaction({});
  const cold = firstCompaction({ cache_expired: true });
  assert.ok(cold < warm, `cold ${cold}, warm ${warm}`);
  assert.equal(firstCompaction({ cache_expired: true, policy: { cold_trigger_percent: null } }), warm);
  assert.equal(ck.defaults().policy.cold_trigger_percent, 25);
});

test('append refuses a batch over the input cap, the same rule as the CLI and Python, and appends nothing', () => {
  const engine = new ck.Engine({ maxInputBytes: 10 });
  assert.deepEqual(engine.append([{ role: 'user', content: 'abcd' }, { role: 'user', content: 'efgh' }]), [1, 2]);
  assert.throws(
    () => engine.append([{ role: 'user', content: 'x'.repeat(11) }]),
    (error) => /11 bytes is over the input cap of 10 bytes/.test(error.message) && /maxInputBytes/.test(error.message),
  );
  assert.equal(engine.length, 2, 'nothing of the refused batch was appended');
  // The default is the CLI's 256 MiB: an ordinary batch goes in.
  assert.deepEqual(new ck.Engine().append([{ role: 'user', content: 'x'.repeat(100_000) }]), [1]);
  assert.throws(() => new ck.Engine({ maxInputBytes: -1 }), /maxInputBytes|options/);
});
