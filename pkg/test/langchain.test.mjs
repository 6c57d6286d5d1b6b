// ctxkit/langchain with the real LangChain v1: createAgent with ctxkitMiddleware and a scripted
// subclass of @langchain/core's FakeStreamingChatModel in a tool loop of 36 model calls on a
// 12k window. The loop compacts, offloads the big outputs, records the model's usage, and every
// prompt the model sees is valid and within the budget, while the agent's state keeps every
// message.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { createAgent, tool } from 'langchain';
import { AIMessage } from '@langchain/core/messages';
import { FakeStreamingChatModel } from '@langchain/core/utils/testing';

import { Engine, toOpenAI, validate } from 'ctxkit';
import { ctxkitMiddleware, historyTools } from 'ctxkit/langchain';

const STEPS = 36;

/** LangChain's fake chat model, scripted: a fetch_page call on each call until STEPS. */
class ScriptedModel extends FakeStreamingChatModel {
  constructor(seen) {
    super({});
    this.seen = seen;
  }
  bindTools(tools) {
    this.boundTools = tools;
    return this;
  }
  async _generate(messages) {
    this.seen.push(messages);
    const step = this.seen.length;
    const usage_metadata = { input_tokens: Math.round(JSON.stringify(messages).length / 4), output_tokens: 20, total_tokens: 0 };
    const message = step >= STEPS
      ? new AIMessage({ content: 'Done: the report is written.', usage_metadata })
      : new AIMessage({
          content: `Step ${step}: fetching page ${step}.`,
          tool_calls: [{ id: `call_${step}`, name: 'fetch_page', args: { page: step }, type: 'tool_call' }],
          usage_metadata,
        });
    return { generations: [{ text: '', message }] };
  }
}

const fetchPage = tool(
  async ({ page }) => (page % 3 === 0
    ? Array.from({ length: 400 }, (_, i) => `page ${page} row ${i}: value ${i * page}`).join('\n')
    : `page ${page}: ${'some findings about the data. '.repeat(30)}`),
  {
    name: 'fetch_page',
    description: 'Fetch a page of the report data',
    schema: { type: 'object', properties: { page: { type: 'number' } }, required: ['page'] },
  },
);

test('LangChain middleware: a 36-call agent loop compacts, offloads, records usage and stays valid', async () => {
  const seen = [];
  const summaries = [];
  const summarizer = new (class extends FakeStreamingChatModel {
    async _generate(messages) {
      summaries.push(messages);
      return { generations: [{ text: '', message: new AIMessage('<summary>## Goal\nWrite the report from the pages.\n## Progress\nFetched the first pages.</summary>') }] };
    }
  })({});
  const middleware = ctxkitMiddleware({ budget: { context_window: 12_000 }, summarizeModel: summarizer });
  const stats = [];
  const agent = createAgent({
    model: new ScriptedModel(seen),
    tools: [fetchPage, ...historyTools(middleware, tool)],
    systemPrompt: 'You write reports from data pages.',
    middleware: [middleware, { name: 'stats', afterModel: () => { stats.push(middleware.lastView.stats); } }],
  });
  const result = await agent.invoke(
    { messages: [{ role: 'user', content: 'Write the report: fetch every page first.' }] },
    { recursionLimit: 200 },
  );
  assert.equal(seen.length, STEPS);
  assert.equal(result.messages.at(-1).content, 'Done: the report is written.');
  assert.equal(result.messages.length, 1 + 2 * (STEPS - 1) + 1, 'the agent state keeps every message');
  for (const [i, messages] of seen.entries()) {
    const engine = new Engine();
    engine.append(messages.filter((m) => m.type !== 'system').map((m) => m.toDict()), 'langchain');
    const log = engine.toJSON().entries.map((entry) => entry.message);
    assert.equal(log[0].role, 'user', `call ${i + 1}: a user message first`);
    assert.deepEqual(validate(toOpenAI(log), 'openai'), [], `call ${i + 1}`);
    assert.equal(messages[0].type, 'system');
  }
  assert.ok(stats.every((s) => s.fits));
  assert.ok(summaries.length >= 1, 'the summarize model was asked');
  assert.equal(middleware.engine.latestCheckpoint.method, 'llm');
  const lastPrompt = JSON.stringify(seen.at(-1).map((m) => m.content));
  assert.ok(lastPrompt.includes('Write the report from the pages.'));
  assert.ok(!lastPrompt.includes('page 1: some findings'));
  assert.ok(seen.some((messages) => messages.some((m) => String(m.content).includes('[ctxkit: tool output offloaded]'))));
  assert.ok(!seen.some((messages) => messages.some((m) => String(m.content).includes('page 3 row 200:'))));
  assert.ok(stats.slice(1).some((s) => s.calibrated_tokens !== null));
  assert.ok(stats.every((s) => s.nudges.length === 0), 'no file or memory tool: no nudge');
  assert.throws(() => ctxkitMiddleware({ window: 1 }), /^Error: ctxkit\/langchain: options\.window: unknown option/);
  assert.throws(() => ctxkitMiddleware({ historyTools: 'yes' }), /^Error: ctxkit\/langchain: options\.historyTools must be true or false, got "yes"/);
});
