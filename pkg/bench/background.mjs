// Background compaction in the JS Engine: the latency of `prepare` on the turn that reaches
// the compaction trigger, with a summarizer that takes 2 s, with and without
// `policy.background_percent` (the JS twin of native/examples/background_bench.rs).
//
//   cd pkg && node bench/background.mjs            (after scripts/build-pkg.sh)
//   node bench/background.mjs --think 1000 --summary 2000
//
// An agent loop on an 8,000-token window, one file read (~350 tokens) per turn, the agent's
// own model call taking --think ms between turns (a timer), the summarizer --summary ms (a
// timer, then a summary in the request's tag). Both runs in this process, one after the other.
import { performance } from 'node:perf_hooks';
import { Engine } from 'ctxkit';

const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, arg, i, all) => (arg.startsWith('--') ? [...pairs, [arg.slice(2), all[i + 1]]] : pairs), []),
);
const THINK = Number(args.think ?? 1000);
const SUMMARY = Number(args.summary ?? 2000);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function summarize(request) {
  await sleep(SUMMARY);
  const tag = /wrapped in <([^>]+)>/.exec(request.prompt)?.[1] ?? 'summary';
  return `<${tag}>\n## Goal\nRead the files.\n## Progress\nRead them in order.\n## Next Steps\nKeep reading.\n</${tag}>`;
}

async function run(background) {
  const engine = new Engine();
  const options = {
    budget: { context_window: 8_000 },
    policy: background ? { background_percent: 60 } : {},
    summarize,
  };
  const others = [];
  let calls = 0;
  const counted = async (request) => { calls += 1; return summarize(request); };
  for (let i = 1; i <= 200; i += 1) {
    engine.append([
      { role: 'user', content: `Step ${i}: read src/file${i}.rs` },
      { role: 'assistant', content: null, tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'read_file', arguments: `{"path":"src/file${i}.rs"}` } }] },
      { role: 'tool', tool_call_id: `c${i}`, content: `fn f${i}() {}\n${'// a line of the file\n'.repeat(60)}` },
    ], 'openai');
    const start = performance.now();
    const result = await engine.prepare({ ...options, summarize: counted });
    const ms = performance.now() - start;
    if (result.summary) {
      return { compaction: ms, others, calls, turn: i, background: result.background ?? '-' };
    }
    others.push(ms);
    await sleep(THINK);
  }
  throw new Error('no compaction in 200 turns');
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
console.log(`summarizer ${SUMMARY} ms, agent's own call ${THINK} ms between turns\n`);
console.log('| background compaction | compaction turn | slowest other turn | median other turn | summary calls |');
console.log('|---|---|---|---|---|');
for (const background of [false, true]) {
  const r = await run(background);
  const label = background ? 'on (`background_percent: 60`)' : 'off';
  console.log(`| ${label} | ${r.compaction.toFixed(1)} ms (turn ${r.turn}) | ${Math.max(...r.others).toFixed(1)} ms | ${median(r.others).toFixed(2)} ms | ${r.calls} |`);
}
