// Engine.compactIfIdle (issue 21, item 3): compaction ahead of the cache's expiry, with the idle
// time given by the test's own clock. Too early it waits and keeps nothing; in the margin before
// the lifetime ends it compacts with the caller's summarizer and keeps the checkpoint, so the
// next turn starts from it; a small view or a policy without it is skipped; bad options reject.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as ck from 'ctxkit';
import { budget, pipelineLog, QUIET, SYSTEM } from './helpers.mjs';

const turn = { system: SYSTEM, budget: budget(9_000), policy: { nudges: QUIET, max_summary_tokens: 2_000 } };

function busyEngine() {
  const engine = new ck.Engine({ family: 'claude' });
  engine.append(pipelineLog());
  return engine;
}

test('an idle session waits, then compacts in the margin, and the next turn starts from it', async () => {
  const engine = busyEngine();
  // The test's clock: the last model call at `last`, the timer firing later.
  const last = 1_000;
  let now = last + 100;
  const early = await engine.compactIfIdle({ ...turn, idle_seconds: now - last, ttl_seconds: 300 });
  assert.deepEqual(early.decision, { action: 'wait', seconds: 170 });
  assert.equal(early.result, null);
  assert.equal(engine.latestCheckpoint, null, 'waiting keeps nothing');

  now = last + 280;
  let asked = 0;
  const due = await engine.compactIfIdle({
    ...turn,
    idle_seconds: now - last,
    ttl_seconds: 300,
    summarize: async () => { asked += 1; return '## Goal\nUnify transcript views.'; },
  });
  assert.equal(due.decision.action, 'compact');
  assert.equal(due.decision.expired, false);
  assert.equal(asked, 1);
  assert.equal(due.result.summary.method, 'llm');
  assert.ok(due.result.stats.total_tokens < due.view_tokens);
  const checkpoint = engine.latestCheckpoint;
  assert.ok(checkpoint.summary.startsWith('## Goal\n- '), checkpoint.summary);
  assert.ok(checkpoint.summary.includes("## The summarizer's own account of the goal (not the user's words)\nUnify transcript views."));

  // The user is back: the turn starts from that checkpoint and compacts nothing.
  const next = engine.view(turn);
  assert.equal(next.summary, null);
  assert.equal(next.stats.checkpoint_through, checkpoint.through_seq);
});

test('a small view, or a policy without idle compaction, is skipped', async () => {
  const small = new ck.Engine({ family: 'claude' });
  small.append([{ role: 'user', content: 'hi' }]);
  const skipped = await small.compactIfIdle({ ...turn, idle_seconds: 299 });
  assert.equal(skipped.decision.action, 'skip');
  assert.equal(skipped.decision.reason.kind, 'below_floor');
  const off = busyEngine();
  const never = await off.compactIfIdle({ ...turn, policy: { ...turn.policy, idle_trigger_percent: null }, idle_seconds: 299 });
  assert.deepEqual(never.decision, { action: 'skip', reason: { kind: 'off' } });
  assert.equal(off.latestCheckpoint, null);
});

test('bad idle options reject and change nothing', async () => {
  const engine = busyEngine();
  await assert.rejects(engine.compactIfIdle({ ...turn }), /options\.idle_seconds/);
  await assert.rejects(engine.compactIfIdle({ ...turn, idle_seconds: -1 }), /options\.idle_seconds: expected a whole number/);
  await assert.rejects(engine.compactIfIdle({ ...turn, idle_seconds: 10, ttl_seconds: 'soon' }), /options\.ttl_seconds/);
  await assert.rejects(engine.compactIfIdle({ ...turn, idle_seconds: 10, bogus: 1 }), /bogus/);
  assert.equal(engine.latestCheckpoint, null);
  assert.equal(engine.length, pipelineLog().length);
});
