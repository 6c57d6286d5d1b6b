// The frozen prefix from JS: an Engine given a turn's prompt parts (`prompt`) instead of its
// text keeps the date, AGENTS.md and memory precis frozen in its state until the next
// compaction, so a new day or a new memory between two turns leaves the system prompt byte for
// byte the same; the compaction's view takes the parts given then, `refresh_prompt` takes them
// at once, and toJSON()/fromJSON() carry the frozen parts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as ck from 'ctxkit';
import { budget, pipelineLog } from './helpers.mjs';

/** The parts a caller reads before turn `day` (a new day and one more memory each turn). */
function parts(day) {
  const memories = Array.from({ length: day + 1 }, (_, i) => `- memory ${i}`).join('\n');
  return {
    working_directory: '/work/app',
    date: `2026-03-${String(day + 1).padStart(2, '0')}`,
    agents_md: `Rules, version ${day}.`,
    memory_precis: memories,
  };
}

test('the prompt stays frozen between compactions and moves at one', () => {
  const engine = new ck.Engine({ family: 'claude' });
  const options = { budget: budget(8_000), policy: {} };
  let previous;
  let saved;
  let compactions = 0;
  let day = 0;
  for (const message of pipelineLog()) {
    if (message.role === 'assistant') {
      const before = engine.latestCheckpoint?.through_seq ?? null;
      const view = engine.view({ ...options, prompt: parts(day) });
      const after = engine.latestCheckpoint?.through_seq ?? null;
      if (after !== before) {
        compactions += 1;
        assert.match(view.system, new RegExp(`Current date: ${parts(day).date}`));
        assert.match(view.system, new RegExp(`memory ${day}\\b`));
      } else if (previous !== undefined) {
        assert.equal(view.system, previous, `day ${day}: the prompt moved without a compaction`);
      }
      previous = view.system;
      saved = engine.toJSON();
      day += 1;
    }
    engine.append([message]);
  }
  assert.ok(compactions > 0, 'the slice compacts at 8k');
  assert.ok(day > compactions + 1);

  // The state carries the frozen parts: an engine restored from the last turn's state, asked
  // again with the next day's parts, sends the same prompt.
  const state = saved;
  assert.equal(typeof state.frozen_prompt.date, 'string');
  const restored = ck.Engine.fromJSON(JSON.stringify(state));
  assert.deepEqual(restored.toJSON().frozen_prompt, state.frozen_prompt);
  const kept = restored.view({ ...options, prompt: parts(day + 1) });
  assert.equal(kept.system, previous);
  const refreshed = restored.view({ ...options, prompt: parts(day + 1), refresh_prompt: true });
  assert.match(refreshed.system, new RegExp(`Current date: ${parts(day + 1).date}`));
});

test('system and prompt together are refused', () => {
  const engine = new ck.Engine({ family: 'claude' });
  engine.append([{ role: 'user', content: 'hi' }]);
  assert.throws(() => engine.view({ system: 'x', prompt: parts(0) }), /options\.system: give the system prompt as text/);
  assert.throws(() => engine.view({ system: 'x', refresh_prompt: true }), /options\.refresh_prompt/);
});
