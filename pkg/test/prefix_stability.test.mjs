// Prefix stability from JS, the invariant prompt caching pays for: between two turns of an
// Engine with no compaction (no new checkpoint, nothing cut or dropped to fit), the later
// view begins with the earlier one, except the earlier turn's trailing nudges. Checked for
// the OpenAI shape message by message and the Anthropic shape content block by content block
// (tool results and the user text after them share one Anthropic message), on the pipeline
// slice of a Claude Code session and on the first 10 tau-bench trajectories of the corpus,
// replayed message by message with a view before every assistant message.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as ck from 'ctxkit';
import { budget, corpusJson, pipelineLog, SYSTEM } from './helpers.mjs';

/** Every content block of an Anthropic view (system first), each as JSON with its role. */
function anthropicBlocks(view) {
  const asBlocks = (content) => (typeof content === 'string' ? [{ type: 'text', text: content }] : content);
  const system = view.system === undefined ? [] : asBlocks(view.system).map((b) => `system ${JSON.stringify(b)}`);
  return [
    ...system,
    ...view.messages.flatMap((m) => asBlocks(m.content).map((b) => `${m.role} ${JSON.stringify(b)}`)),
  ];
}

/** Each turn's two renderings, replaying `log` (ctxkit messages) into a fresh engine. */
function replay(log, family, window) {
  const options = { system: SYSTEM, budget: budget(window), policy: {} };
  const engine = new ck.Engine({ family });
  const turns = [];
  for (const message of log) {
    if (message.role === 'assistant') {
      // The same turn in both shapes: the Anthropic one from a copy of the engine's state.
      const anthropic = ck.Engine.fromJSON(engine.toJSON()).view({ ...options, format: 'anthropic' });
      const openai = engine.view({ ...options, format: 'openai' });
      const stats = openai.stats;
      assert.deepEqual(anthropic.stats, stats);
      turns.push({
        openai: openai.messages.map((m) => JSON.stringify(m)),
        anthropic: anthropicBlocks(anthropic),
        nudges: stats.nudges.length,
        checkpoint: stats.checkpoint_through,
        reshaped: stats.cut_messages > 0 || stats.dropped_messages > 0,
      });
    }
    engine.append([message]);
  }
  return turns;
}

function checkStable(turns, what) {
  let compared = 0;
  for (let i = 1; i < turns.length; i++) {
    const [earlier, later] = [turns[i - 1], turns[i]];
    if (earlier.checkpoint !== later.checkpoint || later.reshaped) continue;
    compared++;
    const stable = earlier.openai.slice(0, earlier.openai.length - earlier.nudges);
    assert.deepEqual(later.openai.slice(0, stable.length), stable, `${what}: turn ${i}: OpenAI prefix`);
    // A nudge is one text block after the conversation in the Anthropic shape.
    const blocks = earlier.anthropic.slice(0, earlier.anthropic.length - earlier.nudges);
    assert.deepEqual(later.anthropic.slice(0, blocks.length), blocks, `${what}: turn ${i}: Anthropic prefix`);
  }
  return compared;
}

test('turns without compaction extend the previous request (slice and tau-bench)', () => {
  let compared = 0;
  for (const window of [8_000, 32_000, 200_000]) {
    compared += checkStable(replay(pipelineLog(), 'claude', window), `slice at ${window}`);
  }
  const tau = corpusJson('tau-bench', 'gpt-4o-airline.json').slice(0, 10);
  for (const [index, entry] of tau.entries()) {
    const log = ck.fromOpenAI(entry.traj.filter((m) => m.role !== 'system'));
    for (const window of [8_000, 128_000]) {
      compared += checkStable(replay(log, 'openai', window), `tau ${index} at ${window}`);
    }
  }
  assert.ok(compared > 300, `${compared} pairs compared`);
});
