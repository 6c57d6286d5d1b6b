// Per-turn cost of ctxkit's Engine over a 10k-message log, against @langchain/core's
// trimMessages on the same messages in the same process, and the size of the .wasm.
//
//   cd pkg && node bench/turn.mjs            (after scripts/build-pkg.sh)
//   node bench/turn.mjs --turns 100 --baseline-turns 5
//
// The log repeats the corpus's Claude Code slice (tests/fixtures/pipeline, 48 messages) with
// tool-call ids made unique per repetition, as the Rust plan benchmark does. A turn appends
// the next 3 messages of that stream, then asks for the view:
// - ctxkit: `engine.append(turn)` then `engine.view({ system, format: 'openai' })`: the full
//   pipeline (checkpoint + tail, compaction when over the trigger, tool-pair repair, nudges,
//   stats) and the view converted to Chat Completions messages, as plain JS objects. The
//   Engine already holds the log: only the new messages cross into wasm.
// - trimMessages: the same messages as LangChain messages, `strategy: 'last'`, a chars/4
//   token counter, the same token budget, the system message kept, starting on a human turn.
// - a linear JS trim (context only): keep the longest suffix under the same budget by chars/4,
//   in one pass; what a minimal hand-written trim costs.
// - the AI SDK middleware (ctxkit/ai-sdk's ctxkitMiddleware): its per-step overhead in a
//   generateText tool loop, i.e. `transformParams` on the step's whole provider prompt (the SDK
//   resends every message each step; the middleware appends the new ones and returns the view)
//   plus `wrapGenerate` recording the usage, around a model call that returns at once.
// Both sides run in this process, one after the other, on the same machine state; times are
// per turn (median, mean, p95) over the measured turns, after warm-up turns that are not
// counted.
import { readFileSync } from 'node:fs';
import { gzipSync, brotliCompressSync, constants } from 'node:zlib';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { Engine, defaults } from 'ctxkit';
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, trimMessages } from '@langchain/core/messages';
import { ctxkitMiddleware } from 'ctxkit/ai-sdk';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, arg, i, all) => (arg.startsWith('--') ? [...pairs, [arg.slice(2), all[i + 1]]] : pairs), []),
);
const LOG = Number(args.log ?? 10_000);
const TURNS = Number(args.turns ?? 200);
const BASELINE_TURNS = Number(args['baseline-turns'] ?? 3);
const WARMUP = Number(args.warmup ?? 20);
const PER_TURN = 3;
const SYSTEM = 'You are a coding agent working in /home/USER/spotter.\nCurrent date: 2026-02-11';

// The message stream: the slice repeated, ids unique per repetition.
const slice = JSON.parse(readFileSync(join(root, 'tests/fixtures/pipeline/claude_code_slice.json'), 'utf8'));
function repetition(r) {
  const id = (raw) => `${raw}_r${r}`;
  return slice.map((m) => ({
    ...m,
    ...(m.tool_calls ? { tool_calls: m.tool_calls.map((c) => ({ ...c, id: id(c.id) })) } : {}),
    ...(m.tool_call_id ? { tool_call_id: id(m.tool_call_id) } : {}),
  }));
}
const needed = LOG + PER_TURN * (WARMUP + Math.max(TURNS, BASELINE_TURNS));
const stream = [];
for (let r = 0; stream.length < needed; r += 1) stream.push(...repetition(r));
const initial = stream.slice(0, LOG);
const turnAt = (t) => stream.slice(LOG + PER_TURN * t, LOG + PER_TURN * (t + 1));

const budget = defaults().budget;
const usable = budget.context_window - budget.output_reserve - budget.tool_schema_tokens - budget.safety_margin;

function summarize(times) {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  return { n: times.length, median: at(0.5), mean, p95: at(0.95) };
}
const ms = (x) => (x >= 100 ? x.toFixed(0) : x >= 1 ? x.toFixed(2) : x.toFixed(3));

// ctxkit Engine.
function benchEngine() {
  const engine = new Engine({ family: 'claude' });
  const setupStart = performance.now();
  engine.append(initial);
  const first = engine.view({ system: SYSTEM, format: 'openai' });
  const setup = performance.now() - setupStart;
  const times = [];
  let last = first;
  let compactions = 0;
  for (let t = 0; t < WARMUP + TURNS; t += 1) {
    const turn = turnAt(t);
    const start = performance.now();
    engine.append(turn);
    last = engine.view({ system: SYSTEM, format: 'openai' });
    const elapsed = performance.now() - start;
    if (last.summary) compactions += 1;
    if (t >= WARMUP) times.push(elapsed);
  }
  const saveStart = performance.now();
  const state = JSON.stringify(engine);
  const save = performance.now() - saveStart;
  const loadStart = performance.now();
  Engine.fromJSON(state).free();
  const load = performance.now() - loadStart;
  return {
    setup, save, load, stateBytes: Buffer.byteLength(state), first: first.stats, last: last.stats,
    lastMessages: last.messages.length, compactions, ...summarize(times),
  };
}

// LangChain trimMessages.
function toLangChain(m) {
  const content = typeof m.content === 'string' ? m.content
    : (m.content ?? []).filter((p) => p.type === 'text').map((p) => p.text).join('\n');
  switch (m.role) {
    case 'user': return new HumanMessage({ content });
    case 'system': return new SystemMessage({ content });
    case 'tool': return new ToolMessage({ content, tool_call_id: m.tool_call_id });
    default: return new AIMessage({
      content,
      tool_calls: (m.tool_calls ?? []).map((c) => ({ id: c.id, name: c.name, args: JSON.parse(c.arguments || '{}'), type: 'tool_call' })),
    });
  }
}
function chars(message) {
  let n = typeof message.content === 'string' ? message.content.length
    : message.content.reduce((sum, part) => sum + (part.text?.length ?? 0), 0);
  for (const call of message.tool_calls ?? []) n += call.name.length + JSON.stringify(call.args).length;
  return n;
}
const charsOf = new WeakMap();
function charsCached(message) {
  let n = charsOf.get(message);
  if (n === undefined) { n = chars(message); charsOf.set(message, n); }
  return n;
}
const tokenCounter = (messages) => {
  let tokens = 0;
  for (const message of messages) tokens += Math.ceil(chars(message) / 4);
  return tokens;
};

async function benchTrimMessages() {
  const system = new SystemMessage({ content: SYSTEM });
  const messages = initial.map(toLangChain);
  const times = [];
  let kept = 0;
  const warm = Math.min(WARMUP, 1);
  for (let t = 0; t < warm + BASELINE_TURNS; t += 1) {
    const turn = turnAt(t).map(toLangChain);
    const start = performance.now();
    messages.push(...turn);
    const trimmed = await trimMessages([system, ...messages], {
      maxTokens: usable, tokenCounter, strategy: 'last', includeSystem: true, startOn: 'human',
    });
    const elapsed = performance.now() - start;
    kept = trimmed.length;
    if (t >= warm) times.push(elapsed);
  }
  return { kept, ...summarize(times) };
}

function benchLinear() {
  const messages = initial.map(toLangChain);
  const times = [];
  let kept = 0;
  for (let t = 0; t < WARMUP + TURNS; t += 1) {
    const turn = turnAt(t).map(toLangChain);
    const start = performance.now();
    messages.push(...turn);
    let tokens = Math.ceil(SYSTEM.length / 4);
    let from = messages.length;
    while (from > 0) {
      const next = tokens + Math.ceil(charsCached(messages[from - 1]) / 4);
      if (next > usable) break;
      tokens = next;
      from -= 1;
    }
    kept = messages.length - from;
    if (t >= WARMUP) times.push(performance.now() - start);
  }
  return { kept, ...summarize(times) };
}

// The AI SDK middleware: the stream in the AI SDK's shape, one step per turn.
async function benchAiSdk() {
  const convert = new Engine({ family: 'claude' });
  convert.append(stream);
  const all = convert.view({ format: 'ai-sdk', policy: { strategy: { kind: 'off' }, nudges: { memory_every_turns: 0, stall_after_turns: 0 } } }).messages.slice(1);
  const system = { role: 'system', content: SYSTEM };
  const middleware = ctxkitMiddleware({ family: 'claude', offload: false });
  const result = { content: [], finishReason: { unified: 'stop', raw: 'stop' }, usage: { inputTokens: { total: 30_000 } }, warnings: [] };
  const step = async (count) => {
    const params = await middleware.transformParams({ type: 'generate', params: { prompt: [system, ...all.slice(0, count)] } });
    await middleware.wrapGenerate({ doGenerate: async () => result, params });
    return params;
  };
  await step(LOG);
  const times = [];
  for (let t = 0; t < WARMUP + TURNS; t += 1) {
    const start = performance.now();
    await step(LOG + PER_TURN * (t + 1));
    const elapsed = performance.now() - start;
    if (t >= WARMUP) times.push(elapsed);
  }
  return { stats: middleware.lastView.stats, ...summarize(times) };
}

const wasm = readFileSync(join(here, '..', 'dist', 'ctxkit_bg.wasm'));
const size = {
  raw: wasm.length,
  gzip: gzipSync(wasm, { level: 9 }).length,
  brotli: brotliCompressSync(wasm, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
};

const engine = benchEngine();
const trim = await benchTrimMessages();
const linear = benchLinear();
const aiSdk = await benchAiSdk();
const ratio = trim.median / engine.median;

console.log(`log: ${LOG} messages (${(Buffer.byteLength(JSON.stringify(initial)) / 1e6).toFixed(1)} MB as JSON), ${PER_TURN} appended per turn; budget ${usable} tokens (200k window, defaults)`);
console.log(`node ${process.version}, ${process.platform} ${process.arch}`);
console.log('');
console.log('per turn (ms)                       median    mean     p95   turns');
const row = (name, r) => console.log(`${name.padEnd(34)} ${ms(r.median).padStart(7)} ${ms(r.mean).padStart(7)} ${ms(r.p95).padStart(7)} ${String(r.n).padStart(7)}`);
row('ctxkit Engine append + view', engine);
row('@langchain/core trimMessages', trim);
row('linear JS suffix trim (context)', linear);
row('AI SDK middleware, per step', aiSdk);
console.log('');
console.log(`ratio trimMessages / Engine (median): ${ratio.toFixed(0)}x`);
console.log(`Engine: setup (append ${LOG} + first view, which compacts): ${ms(engine.setup)} ms; ` +
  `compactions during the measured turns: ${engine.compactions}; last view: ${engine.lastMessages} messages, ` +
  `${engine.last.total_tokens} tokens, tier ${engine.last.tier}`);
console.log(`Engine state (${engine.stateBytes} bytes of JSON): JSON.stringify(engine) ${ms(engine.save)} ms, Engine.fromJSON ${ms(engine.load)} ms`);
console.log(`trimMessages kept ${trim.kept} messages; the linear trim kept ${linear.kept}`);
console.log(`AI SDK middleware: transformParams on the step's whole prompt (${LOG}+ messages) + wrapGenerate; last view ${aiSdk.stats.messages} messages, ${aiSdk.stats.total_tokens} tokens, tier ${aiSdk.stats.tier}`);
console.log(`.wasm: ${size.raw} bytes raw, ${size.gzip} gzip -9, ${size.brotli} brotli -q 11`);
