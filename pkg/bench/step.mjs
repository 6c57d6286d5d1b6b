// Per-step cost of the AI SDK middleware as the conversation grows (issue 33, item 8): a
// generateText step on a conversation of 100, 1,000 and 10,000 messages of history, with
// ctxkit's middleware and without it, in one run.
//
//   cd pkg && node bench/step.mjs            (after scripts/build-pkg.sh)
//   node bench/step.mjs --steps 30 --warmup 5 --histories 100,1000,10000
//
// The conversation repeats the corpus's Claude Code slice (tests/fixtures/pipeline, 48
// messages, tool-call ids unique per repetition) in the AI SDK's message shape. A step is
// `generateText({ model, system, messages })` on the history plus the 3 messages the previous
// steps added, with a model that answers at once, so a step's time is the SDK's own work (its
// prompt checked and converted: it grows with the conversation) plus, with ctxkit, the
// middleware's (the new messages appended, the view made and converted, the usage recorded).
// The loop without ctxkit is the same calls on a model not wrapped. The middleware's overhead
// is timed inside the step, around its own hooks (transformParams, and wrapGenerate less the
// model call it wraps): the SDK's own step time varies by more than the overhead between two
// loops, so "with minus without" would measure noise. Medians over the measured steps, after
// warm-up steps that are not counted (the first step, which reads the whole history into the
// Engine, is one).
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { generateText, wrapLanguageModel } from 'ai';
import { Engine } from 'ctxkit';
import { ctxkitMiddleware } from 'ctxkit/ai-sdk';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, arg, i, all) => (arg.startsWith('--') ? [...pairs, [arg.slice(2), all[i + 1]]] : pairs), []),
);
const STEPS = Number(args.steps ?? 30);
const WARMUP = Number(args.warmup ?? 5);
const HISTORIES = String(args.histories ?? '100,1000,10000').split(',').map(Number);
const PER_STEP = 3;
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

/** A model that answers at once (the AI SDK 6 provider interface). */
const model = {
  specificationVersion: 'v3',
  provider: 'bench',
  modelId: 'instant',
  supportedUrls: {},
  async doGenerate() {
    return {
      content: [{ type: 'text', text: 'ok' }],
      finishReason: { unified: 'stop', raw: 'stop' },
      usage: { inputTokens: { total: 30_000, noCache: 30_000, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 2, text: 2, reasoning: 0 } },
      warnings: [],
    };
  },
  async doStream() {
    throw new Error('not used');
  },
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

/** The median step time and middleware time (ms) of `STEPS` steps from `history` messages. */
async function run(stream, history, stepModel, spent) {
  const times = [];
  const inside = [];
  for (let s = 0; s < WARMUP + STEPS; s += 1) {
    const messages = stream.slice(0, cuts[history + PER_STEP * s]);
    spent.ms = 0;
    const start = performance.now();
    await generateText({ model: stepModel, system: SYSTEM, messages, maxRetries: 0 });
    if (s >= WARMUP) {
      times.push(performance.now() - start);
      inside.push(spent.ms);
    }
  }
  return { step: median(times), middleware: median(inside) };
}

const ms = (x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
const longest = Math.max(...HISTORIES) + PER_STEP * (WARMUP + STEPS);
const stream = aiSdkStream(longest);
const cuts = validCuts(stream);
if (cuts[longest] === undefined || cuts[longest] >= stream.length) throw new Error(`the stream has ${stream.length} messages, ${longest} needed`);

const rows = [];
for (const history of HISTORIES) {
  const without = (await run(stream, history, model, { ms: 0 })).step;
  const middleware = ctxkitMiddleware({ family: 'claude', offload: false, conversationId: `h${history}` });
  const spent = { ms: 0 };
  const measured = await run(stream, history, wrapLanguageModel({ model, middleware: timed(middleware, spent) }), spent);
  rows.push({ history, without, withCtxkit: measured.step, overhead: measured.middleware, stats: middleware.lastView.stats });
}

console.log(`node ${process.version}, ${process.platform} ${process.arch}; ${STEPS} measured steps after ${WARMUP} warm-up, ${PER_STEP} messages added per step`);
console.log('');
console.log('| history (messages) | step without ctxkit (ms) | step with the middleware (ms) | middleware overhead (ms) | overhead / without | last view (messages, tokens, tier) |');
console.log('|---:|---:|---:|---:|---:|---|');
for (const r of rows) {
  console.log(`| ${r.history} | ${ms(r.without)} | ${ms(r.withCtxkit)} | ${ms(r.overhead)} | ${(r.overhead / r.without).toFixed(2)}x | ${r.stats.messages}, ${r.stats.total_tokens}, ${r.stats.tier} |`);
}
const first = rows[0];
const last = rows.at(-1);
console.log('');
console.log(`overhead at ${last.history} / overhead at ${first.history}: ${(last.overhead / first.overhead).toFixed(2)}x (acceptance: at most 2x)`);
console.log(`overhead at ${last.history} / step without ctxkit at ${last.history}: ${(last.overhead / last.without).toFixed(2)}x (acceptance: at most 3x)`);
