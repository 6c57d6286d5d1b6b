// ctxkit/ai-sdk with the real AI SDK: a tool loop of 36 steps through generateText on a
// MockLanguageModelV3 wrapped by ctxkitMiddleware, on a 12k window. The loop compacts (with a
// summarize model), offloads the big outputs, records the SDK's usage, and every prompt the
// model sees is valid (tool calls and results paired, in order) and within the budget.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { generateText, jsonSchema, stepCountIs, tool, wrapLanguageModel } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';

import { Engine, toOpenAI, validate } from 'ctxkit';
import { ctxkitMiddleware, ctxkitPrepareStep, historyTools } from 'ctxkit/ai-sdk';

const STEPS = 36;
const usage = (input) => ({
  inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 20, text: 20, reasoning: 0 },
});

/** A model that calls fetch_page on every step until STEPS, then answers. */
export function agentModel(prompts) {
  return new MockLanguageModelV3({
    doGenerate: async (options) => {
      prompts.push(options.prompt);
      const step = prompts.length;
      const input = Math.round(JSON.stringify(options.prompt).length / 4);
      if (step >= STEPS) {
        return { content: [{ type: 'text', text: 'Done: the report is written.' }], finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(input), warnings: [] };
      }
      return {
        content: [
          { type: 'text', text: `Step ${step}: fetching page ${step}.` },
          { type: 'tool-call', toolCallId: `call_${step}`, toolName: 'fetch_page', input: JSON.stringify({ page: step }) },
        ],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage: usage(input),
        warnings: [],
      };
    },
  });
}

export const tools = {
  fetch_page: tool({
    description: 'Fetch a page of the report data',
    inputSchema: jsonSchema({ type: 'object', properties: { page: { type: 'number' } }, required: ['page'] }),
    // Every third page is big (offloaded); the others add up until the log must be compacted.
    execute: async ({ page }) => (page % 3 === 0
      ? Array.from({ length: 400 }, (_, i) => `page ${page} row ${i}: value ${i * page}`).join('\n')
      : `page ${page}: ${'some findings about the data. '.repeat(30)}`),
  }),
};

export function summarizeModel(calls) {
  return new MockLanguageModelV3({
    doGenerate: async (options) => {
      calls.push(options.prompt);
      return { content: [{ type: 'text', text: '<summary>## Goal\nWrite the report from the pages.\n## Progress\nFetched the first pages.</summary>' }], finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(100), warnings: [] };
    },
  });
}

/** The prompt as ctxkit messages, checked by the core's OpenAI and Anthropic validators. */
function assertValid(prompt, step) {
  const engine = new Engine();
  engine.append(prompt.filter((message) => message.role !== 'system'), 'ai-sdk');
  const messages = engine.toJSON().entries.map((entry) => entry.message);
  assert.equal(prompt[0].role, 'system');
  assert.equal(messages[0].role, 'user', `step ${step}: a user message first`);
  const violations = validate(toOpenAI(messages), 'openai');
  assert.deepEqual(violations, [], `step ${step}`);
}

test('AI SDK middleware: a 36-step tool loop compacts, offloads, records usage and stays valid', async () => {
  const prompts = [];
  const summaries = [];
  const middleware = ctxkitMiddleware({ budget: { context_window: 12_000 }, summarizeModel: summarizeModel(summaries) });
  const stats = [];
  const model = wrapLanguageModel({ model: agentModel(prompts), middleware });
  const result = await generateText({
    model,
    tools: { ...tools, ...historyTools(middleware) },
    stopWhen: stepCountIs(STEPS + 2),
    system: 'You write reports from data pages.',
    prompt: 'Write the report: fetch every page first.',
    onStepFinish: () => stats.push(middleware.lastView.stats),
  });
  assert.equal(result.steps.length, STEPS);
  assert.equal(result.text, 'Done: the report is written.');
  assert.equal(prompts.length, STEPS);
  prompts.forEach(assertValid);
  for (const [i, s] of stats.entries()) assert.ok(s.fits, `step ${i + 1}: ${s.total_tokens} > ${s.budget_tokens}`);
  // Compacted, by the summarize model.
  assert.ok(summaries.length >= 1, 'the summarize model was asked');
  assert.equal(middleware.engine.latestCheckpoint.method, 'llm');
  assert.ok(stats.some((s) => s.tier === 'summarized'));
  const last = JSON.stringify(prompts.at(-1));
  assert.ok(last.includes('Write the report from the pages.'), 'the last prompt starts from the summary');
  assert.ok(!last.includes('page 1: some findings'), 'the oldest pages are summarized away');
  // Offloaded: the big pages are references in the log and the prompts, and the files hold them.
  assert.ok(prompts.some((p) => JSON.stringify(p).includes('[ctxkit: tool output offloaded]')));
  assert.ok(!prompts.some((p) => JSON.stringify(p).includes('page 3 row 200:')), 'no prompt carries a big page whole (only its head and tail)');
  assert.ok(middleware.engine.toJSON().entries.some((e) => JSON.stringify(e.message).includes('read_offload')));
  // The SDK's usage calibrates later estimates.
  assert.ok(stats.slice(1).some((s) => s.calibrated_tokens !== null));
  // The nudges follow the agent's tools: no file or memory tool, no nudge.
  assert.ok(stats.every((s) => s.nudges.length === 0));
});

test('AI SDK prepareStep: the same loop through generateText({ prepareStep })', async () => {
  const prompts = [];
  const prepareStep = ctxkitPrepareStep({ budget: { context_window: 12_000 } });
  const result = await generateText({
    model: agentModel(prompts),
    tools,
    stopWhen: stepCountIs(STEPS + 2),
    system: 'You write reports from data pages.',
    prompt: 'Write the report: fetch every page first.',
    prepareStep,
    onStepFinish: (step) => prepareStep.recordUsage(step.usage),
  });
  assert.equal(result.steps.length, STEPS);
  prompts.forEach(assertValid);
  assert.equal(prepareStep.engine.latestCheckpoint.method, 'extractive');
  assert.ok(prompts.some((p) => JSON.stringify(p).includes('[ctxkit: tool output offloaded]')));
  assert.ok(prepareStep.lastView.stats.fits);
  assert.throws(() => ctxkitMiddleware({ window: 8000 }), /^Error: ctxkit\/ai-sdk: options\.window: unknown option/);
});

test('AI SDK middleware with streamText: the view is sent and the finish part\'s usage recorded', async () => {
  const { streamText, simulateReadableStream } = await import('ai');
  const prompts = [];
  const model = new MockLanguageModelV3({
    doStream: async (options) => {
      prompts.push(options.prompt);
      return {
        stream: simulateReadableStream({
          chunks: [
            { type: 'text-start', id: 't' },
            { type: 'text-delta', id: 't', delta: 'Hello' },
            { type: 'text-end', id: 't' },
            { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(1_234) },
          ],
        }),
      };
    },
  });
  const middleware = ctxkitMiddleware({ budget: { context_window: 12_000 } });
  const result = streamText({ model: wrapLanguageModel({ model, middleware }), system: 'Be brief.', prompt: 'Hi' });
  assert.equal(await result.text, 'Hello');
  assert.equal(prompts.length, 1);
  assert.deepEqual(prompts[0].map((m) => m.role), ['system', 'user']);
  // The usage anchor calibrates the next view.
  const next = middleware.engine.view({ budget: { context_window: 12_000 } });
  assert.notEqual(next.stats.calibrated_tokens, null);
});
