// The restore block from JS: a compaction keeps, with its checkpoint in the engine's state,
// the latest content of the files read before the cut (`checkpoint.restore`), and every view
// from that checkpoint sends it byte for byte as the message right after the summary, in every
// format and valid by its validator; toJSON()/fromJSON() carry it, and `policy.restore: null`
// turns it off.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as ck from 'ctxkit';
import { budget, pipelineLog } from './helpers.mjs';

const SUMMARY = '[Context checkpoint]';
const RESTORE = '[Restored after compaction]';

const text = (message) =>
  typeof message.content === 'string'
    ? message.content
    : (message.content ?? []).map((part) => part.text ?? '').join('');

/** Replays the slice, viewing before each assistant message; the state after the first compaction. */
function firstCompaction(policy) {
  const engine = new ck.Engine({ family: 'claude' });
  const options = { budget: budget(8_000), policy, system: 'You are a coding agent.' };
  for (const message of pipelineLog()) {
    if (message.role === 'assistant') {
      engine.view(options);
      if (engine.latestCheckpoint) return { engine, options };
    }
    engine.append([message]);
  }
  throw new Error('the slice does not compact at 8k');
}

test('the restore block follows the summary, is kept in the state and survives fromJSON', () => {
  const { engine, options } = firstCompaction({});
  const checkpoint = engine.toJSON().checkpoints.at(-1);
  assert.equal(typeof checkpoint.restore, 'string', 'the checkpoint keeps a restore block');
  assert.ok(checkpoint.restore.startsWith(RESTORE));
  assert.match(checkpoint.restore, /^### `[^`]+` \(read at log entry \d+/m);

  const view = engine.view({ ...options, format: 'openai' });
  const [system, summary, restore] = view.messages;
  assert.equal(system.role, 'system');
  assert.ok(text(summary).startsWith(SUMMARY));
  assert.equal(restore.role, 'user');
  assert.equal(text(restore), checkpoint.restore, 'byte for byte, right after the summary');
  assert.deepEqual(ck.validate(view, 'openai'), []);
  for (const format of ['anthropic', 'responses', 'gemini']) {
    const other = engine.view({ ...options, format });
    assert.ok(JSON.stringify(other).includes(JSON.stringify(checkpoint.restore).slice(1, -1)), format);
    assert.deepEqual(ck.validate(other, format), [], format);
  }

  // A restored engine sends the same block.
  const restored = ck.Engine.fromJSON(JSON.stringify(engine.toJSON()));
  assert.equal(restored.toJSON().checkpoints.at(-1).restore, checkpoint.restore);
  const again = restored.view({ ...options, format: 'openai' });
  assert.equal(text(again.messages[2]), checkpoint.restore);
  assert.equal(ck.defaults().policy.restore.max_files, 5);
});

test('policy.restore: null keeps no restore block', () => {
  const { engine, options } = firstCompaction({ restore: null });
  assert.equal(engine.toJSON().checkpoints.at(-1).restore, undefined);
  const view = engine.view({ ...options, format: 'openai' });
  assert.ok(view.messages.length > 1);
  assert.ok(view.messages.every((message) => !text(message).startsWith(RESTORE)));
});
