// The conformance suite of the JS adapters (issue 33, item 7): the same list run against the AI
// SDK middleware over AI SDK 5 and AI SDK 6 (the real `ai` packages, both in one run: the `ai5`
// alias is loaded through ./ai-major-hooks.mjs) and the LangChain.js middleware in createAgent,
// each driven by a scripted model that calls tools (./conformance-drivers.mjs). Every request a
// model receives is recorded as it was received, and checked:
// - the module-level server pattern: one adapter, two users interleaved, one after the other and
//   concurrently (Promise.all), by their ids and by content: 0 requests carry the other's secret;
// - a new adapter per request on the framework's own persisted history (the messages array,
//   LangGraph's MemorySaver), and after a restart (the conversation store's or the Engine's JSON
//   state): 0 duplicated messages in any request, and the Engine's log is the history once; an
//   output offloaded before a restart is found again after it (search_history, read_offload);
// - a 60-step tool loop with 30 KB outputs at an 8k and a 200k window: every request valid
//   (tool calls and results paired: the core's validator, for OpenAI and Anthropic), within the
//   window by ctxkit's estimate (messages, system and the tools' schemas, plus the output
//   reserve), naming no tool the agent lacks (in offload references, summaries, the system
//   prompt), and an offloaded output's hidden line found again through the agent's own tools
//   (search_history, then the read_offload call its hit gives, and read_offload on a reference);
// - the tools' schemas counted in the budget (unless the caller counts them);
// - an agent not given the history tools is never told to call one: LangChain's middleware
//   registers them, and an AI SDK call whose agent lacks read_offload is refused before the model.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire, register } from 'node:module';
import { MessageChannel } from 'node:worker_threads';

import * as ai6 from 'ai';
import * as ai6Test from 'ai/test';
import * as langchain from 'langchain';
import * as messages from '@langchain/core/messages';
import * as testing from '@langchain/core/utils/testing';
import { MemorySaver } from '@langchain/langgraph';

import { Engine, memoryOffloadStore, toAnthropic, toOpenAI, validate } from 'ctxkit';
import * as ctxkitAi6 from 'ctxkit/ai-sdk';
import * as ctxkitLangchain from 'ctxkit/langchain';
import { aiSdkDriver, langchainDriver, requestTokens } from './conformance-drivers.mjs';

// ctxkit/ai-sdk a second time, over AI SDK 5: the hook resolves its `ai` to the ai5 alias.
const redirects = [];
const { port1, port2 } = new MessageChannel();
port1.on('message', (message) => redirects.push(message));
port1.unref();
register('./ai-major-hooks.mjs', { parentURL: import.meta.url, data: { port: port2 }, transferList: [port2] });
const ctxkitAi5 = await import(`${import.meta.resolve('ctxkit/ai-sdk')}?ai=5`);
const ai5 = await import('ai5');
const ai5Test = await import('ai5/test');

const drivers = [
  aiSdkDriver({ major: 5, ai: ai5, aiTest: ai5Test, ctxkit: ctxkitAi5 }),
  aiSdkDriver({ major: 6, ai: ai6, aiTest: ai6Test, ctxkit: ctxkitAi6 }),
  langchainDriver({ langchain, messages, testing, ctxkit: ctxkitLangchain, MemorySaver }),
];

const SYSTEM = 'You are the support agent of a small shop. Answer from the records you look up.';
const OFFLOADED = '[ctxkit: tool output offloaded]';
/** Tool names ctxkit may write into what the model sees (references, summaries, prompt parts, nudges). */
const CTXKIT_TOOL_NAMES = ['read_file', 'read_offload', 'search_history', 'read_history', 'write_file', 'edit_file', 'save_memory', 'apply_patch', 'str_replace_editor'];

const lookup = {
  name: 'lookup',
  description: 'Look up a record of the shop',
  parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  execute: ({ q }) => `record for ${q}`,
};

/** The text of a ctxkit message's content. */
function textOf(message) {
  const { content } = message;
  if (typeof content === 'string') return content;
  return (content ?? []).map((part) => part.text ?? part.content ?? '').join('');
}

/**
 * A chat that looks `lookups` records up after each user message, then answers it; decided from
 * the request alone, so any number of conversations can share the model.
 */
const chatScript = (lookups) => (request) => {
  const lastUser = request.messages.findLastIndex((m) => m.role === 'user');
  const question = textOf(request.messages[lastUser]);
  const done = request.messages.slice(lastUser).filter((m) => m.role === 'tool').length;
  if (done < lookups) return { calls: [{ name: 'lookup', args: { q: `${question} #${done + 1}` } }] };
  return { text: `answer to: ${question}` };
};

// --- the module-level server pattern -------------------------------------------------------

const USERS = {
  A: { first: 'I am user A. My secret is A-SECRET-hunter2.', secret: 'A-SECRET-hunter2', marker: 'user A' },
  B: { first: 'I am user B. My secret is B-SECRET-swordfish.', secret: 'B-SECRET-swordfish', marker: 'user B' },
};

/** Three requests of `name` on its `visit` (a first message, two follow-ups), each with two lookups. */
async function converse(agent, name, { keyed, visit }) {
  const user = USERS[name];
  let history = [];
  for (const text of [`${user.first} Visit ${visit}.`, `${user.marker} asks question 2`, `${user.marker} asks question 3`]) {
    history = await agent.run({ id: keyed ? `visit-${visit}-${name}` : undefined, history, text });
  }
}

/** Who each request belongs to; fails on a request that carries the other user's words. */
function assertNoLeak(seen, expected) {
  assert.equal(seen.length, expected, 'every model call was recorded');
  for (const [index, request] of seen.entries()) {
    const text = JSON.stringify(request.messages);
    const owners = Object.entries(USERS).filter(([, user]) => text.includes(user.marker)).map(([name]) => name);
    assert.equal(owners.length, 1, `request ${index + 1} belongs to one user, got ${owners.join(', ') || 'none'}`);
    for (const [name, user] of Object.entries(USERS)) {
      assert.equal(text.includes(user.secret), name === owners[0], `request ${index + 1} (user ${owners[0]}) and ${name}'s secret`);
    }
  }
}

test('AI SDK 5 and 6 in one run: ctxkit/ai-sdk loaded over each major', async () => {
  const require = createRequire(import.meta.url);
  assert.equal(require('ai5/package.json').version.split('.')[0], '5');
  assert.equal(require('ai/package.json').version.split('.')[0], '6');
  assert.notEqual(ctxkitAi5, ctxkitAi6);
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.ok(redirects.some((r) => r.from.endsWith('/dist/ai-sdk.mjs?ai=5') && r.specifier === 'ai' && r.url.includes('/node_modules/ai5/')),
    `ctxkit/ai-sdk?ai=5 imports ai 5: ${JSON.stringify(redirects)}`);
});

for (const driver of drivers) {
  test(`${driver.name}: one module-level adapter serves two users interleaved and concurrent with 0 leaks`, async () => {
    for (const keyed of [true, false]) {
      const seen = [];
      const checkpointer = keyed && driver.checkpointer ? driver.checkpointer() : undefined;
      const middleware = driver.middleware({ budget: { context_window: 32_000, output_reserve: 2_000 } });
      const agent = driver.agent({ middleware, script: chatScript(2), seen, tools: [lookup], system: SYSTEM, checkpointer });
      // Interleaved, one request at a time: A, B, A, B, A, B.
      const histories = { A: [], B: [] };
      for (const turn of [1, 2, 3]) {
        for (const name of ['A', 'B']) {
          const user = USERS[name];
          const text = turn === 1 ? `${user.first} Visit 1.` : `${user.marker} asks question ${turn}`;
          histories[name] = await agent.run({ id: keyed ? `visit-1-${name}` : undefined, history: histories[name], text });
        }
      }
      assertNoLeak(seen, 2 * 3 * 3);
      // Concurrently: both users' requests (and their tool steps) interleave in the adapter.
      seen.length = 0;
      await Promise.all(['A', 'B'].map((name) => converse(agent, name, { keyed, visit: 2 })));
      assertNoLeak(seen, 2 * 3 * 3);
    }
  });
}

// --- a new adapter per request, and a restart ----------------------------------------------

/** 0 duplicated messages: no two messages of a request are the same (every text here is unique). */
function assertNoDuplicates(request, where) {
  const prints = request.messages.map((m) => JSON.stringify([m.role, textOf(m), m.tool_calls ?? null, m.tool_call_id ?? null]));
  const twice = prints.filter((print, index) => prints.indexOf(print) !== index);
  assert.deepEqual(twice, [], `${where}: a message sent twice`);
}

/**
 * How each request's adapter is made: new each time from nothing, from the conversation store's
 * saved JSON (a restart), or on an Engine restored from its saved JSON (a restart, the caller's
 * Engine).
 */
const REBUILDS = {
  'a new adapter per request': () => ({ options: () => ({}), save: () => {} }),
  'a restart from the conversation store\'s JSON': (driver) => {
    let saved = null;
    return {
      options: () => (saved ? { store: driver.ctxkit.memoryConversationStore({ state: JSON.parse(saved) }) } : {}),
      save: (middleware) => { saved = JSON.stringify(middleware.conversations); },
    };
  },
  'a restart on the Engine\'s JSON': () => {
    let saved = null;
    return {
      options: () => ({ engine: saved ? Engine.fromJSON(saved) : new Engine() }),
      save: (middleware) => { saved = JSON.stringify(middleware.engine); },
    };
  },
};

for (const driver of drivers) {
  test(`${driver.name}: a new adapter per request and after a restart, on the framework's persisted history: 0 duplicated messages`, async () => {
    for (const [name, rebuild] of Object.entries(REBUILDS)) {
      const how = rebuild(driver);
      const checkpointer = driver.checkpointer?.();
      const seen = [];
      let history = [];
      for (let turn = 1; turn <= 4; turn += 1) {
        const middleware = driver.middleware({ budget: { context_window: 64_000, output_reserve: 2_000 }, ...how.options() });
        const agent = driver.agent({ middleware, script: chatScript(1), seen, tools: [lookup], system: SYSTEM, checkpointer });
        const before = seen.length;
        history = await agent.run({ id: 'customer-7', history, text: `question ${turn} of customer 7` });
        how.save(middleware);
        for (const [index, request] of seen.slice(before).entries()) assertNoDuplicates(request, `${name}, request ${turn}, call ${index + 1}`);
        // The Engine holds the framework's history once, up to the last model call (its answer
        // is appended by the next request).
        const held = middleware.engine.toJSON().entries.map((entry) => [entry.message.role, textOf(entry.message)]);
        const expected = driver.historyMessages(history.slice(0, -1)).map((m) => [m.role, textOf(m)]);
        assert.deepEqual(held, expected, `${name}, request ${turn}: the Engine's log is the history once`);
      }
      const last = seen.at(-1).messages.filter((m) => m.role === 'user').map(textOf);
      assert.deepEqual(last, [1, 2, 3, 4].map((turn) => `question ${turn} of customer 7`), name);
    }
  });
}

// --- a 60-step tool loop with 30 KB outputs, every request checked --------------------------

const STEPS = 60;
const needle = (n) => `NEEDLE-${n}-kestrel`;

/** Document `n`: 400 lines, about 30 KB; line 201 (hidden from any preview) holds its needle. */
const fetchDoc = {
  name: 'fetch_doc',
  description: 'Fetch a document of the shop by its number',
  parameters: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
  execute: ({ n }) => Array.from({ length: 400 }, (_, i) => (i === 200
    ? `doc ${n} line ${i + 1}: ${needle(n)} is where the refund policy was changed`
    : `doc ${n} line ${i + 1}: ${'order shipped on time, invoice settled, no complaint. '.repeat(1)}`)).join('\n'),
};

/**
 * The rest of the agent's tools, never called in the loop: a real agent's schemas are as long as
 * these (about 2,500 tokens together), and they are sent with every request.
 */
const shopTools = ['issue_refund', 'update_order', 'cancel_order', 'create_ticket', 'send_email', 'apply_coupon'].map((name) => ({
  name,
  description: `${name.replace('_', ' ')}: ${'Use it only when the customer asked for it and the records confirm it; say what was done. '.repeat(12)}`,
  parameters: {
    type: 'object',
    properties: Object.fromEntries(['order_id', 'customer_id', 'reason', 'amount', 'note'].map((field) => [field, { type: 'string', description: `The ${field.replace('_', ' ')} as the records give it.` }])),
    required: ['order_id'],
  },
  execute: () => `${name} done`,
}));

/** What in `request` breaks the rules: unpaired or invalid, over the window, naming an unknown tool. */
function violations(request, { window, reserve }) {
  const found = [];
  for (const [provider, body] of [['openai', toOpenAI(request.messages)], ['anthropic', toAnthropic(request.messages)]]) {
    for (const v of validate(body, provider)) found.push(`${provider}: ${JSON.stringify(v)}`);
  }
  const tokens = requestTokens(request);
  if (tokens + reserve > window) found.push(`${tokens} tokens of request + ${reserve} reserved > the ${window} window`);
  const have = new Set(request.tools.map((t) => t.name));
  if (have.size !== request.tools.length) found.push(`a tool sent twice: ${request.tools.map((t) => t.name).join(', ')}`);
  const text = `${request.system}\n${JSON.stringify(request.messages.map(textOf))}`;
  const named = new Set([...text.matchAll(/call `([^`]+)`/g)].map((m) => m[1]));
  for (const name of CTXKIT_TOOL_NAMES) if (new RegExp(`\\b${name}\\b`).test(text)) named.add(name);
  for (const name of named) if (!have.has(name)) found.push(`names the tool ${name}, which the agent does not have (it has ${[...have].join(', ')})`);
  return found;
}

/**
 * The agent of the loop: fetch_doc at every step until `plan.steps`; at step `plan.search` it
 * searches the history for doc 5's needle and pages to it with the read_offload call the hit
 * gives; at step `plan.page` it pages the newest offload reference it sees to its needle's line.
 * `state` records what came back.
 */
const loopScript = (state, limits, plan) => (request) => {
  state.calls += 1;
  const step = state.calls;
  state.violations.push(...violations(request, limits).map((v) => `step ${step}: ${v}`));
  const last = request.messages.at(-1);
  const answer = last.role === 'tool' ? textOf(last) : '';
  if (state.pending) {
    const { kind, n } = state.pending;
    state.pending = null;
    if (answer.startsWith(OFFLOADED)) state.violations.push(`step ${step}: the ${kind} answer was offloaded again`);
    state.found[kind] = answer.includes(needle(n));
    if (kind === 'search') {
      const call = /read_offload (\{[^\n]*?\})/.exec(answer);
      if (!call) state.violations.push(`step ${step}: the search hit gives no read_offload call: ${answer.slice(0, 300)}`);
      else {
        state.pending = { kind: 'page from the search', n };
        return { calls: [{ name: 'read_offload', args: JSON.parse(call[1]) }] };
      }
    }
  }
  if (step >= plan.steps) return { text: 'All documents read.' };
  if (step === plan.search) {
    state.pending = { kind: 'search', n: 5 };
    return { calls: [{ name: 'search_history', args: { query: needle(5) } }] };
  }
  if (step === plan.page) {
    const reference = request.messages.map(textOf).findLast((text) => text.startsWith(OFFLOADED));
    const path = /\n(\S+\.txt)\n/.exec(reference ?? '')?.[1];
    const n = Number(/doc (\d+) line 1:/.exec(reference ?? '')?.[1]);
    if (!path || reference.includes(needle(n))) state.violations.push(`step ${step}: no reference hiding its needle to page: ${reference?.slice(0, 300)}`);
    else {
      state.pending = { kind: 'page of a reference', n };
      return { calls: [{ name: 'read_offload', args: { path, offset: 195 } }] };
    }
  }
  return { calls: [{ name: 'fetch_doc', args: { n: step } }] };
};

for (const driver of drivers) {
  test(`${driver.name}: the agent's tool schemas are counted in the budget, unless the caller counts them`, async () => {
    const budgetTokens = async (tools, budget) => {
      const middleware = driver.middleware({ budget: { context_window: 32_000, output_reserve: 2_000, ...budget } });
      const agent = driver.agent({ middleware, script: () => ({ text: 'hello' }), seen: [], tools, system: SYSTEM });
      await agent.run({ text: 'hi' });
      return middleware.lastView.stats.budget_tokens;
    };
    const alone = await budgetTokens([lookup]);
    const withShop = await budgetTokens([lookup, ...shopTools]);
    const schemas = requestTokens({ system: '', messages: [], tools: shopTools.map(({ name, description, parameters }) => ({ name, description, parameters })) });
    assert.ok(Math.abs(alone - withShop - schemas) < 100, `six more tools of ${schemas} tokens: the budget ${alone} -> ${withShop}`);
    assert.equal(await budgetTokens([lookup, ...shopTools], { tool_schema_tokens: 0 }), await budgetTokens([], { tool_schema_tokens: 0 }));
  });

  for (const [window, reserve] of [[8_000, 1_000], [200_000, 8_000]]) {
    test(`${driver.name}: a ${STEPS}-step loop of 30 KB outputs at a ${window / 1000}k window: every request valid, within the window, naming only the agent's tools, offloads found again`, async () => {
      const state = { calls: 0, pending: null, found: {}, violations: [] };
      const seen = [];
      const middleware = driver.middleware({ budget: { context_window: window, output_reserve: reserve } });
      const plan = { steps: STEPS, search: 30, page: 45 };
      const script = loopScript(state, { window, reserve }, plan);
      // The model receives ctxkit's view, on every call: the view's messages, and its system
      // prompt (the LangChain view has none: the agent's stays).
      const sameAsView = (request) => {
        const view = middleware.lastView;
        const [first, ...rest] = view.messages;
        const system = first.role === 'system' || first.type === 'system' ? first : null;
        const messages = driver.historyMessages(system ? rest : view.messages).map((m) => [m.role, textOf(m)]);
        if (JSON.stringify(messages) !== JSON.stringify(request.messages.map((m) => [m.role, textOf(m)]))
          || (system ? system.content : SYSTEM) !== request.system) {
          state.violations.push(`step ${state.calls + 1}: the model did not receive the view`);
        }
        return script(request);
      };
      const agent = driver.agent({ middleware, script: sameAsView, seen, tools: [fetchDoc, ...shopTools], system: SYSTEM });
      const history = await agent.run({ id: 'loop', text: 'Read every document of the shop, then say what changed.', maxSteps: STEPS + 5 });
      assert.deepEqual(state.violations, []);
      assert.equal(state.calls, STEPS, 'every step reached the model');
      assert.deepEqual(state.found, { search: true, 'page from the search': true, 'page of a reference': true });
      // ctxkit acted: the framework's history is far over the window, each request was not.
      const full = requestTokens({ system: SYSTEM, messages: driver.historyMessages(history), tools: seen[0].tools });
      assert.ok(full > window, `the whole history (${full} tokens) is over the ${window} window`);
    });
  }
}

// --- an agent given only its own tools -------------------------------------------------------

for (const driver of drivers) {
  test(`${driver.name}: an agent not given the history tools is never told to call one`, async () => {
    const window = 8_000;
    const reserve = 1_000;
    const state = { calls: 0, pending: null, found: {}, violations: [] };
    const seen = [];
    const middleware = driver.middleware({ budget: { context_window: window, output_reserve: reserve } });
    const plan = { steps: 14, search: 8, page: 11 };
    const agent = driver.agent({ middleware, script: loopScript(state, { window, reserve }, plan), seen, tools: [fetchDoc], system: SYSTEM, historyTools: false });
    const run = agent.run({ id: 'own-tools', text: 'Read the documents.', maxSteps: plan.steps + 5 });
    if (driver.registersHistoryTools) {
      // LangChain: the middleware registers them as the agent's tools.
      await run;
      assert.deepEqual(state.violations, []);
      assert.deepEqual(seen[0].tools.map((t) => t.name).sort(), ['fetch_doc', 'read_history', 'read_offload', 'search_history']);
      assert.deepEqual(state.found, { search: true, 'page from the search': true, 'page of a reference': true });
      // Opted out, and not given them: refused before the model is called, saying what to do.
      const bare = driver.agent({ middleware: driver.middleware({ historyTools: false }), script: () => ({ text: 'hi' }), seen, tools: [fetchDoc], system: SYSTEM, historyTools: false });
      const before = seen.length;
      await assert.rejects(bare.run({ text: 'hi' }), /paged with `read_offload`, a tool this agent does not have \(its tools: fetch_doc\).*historyTools/s);
      assert.equal(seen.length, before);
    } else {
      // The AI SDK runs the tools it is given: the call is refused, before the model is called.
      await assert.rejects(run, /paged with `read_offload`, a tool this agent does not have \(its tools: fetch_doc\).*\.\.\.historyTools\(middleware\)/s);
      assert.equal(seen.length, 0);
      // Without tools nothing is offloaded, and a chat goes through.
      const chat = driver.agent({ middleware, script: () => ({ text: 'hello' }), seen, tools: [], system: SYSTEM, historyTools: false });
      await chat.run({ text: 'hi' });
      assert.equal(seen.length, 1);
    }
  });
}

// --- an offloaded output found again after a restart ----------------------------------------

/** Fetches doc 1 when asked to; asked to find its needle, searches, then pages to the hit. */
const recallScript = (state) => (request) => {
  const lastUser = request.messages.findLastIndex((m) => m.role === 'user');
  const asked = textOf(request.messages[lastUser]);
  const answers = request.messages.slice(lastUser + 1).filter((m) => m.role === 'tool').map(textOf);
  if (asked.startsWith('fetch')) return answers.length === 0 ? { calls: [{ name: 'fetch_doc', args: { n: 1 } }] } : { text: 'fetched' };
  if (answers.length === 0) return { calls: [{ name: 'search_history', args: { query: needle(1) } }] };
  if (answers.length === 1) {
    state.search = answers[0];
    const call = /read_offload (\{[^\n]*?\})/.exec(answers[0]);
    return call ? { calls: [{ name: 'read_offload', args: JSON.parse(call[1]) }] } : { text: 'not found' };
  }
  state.page = answers[1];
  return { text: 'found' };
};

for (const driver of drivers) {
  test(`${driver.name}: an output offloaded before a restart is found again after it, through the agent's tools`, async () => {
    const writer = memoryOffloadStore();
    const checkpointer = driver.checkpointer?.();
    const state = {};
    const seen = [];
    const first = driver.middleware({ writer, budget: { context_window: 64_000, output_reserve: 2_000 } });
    let history = await driver.agent({ middleware: first, script: recallScript(state), seen, tools: [fetchDoc], system: SYSTEM, checkpointer })
      .run({ id: 'restarted', text: 'fetch document 1' });
    assert.ok(JSON.stringify(seen.at(-1).messages).includes(OFFLOADED), 'doc 1 was offloaded');
    assert.equal(writer.files.size, 1);
    // The restart: the conversations from their JSON, the offloads where the writer keeps them.
    const saved = JSON.stringify(first.conversations);
    const second = driver.middleware({ writer, store: driver.ctxkit.memoryConversationStore({ state: JSON.parse(saved) }), budget: { context_window: 64_000, output_reserve: 2_000 } });
    history = await driver.agent({ middleware: second, script: recallScript(state), seen, tools: [fetchDoc], system: SYSTEM, checkpointer })
      .run({ id: 'restarted', history, text: `find ${needle(1)}` });
    assert.match(state.search, new RegExp(`${needle(1)}[\\s\\S]*read_offload`), 'search_history finds the needle in the offloaded output');
    assert.ok(state.page.includes(`doc 1 line 201: ${needle(1)}`), `read_offload pages to it: ${state.page.slice(0, 200)}`);
    assert.equal(second.engine.length, driver.historyMessages(history.slice(0, -1)).length, 'nothing appended twice');
  });
}

// --- the AI SDK's prepareStep: the history tools answer from their step's conversation ---------

for (const driver of drivers.filter((d) => d.ai)) {
  test(`${driver.name} prepareStep: one module-level prepareStep, two users concurrently, each history tool call answered by its own conversation`, async () => {
    const { ai, ctxkit } = driver;
    const prepareStep = ctxkit.ctxkitPrepareStep({ budget: { context_window: 32_000, output_reserve: 2_000 } });
    const seen = [];
    // Each user asks the model to look its secret up: it searches the history, then answers.
    const script = (request) => (request.messages.at(-1).role === 'tool'
      ? { text: 'found it' }
      : { calls: [{ name: 'search_history', args: { query: 'SECRET' } }] });
    const model = driver.model(script, seen);
    await Promise.all(['A', 'B'].map((name) => ai.generateText({
      model,
      system: SYSTEM,
      prompt: `${USERS[name].first} Find my secret.`,
      tools: ctxkit.historyTools(prepareStep),
      prepareStep,
      stopWhen: ai.stepCountIs(4),
      maxRetries: 0,
      onStepFinish: (step) => prepareStep.recordUsage(step.usage, step.content),
    })));
    assertNoLeak(seen, 4);
    for (const request of seen.filter((r) => r.messages.at(-1).role === 'tool')) {
      const owner = Object.values(USERS).find((user) => JSON.stringify(request.messages[0]).includes(user.marker));
      assert.ok(textOf(request.messages.at(-1)).includes(owner.secret), `the search ran on ${owner.marker}'s conversation: ${textOf(request.messages.at(-1)).slice(0, 200)}`);
    }
  });
}
