// What crossing the JS/wasm boundary costs: exports whose work is mostly converting values in
// and out, over a 10k-message log. Used to choose how values cross (wasm/src/convert.rs):
// results are written by serde-wasm-bindgen, arguments are read through JSON text.
//
//   cd pkg && node bench/convert.mjs                  (after scripts/build-pkg.sh)
//   node bench/convert.mjs /path/to/other/dist        (compare another build of pkg/dist)
//
// The log repeats the corpus's Claude Code slice (tests/fixtures/pipeline, 48 messages) with
// tool-call ids made unique per repetition, as bench/turn.mjs does. Each line gives the median
// and the fastest of 40 runs after 3 warm-up runs (the spread is wide: garbage collection).
// `in` marks a call whose cost is reading its argument, `out` one that writes a large result.
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { dirname, join, resolve } from 'node:path';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const dist = resolve(process.argv[2] ?? join(here, '..', 'dist'));
const ck = createRequire(import.meta.url)(join(dist, 'ctxkit_node.cjs'));

const slice = JSON.parse(readFileSync(join(root, 'tests/fixtures/pipeline/claude_code_slice.json'), 'utf8'));
const log = [];
for (let r = 0; log.length < 10_000; r += 1) {
  const id = (raw) => `${raw}_r${r}`;
  log.push(...slice.map((m) => ({
    ...m,
    ...(m.tool_calls ? { tool_calls: m.tool_calls.map((c) => ({ ...c, id: id(c.id) })) } : {}),
    ...(m.tool_call_id ? { tool_call_id: id(m.tool_call_id) } : {}),
  })));
}
log.length = 10_000;
const openai = ck.toOpenAI(log);
const budget = ck.defaults().budget;

function measure(run, runs = 40) {
  for (let i = 0; i < 3; i += 1) run();
  const times = [];
  for (let i = 0; i < runs; i += 1) {
    const start = performance.now();
    run();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return { min: times[0], median: times[Math.floor(runs / 2)] };
}

console.log(`${dist}: ${log.length} messages (${(JSON.stringify(log).length / 1e6).toFixed(1)} MB as JSON)\n`);
const cases = [
  ['estimateTokens(log)                 in', () => ck.estimateTokens(log, 'claude')],
  ['toOpenAI(log)                   in, out', () => ck.toOpenAI(log)],
  ['fromOpenAI(openai)              in, out', () => ck.fromOpenAI(openai)],
  ['repairToolPairs(log)            in, out', () => ck.repairToolPairs(log)],
  ['planTurn (1k of the log)        in', () => ck.planTurn({ log: log.slice(0, 1_000), system: 'x', budget, policy: { family: 'claude' } })],
  ['Engine: append(log) + first view  in, out', () => {
    const engine = new ck.Engine({ family: 'claude' });
    engine.append(log);
    engine.view({ system: 'x', format: 'openai' });
    engine.free();
  }],
];
console.log(`${''.padEnd(44)} ${'median'.padStart(9)} ${'min'.padStart(9)}`);
for (const [name, run] of cases) {
  const { min, median } = measure(run);
  console.log(`${name.padEnd(44)} ${median.toFixed(1).padStart(6)} ms ${min.toFixed(1).padStart(6)} ms`);
}
