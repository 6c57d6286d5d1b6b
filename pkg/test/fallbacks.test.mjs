// Every fallback of a prepare is in its stats (stats.fallbacks: the call, the kind, the reason),
// and the summarizer's circuit breaker: after two timeouts in a row the next compactions go
// straight to the extractive summary without waiting for it, said in the stats, then it is
// asked again. The adapters pass each fallback on as an event. Runs in about a second: the
// hanging summarizers time out after 20 ms.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { generateText, jsonSchema, stepCountIs, tool as aiTool, wrapLanguageModel } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { createAgent, tool } from 'langchain';
import { AIMessage } from '@langchain/core/messages';
import { FakeStreamingChatModel } from '@langchain/core/utils/testing';

import * as ck from 'ctxkit';
import { ctxkitMiddleware as aiSdkMiddleware, historyTools } from 'ctxkit/ai-sdk';
import { ctxkitMiddleware as langchainMiddleware } from 'ctxkit/langchain';
import { budget, pipelineLog, QUIET, SYSTEM } from './helpers.mjs';

const overBudget = { system: SYSTEM, budget: budget(9_000), policy: { nudges: QUIET, max_summary_tokens: 2_000 } };
const hang = () => new Promise(() => {});

function sliceEngine() {
  const engine = new ck.Engine({ family: 'claude' });
  engine.append(pipelineLog());
  return engine;
}

/** An AI SDK model that calls fetch_page on every step until the 36th. */
function agentModel() {
  let step = 0;
  const usage = { inputTokens: { total: 1000, noCache: 1000, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 20, text: 20, reasoning: 0 } };
  return new MockLanguageModelV3({
    doGenerate: async () => {
      step += 1;
      if (step >= 36) return { content: [{ type: 'text', text: 'Done.' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
      return {
        content: [{ type: 'tool-call', toolCallId: `call_${step}`, toolName: 'fetch_page', input: JSON.stringify({ page: step }) }],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage,
        warnings: [],
      };
    },
  });
}

const tools = {
  fetch_page: aiTool({
    description: 'Fetch a page of the report data',
    inputSchema: jsonSchema({ type: 'object', properties: { page: { type: 'number' } }, required: ['page'] }),
    execute: async ({ page }) => `page ${page}: ${'some findings about the data. '.repeat(100)}`,
  }),
};

test('each way a summary or an extraction falls back is in the stats, with its reason', async () => {
  const cases = [
    [async () => { throw new Error('rate limited'); }, 'error', 'summarize rejected: rate limited'],
    [hang, 'timeout', 'summarize did not settle within 20 ms (options.summarize_timeout_ms)'],
    [async () => 42, 'error', 'summarize returned a number, not a string'],
    [async () => '   ', 'unusable', 'summary: the summarizer returned an empty summary'],
    [async () => '<analysis>x</analysis>\n## Goal\nquoted </analysis> markup', 'unusable', /^summary: the answer has no element with the request's tag/],
  ];
  for (const [summarize, kind, reason] of cases) {
    const view = await sliceEngine().prepare({ ...overBudget, summarize, summarize_timeout_ms: 20 });
    assert.equal(view.stats.fallbacks.length, 1, String(reason));
    const [fallback] = view.stats.fallbacks;
    assert.equal(fallback.call, 'summary');
    assert.equal(fallback.kind, kind);
    if (typeof reason === 'string') assert.equal(fallback.reason, reason);
    else assert.match(fallback.reason, reason);
    assert.equal(view.summary.fallback_reason, fallback.reason, 'the summary says the same');
    assert.equal(view.summary.method, 'extractive');
  }
  // An extraction that fails: the summary goes on, the extraction's fallback is listed.
  const view = await sliceEngine().prepare({
    ...overBudget,
    summarize: async () => '## Goal\nfine',
    extract: async () => { throw new Error('extractor down'); },
  });
  assert.deepEqual(view.stats.fallbacks, [{ call: 'extraction', kind: 'error', reason: 'extract rejected: extractor down' }]);
  assert.equal(view.summary.method, 'llm');
  assert.equal(view.extraction.failure_reason, 'extract rejected: extractor down');
  // A turn whose calls were answered, and a turn without a summarizer, list none.
  const fine = await sliceEngine().prepare({ ...overBudget, summarize: async () => '## Goal\nfine' });
  assert.equal(fine.stats.fallbacks, undefined);
  assert.equal(sliceEngine().view(overBudget).stats.fallbacks, undefined);
});

/** An engine that compacts on every `turn()`: a long exchange appended, then a prepare. */
function compactingSession() {
  let n = 0;
  const session = {
    engine: new ck.Engine(),
    async turn(options) {
      const batch = [];
      for (let i = 0; i < 30; i += 1, n += 1) {
        batch.push({ role: 'user', content: `Question ${n}: ${'what about the river district? '.repeat(12)}` });
        batch.push({ role: 'assistant', content: `Answer ${n}: ${'the river district is lively at night. '.repeat(12)}` });
      }
      session.engine.append(batch);
      return session.engine.prepare({ budget: { context_window: 8_000 }, policy: { nudges: QUIET }, summarize_timeout_ms: 20, ...options });
    },
  };
  return session;
}

test('circuit breaker: two timeouts in a row, then three compactions skip the summarizer, then it is asked again', async () => {
  const session = compactingSession();
  let asked = 0;
  const hanging = () => { asked += 1; return hang(); };
  const kinds = [];
  for (let i = 0; i < 5; i += 1) {
    const view = await session.turn({ summarize: hanging });
    assert.ok(view.summary, `turn ${i + 1} compacted`);
    assert.equal(view.summary.method, 'extractive');
    kinds.push(view.stats.fallbacks.map((f) => f.kind).join());
    if (i === 1) assert.match(view.stats.fallbacks[0].reason, /failed 2 times in a row: the next 3 compactions use the extractive summary without asking it/);
    if (i === 2) {
      assert.match(view.stats.fallbacks[0].reason, /^not asked: the summarizer failed 2 times in a row/);
      assert.equal(view.summary.fallback_reason, view.stats.fallbacks[0].reason);
    }
  }
  assert.deepEqual(kinds, ['timeout', 'timeout', 'skipped', 'skipped', 'skipped']);
  assert.equal(asked, 2, 'the skipped compactions did not call summarize');
  assert.deepEqual(session.engine.toJSON().summarizer_breaker, { consecutive_failures: 2, skip_compactions: 0 });
  // The probe after the skipped compactions times out again: the breaker opens for twice as
  // many compactions.
  const probe = await session.turn({ summarize: hanging });
  assert.equal(asked, 3, 'asked again after the skipped compactions');
  assert.match(probe.stats.fallbacks[0].reason, /failed 3 times in a row: the next 6 compactions use the extractive summary/);
  // A view never asks, so it neither skips nor counts down.
  session.engine.append([{ role: 'user', content: 'x '.repeat(3000) }]);
  const viewed = session.engine.view({ budget: { context_window: 8_000 }, policy: { nudges: QUIET } });
  assert.equal(viewed.stats.fallbacks, undefined);
  assert.equal(session.engine.toJSON().summarizer_breaker.skip_compactions, 6);
  // An answering summarizer, once asked, closes the breaker.
  for (let i = 0; i < 6; i += 1) {
    const skipped = await session.turn({ summarize: async () => '## Goal\nnever asked' });
    assert.equal(skipped.stats.fallbacks[0].kind, 'skipped');
  }
  const answered = await session.turn({ summarize: async () => '## Goal\nback again' });
  assert.equal(answered.summary.method, 'llm');
  assert.equal(answered.stats.fallbacks, undefined);
  assert.equal(session.engine.toJSON().summarizer_breaker, undefined, 'closed and clear: not in the state');
});

test('circuit breaker: restored from toJSON state; a failure that is not a timeout counts too', async () => {
  const session = compactingSession();
  await session.turn({ summarize: hang });
  const state = session.engine.toJSON();
  assert.deepEqual(state.summarizer_breaker, { consecutive_failures: 1, skip_compactions: 0 });
  // A state written when only timeouts counted reads as the same count.
  const old = ck.Engine.fromJSON({ ...state, summarizer_breaker: { consecutive_timeouts: 1, skip_compactions: 0 } });
  assert.deepEqual(old.toJSON().summarizer_breaker, { consecutive_failures: 1, skip_compactions: 0 });
  session.engine = ck.Engine.fromJSON(state);
  // An error (a 429, a 5xx: not a timeout) is a failure too: two in a row open the breaker.
  const failed = await session.turn({ summarize: async () => { throw new Error('HTTP 429'); } });
  assert.equal(failed.stats.fallbacks[0].kind, 'error');
  assert.match(failed.stats.fallbacks[0].reason, /failed 2 times in a row/);
  assert.deepEqual(session.engine.toJSON().summarizer_breaker, { consecutive_failures: 2, skip_compactions: 3 });
  const skipped = await session.turn({ summarize: hang });
  assert.equal(skipped.stats.fallbacks[0].kind, 'skipped');
  assert.throws(() => ck.Engine.fromJSON({ ...session.engine.toJSON(), summarizer_breaker: { skip: 1 } }),
    /^Error: Engine\.fromJSON: state\.summarizer_breaker\.skip: unknown field/);
});

test('AI SDK middleware: each fallback is an event, the breaker\'s skips too', async () => {
  const events = [];
  let asked = 0;
  const middleware = aiSdkMiddleware({
    budget: { context_window: 8_000 },
    summarize: () => { asked += 1; return hang(); },
    summarize_timeout_ms: 20,
    onEvent: (event) => { if (event.type === 'fallback') events.push(event); },
  });
  await generateText({
    model: wrapLanguageModel({ model: agentModel(), middleware }),
    tools: { ...tools, ...historyTools(middleware) },
    stopWhen: stepCountIs(40),
    prompt: 'Write the report: fetch every page first.',
    providerOptions: { ctxkit: { conversationId: 'report-1' } },
  });
  assert.ok(events.length >= 3, `${events.length} fallbacks`);
  assert.deepEqual(events.slice(0, 3).map((e) => e.kind), ['timeout', 'timeout', 'skipped']);
  assert.equal(asked, events.filter((e) => e.kind === 'timeout').length, 'summarize was called only for the timeouts');
  for (const event of events) {
    assert.equal(event.conversationId, 'report-1');
    assert.equal(event.call, 'summary');
    assert.equal(typeof event.reason, 'string');
  }
});

test('LangChain middleware: each fallback is an event, the breaker\'s skips too', async () => {
  const events = [];
  let asked = 0;
  class Hanging extends FakeStreamingChatModel {
    async _generate() {
      asked += 1;
      return hang();
    }
  }
  class Scripted extends FakeStreamingChatModel {
    constructor() {
      super({});
      this.calls = 0;
    }
    bindTools() {
      return this;
    }
    async _generate() {
      this.calls += 1;
      const message = this.calls >= 36
        ? new AIMessage('Done.')
        : new AIMessage({ content: `Step ${this.calls}.`, tool_calls: [{ id: `call_${this.calls}`, name: 'fetch_page', args: { page: this.calls }, type: 'tool_call' }] });
      return { generations: [{ text: '', message }] };
    }
  }
  const fetchPage = tool(async ({ page }) => `page ${page}: ${'some findings about the data. '.repeat(100)}`, {
    name: 'fetch_page',
    description: 'Fetch a page',
    schema: { type: 'object', properties: { page: { type: 'number' } }, required: ['page'] },
  });
  const middleware = langchainMiddleware({
    budget: { context_window: 8_000 },
    summarizeModel: new Hanging({}),
    summarize_timeout_ms: 20,
    onEvent: (event) => { if (event.type === 'fallback') events.push(event); },
  });
  const agent = createAgent({ model: new Scripted(), tools: [fetchPage], middleware: [middleware] });
  await agent.invoke(
    { messages: [{ role: 'user', content: 'Write the report.' }] },
    { recursionLimit: 200, configurable: { thread_id: 'thread-7' } },
  );
  assert.ok(events.length >= 3, `${events.length} fallbacks`);
  assert.deepEqual(events.slice(0, 3).map((e) => e.kind), ['timeout', 'timeout', 'skipped']);
  assert.equal(asked, events.filter((e) => e.kind === 'timeout').length);
  assert.ok(events.every((e) => e.conversationId === 'thread-7' && e.call === 'summary'));
});
