// Per-step cost of the AI SDK middleware as the conversation grows (issue 33, item 8): a
// generateText tool loop started from 100, 1,000 and 10,000 messages of history, with ctxkit's
// middleware and without it, in one run.
//
//   cd pkg && node bench/step.mjs            (after scripts/build-pkg.sh)
//   node bench/step.mjs --steps 60 --warmup 10 --histories 100,1000,10000
//
// The history repeats the corpus's Claude Code slice (tests/fixtures/pipeline, 48 messages,
// tool-call ids unique per repetition) in the AI SDK's message shape. One
// `generateText({ model, system, messages, tools, stopWhen })` runs the loop: the model (which
// answers at once) calls `read_file` at every step, the tool returns 2 KB, so each step adds 2
// messages and the SDK builds the next step's prompt from the whole conversation, as in an
// agent. A step is the time between two model calls: the SDK's own work (the tool run, the
// step's prompt converted: it grows with the conversation) plus, with ctxkit, the middleware's
// (the new messages appended, the view made and converted, the usage recorded). The loop
// without ctxkit is the same call on a model not wrapped. The overhead is reported twice: the
// step with the middleware less the step without (what an agent pays, the garbage its
// allocations leave to collect included, but the difference of two noisy medians), and the time
// inside the middleware's own hooks (transformParams, and wrapGenerate less the model call it
// wraps), measured within each step. Medians over the measured steps, after warm-up
// steps that are not counted (the first, which also validates the history and reads it into
// the Engine, is one).
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { generateText, jsonSchema, stepCountIs, tool, wrapLanguageModel } from 'ai';
import { Engine } from 'ctxkit';
import { ctxkitMiddleware } from 'ctxkit/ai-sdk';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, arg, i, all) => (arg.startsWith('--') ? [...pairs, [arg.slice(2), all[i + 1]]] : pairs), []),
);
const STEPS = Number(args.steps ?? 60);
const WARMUP = Number(args.warmup ?? 10);
const HISTORIES = String(args.histories ?? '100,1000,10000').split(',').map(Number);
const OUTPUT = 'x'.repeat(60).concat('\n').repeat(33);
const SYSTEM = 'You are a coding agent working in /home/USER/spotter.\nCurrent date: 2026-02-11';

// The message stream in the AI SDK's shape (the Engine's own ai-sdk rendering, nothing cut).
const slice = JSON.parse(readFileSync(join(root, 'tests/fixtures/pipeline/claude_code_slice.json'), 'utf8'));
function aiSdkStream(count) {
  const messages = [];
  // Parallel tool results share one AI SDK tool message: ctxkit messages outnumber the SDK's.
  for (let r = 0; messages.length < count * 1.3; r += 1) {
    const id = (raw) => `${raw}_r${r}`;
    messages.push(...slice.map((m) => ({
      ...m,
      ...(m.tool_calls ? { tool_calls: m.tool_calls.map((c) => ({ ...c, id: id(c.id) })) } : {}),
      ...(m.tool_call_id ? { tool_call_id: id(m.tool_call_id) } : {}),
    })));
  }
  const engine = new Engine({ family: 'claude' });
  engine.append(messages);
  const off = { strategy: { kind: 'off' }, nudges: { memory_every_turns: 0, stall_after_turns: 0 } };
  const budget = { context_window: 1e9, output_reserve: 0, tool_schema_tokens: 0, safety_margin: 0 };
  const view = engine.view({ format: 'ai-sdk', policy: off, budget }).messages.filter((m) => m.role !== 'system');
  engine.free();
  return view;
}

/** When each model call began (ms), for the step times. */
let calls = [];

/** A model that answers at once with a call of `read_file` (the AI SDK 6 provider interface). */
const model = {
  specificationVersion: 'v3',
  provider: 'bench',
  modelId: 'instant',
  supportedUrls: {},
  async doGenerate() {
    calls.push(performance.now());
    return {
      content: [{ type: 'tool-call', toolCallId: `step_${calls.length}`, toolName: 'read_file', input: JSON.stringify({ path: `src/${calls.length}.rs` }) }],
      finishReason: { unified: 'tool-calls', raw: 'tool_use' },
      usage: { inputTokens: { total: 30_000, noCache: 30_000, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 20, text: 20, reasoning: 0 } },
      warnings: [],
    };
  },
  async doStream() {
    throw new Error('not used');
  },
};

const tools = {
  read_file: tool({
    description: 'Read a file',
    inputSchema: jsonSchema({ type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }),
    execute: async () => OUTPUT,
  }),
};

/**
 * For each length, the shortest prompt at least that long that the SDK accepts: every tool
 * call answered (a step cut between a call and its results is refused).
 */
function validCuts(stream) {
  const cuts = new Array(stream.length + 1);
  const pending = new Set();
  let next = stream.length;
  const valid = [];
  stream.forEach((message, index) => {
    for (const part of Array.isArray(message.content) ? message.content : []) {
      if (part.type === 'tool-call') pending.add(part.toolCallId);
      if (part.type === 'tool-result') pending.delete(part.toolCallId);
    }
    valid[index + 1] = pending.size === 0;
  });
  valid[0] = true;
  for (let length = stream.length; length >= 0; length -= 1) {
    if (valid[length]) next = length;
    cuts[length] = next;
  }
  return cuts;
}

const median = (times) => [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)];

/** `middleware` with the time spent in its own hooks (not in the model call) added to `spent.ms`. */
function timed(middleware, spent) {
  return {
    specificationVersion: 'v3',
    async transformParams(options) {
      const start = performance.now();
      const params = await middleware.transformParams(options);
      spent.ms += performance.now() - start;
      return params;
    },
    async wrapGenerate(options) {
      const start = performance.now();
      let inner = 0;
      const doGenerate = async () => {
        const called = performance.now();
        const result = await options.doGenerate();
        inner += performance.now() - called;
        return result;
      };
      const result = await middleware.wrapGenerate({ ...options, doGenerate });
      spent.ms += performance.now() - start - inner;
      return result;
    },
  };
}

/** The median step time and middleware time (ms) of a loop of `WARMUP + STEPS` steps from `history` messages. */
async function run(stream, history, stepModel, spent) {
  calls = [];
  const inside = [];
  const steps = WARMUP + STEPS + 1;
  await generateText({
    model: stepModel, system: SYSTEM, messages: stream.slice(0, cuts[history]), tools, stopWhen: stepCountIs(steps), maxRetries: 0,
    onStepFinish: () => {
      inside.push(spent.ms);
      spent.ms = 0;
    },
  });
  if (calls.length !== steps) throw new Error(`${calls.length} model calls, ${steps} expected`);
  const times = calls.slice(1).map((at, index) => at - calls[index]);
  return { step: median(times.slice(WARMUP)), middleware: median(inside.slice(WARMUP + 1)) };
}

const ms = (x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
const longest = Math.max(...HISTORIES);
const stream = aiSdkStream(longest);
const cuts = validCuts(stream);
if (cuts[longest] === undefined || cuts[longest] >= stream.length) throw new Error(`the stream has ${stream.length} messages, ${longest} needed`);

// One loop of each kind first, not counted: the JIT compiles the SDK's, the middleware's and the
// Engine's code before the first measured loop, so the first history is not charged for it.
await run(stream, HISTORIES[0], model, { ms: 0 });
const warm = { ms: 0 };
await run(stream, HISTORIES[0], wrapLanguageModel({ model, middleware: timed(ctxkitMiddleware({ family: 'claude', offload: false }), warm) }), warm);

const rows = [];
for (const history of HISTORIES) {
  const without = (await run(stream, history, model, { ms: 0 })).step;
  const middleware = ctxkitMiddleware({ family: 'claude', offload: false, conversationId: `h${history}` });
  const spent = { ms: 0 };
  const measured = await run(stream, history, wrapLanguageModel({ model, middleware: timed(middleware, spent) }), spent);
  rows.push({ history, without, withCtxkit: measured.step, overhead: measured.middleware, stats: middleware.lastView.stats });
}

console.log(`node ${process.version}, ${process.platform} ${process.arch}; ${STEPS} measured steps after ${WARMUP} warm-up, 2 messages (a call of read_file, its 2 KB result) added per step`);
console.log('');
console.log('| history (messages) | step without ctxkit (ms) | step with the middleware (ms) | overhead: with - without (ms) | overhead: in the hooks (ms) | overhead / without | last view (messages, tokens, tier) |');
console.log('|---:|---:|---:|---:|---:|---:|---|');
for (const r of rows) {
  const difference = r.withCtxkit - r.without;
  console.log(`| ${r.history} | ${ms(r.without)} | ${ms(r.withCtxkit)} | ${ms(difference)} | ${ms(r.overhead)} | ${(difference / r.without).toFixed(2)}x, ${(r.overhead / r.without).toFixed(2)}x | ${r.stats.messages}, ${r.stats.total_tokens}, ${r.stats.tier} |`);
}
const first = rows[0];
const last = rows.at(-1);
const ratio = (a, b) => `${(a / b).toFixed(2)}x`;
console.log('');
console.log(`overhead at ${last.history} / overhead at ${first.history}: ${ratio(last.withCtxkit - last.without, first.withCtxkit - first.without)} (with - without), ${ratio(last.overhead, first.overhead)} (in the hooks); acceptance: at most 2x`);
console.log(`overhead at ${last.history} / step without ctxkit at ${last.history}: ${ratio(last.withCtxkit - last.without, last.without)} (with - without), ${ratio(last.overhead, last.without)} (in the hooks); acceptance: at most 3x`);
