// The built package against the Rust snapshot tests' own fixtures and .snap files: the same
// inputs must give the same results through JS as through Rust.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as ck from 'ctxkit';
import {
  budget, fixture, fixtureNames, jsonSnapshot, pipelineLog, pipelineSnapshot, QUIET, snapshot,
  SYSTEM, TODOS,
} from './helpers.mjs';

test('repair fixtures give the repair snapshots (tests/tests/all/repair_snapshots.rs)', () => {
  const names = fixtureNames('repair', /\.json$/);
  assert.ok(names.length >= 3);
  for (const name of names) {
    const { messages, report } = ck.repairToolPairs(fixture('repair', name));
    const expected = jsonSnapshot(`repair_snapshots__repair_fixtures@${name}`);
    assert.deepEqual({ report, view: messages }, expected, name);
  }
});

test('OpenAI wire fixtures give the wire snapshots (tests/tests/all/wire_openai.rs)', () => {
  for (const name of ['openai_parallel_calls', 'openai_parts', 'openai_normalized']) {
    const input = fixture('wire', `${name}.json`);
    const messages = ck.fromOpenAI(input);
    const openai = ck.toOpenAI(messages);
    let anthropic;
    try {
      anthropic = ck.toAnthropic(messages);
    } catch (error) {
      anthropic = { error: error.message.replace(/^toAnthropic: /, '') };
    }
    assert.deepEqual(ck.fromOpenAI(openai), messages, `${name}: round trip`);
    assert.deepEqual({ messages, openai, anthropic }, jsonSnapshot(`wire_openai__${name}`), name);
    if (name !== 'openai_normalized') assert.deepEqual(openai, input, `${name}: normal form`);
  }
});

test('Anthropic wire fixtures give the wire snapshots (tests/tests/all/wire_anthropic.rs)', () => {
  for (const name of ['anthropic_parallel_tool_use', 'anthropic_blocks', 'anthropic_normalized']) {
    const input = fixture('wire', `${name}.json`);
    const messages = ck.fromAnthropic(input);
    const anthropic = ck.toAnthropic(messages);
    const openai = ck.toOpenAI(messages);
    assert.deepEqual(ck.fromAnthropic(anthropic), messages, `${name}: round trip`);
    assert.deepEqual({ messages, anthropic, openai }, jsonSnapshot(`wire_anthropic__${name}`), name);
    if (name !== 'anthropic_normalized') assert.deepEqual(anthropic, input, `${name}: normal form`);
  }
});

function engineWithSlice() {
  const engine = new ck.Engine({ family: 'claude' });
  engine.append(pipelineLog());
  return engine;
}

function assertPipeline(name, result) {
  const expected = pipelineSnapshot(`pipeline_snapshots__${name}`);
  assert.deepEqual(result.stats, expected.stats, `${name}: stats`);
  assert.deepEqual(result.messages.map((m) => m.role), expected.roles, `${name}: roles`);
  return expected;
}

test('the pipeline slice before compaction: same view as the Rust snapshot (Engine)', () => {
  const engine = engineWithSlice();
  const view = engine.view({
    system: SYSTEM, budget: budget(200_000), policy: { nudges: QUIET }, todos: TODOS,
  });
  assert.equal(view.format, 'ctxkit');
  assert.equal(view.system, SYSTEM);
  assertPipeline('view_before_compaction', view);
});

test('compaction: the same summary request, extractive summary and view as Rust (Engine.prepare)', async () => {
  const engine = engineWithSlice();
  const requests = [];
  const view = await engine.prepare({
    system: SYSTEM,
    budget: budget(9_000),
    policy: { nudges: QUIET, max_summary_tokens: 2_000 },
    todos: TODOS,
    summarize: async (request) => {
      requests.push(request);
      throw new Error('no LLM in this test');
    },
  });
  assert.equal(requests.length, 1);
  assert.equal(
    `system: ${requests[0].system}\n\n${requests[0].prompt}`,
    snapshot('pipeline_snapshots__summary_request_prompt'),
  );
  assert.deepEqual(view.summary, {
    method: 'extractive',
    through_seq: requests[0].through_seq,
    fallback_reason: 'summarize rejected: no LLM in this test',
  });
  assert.equal(engine.latestCheckpoint.summary, snapshot('pipeline_snapshots__extractive_summary'));
  // The fallback is in the stats; the rest is the Rust snapshot's (made without a summarizer).
  const { fallbacks, ...stats } = view.stats;
  assert.deepEqual(fallbacks, [{ call: 'summary', kind: 'error', reason: 'summarize rejected: no LLM in this test' }]);
  assertPipeline('view_after_compaction', { ...view, stats });

  // Without a summarizer, view() makes the same extractive checkpoint and view.
  const offline = engineWithSlice().view({
    system: SYSTEM, budget: budget(9_000), policy: { nudges: QUIET, max_summary_tokens: 2_000 },
    todos: TODOS,
  });
  assert.deepEqual(offline.stats, stats, 'no fallback: view() has no summarizer');
  assert.deepEqual(offline.summary, { ...view.summary, fallback_reason: null });
});

test('planTurn and summaryCheckpoint follow the same protocol as the Engine', () => {
  const log = pipelineLog();
  const settings = {
    system: SYSTEM, budget: budget(9_000), todos: TODOS,
    policy: { family: 'claude', nudges: QUIET, max_summary_tokens: 2_000 },
  };
  const first = ck.planTurn({ log, ...settings });
  assert.equal(first.kind, 'summarize');
  const { checkpoint, fallback_reason } = ck.summaryCheckpoint({
    request: first.request, log, policy: settings.policy,
  });
  assert.equal(fallback_reason, null);
  assert.equal(checkpoint.summary, snapshot('pipeline_snapshots__extractive_summary'));
  const second = ck.planTurn({ log, checkpoint, ...settings });
  assert.equal(second.kind, 'ready');
  assertPipeline('view_after_compaction', { ...second, messages: second.view.messages });
});

test('nudges, truncation, the sliding window and clearing: same views as Rust (planTurn)', () => {
  const log = pipelineLog();
  const plan = (input) => {
    const result = ck.planTurn({ system: SYSTEM, todos: TODOS, ...input });
    assert.equal(result.kind, 'ready');
    return { ...result, messages: result.view.messages };
  };

  assertPipeline('nudged_view', plan({
    log: log.slice(0, 21),
    budget: budget(200_000),
    policy: { family: 'claude', nudges: { memory_every_turns: 1, stall_after_turns: 2 } },
    nudge_state: { turn: 2, last_seq: 10, turns_without_progress: 1 },
  }));

  const truncated = plan({
    log, budget: budget(6_000),
    policy: { family: 'claude', strategy: { kind: 'truncate' }, nudges: QUIET },
  });
  const expected = assertPipeline('truncation_view', truncated);
  assert.equal(`checkpoint summary:\n${truncated.new_checkpoint.summary}`, expected.after);

  assertPipeline('sliding_window_view', plan({
    log, budget: budget(9_000),
    policy: { family: 'claude', strategy: { kind: 'sliding_window', keep_last: 9 }, nudges: QUIET },
  }));

  assertPipeline('cleared_view', plan({
    log, budget: budget(9_000),
    policy: {
      family: 'claude', nudges: QUIET,
      clear_tool_results: {
        keep_last_exchanges: 3, batch_exchanges: 4, exclude_tools: ['Task'], min_bytes: 200,
      },
    },
  }));
});

test('every view of the slice passes both providers\' validators', () => {
  for (const format of ['openai', 'anthropic']) {
    for (const window of [200_000, 9_000, 6_000, 3_000]) {
      const engine = engineWithSlice();
      const view = engine.view({ system: SYSTEM, budget: budget(window), format });
      assert.equal(view.format, format);
      assert.deepEqual(ck.validate(view, format), [], `${format} at ${window}`);
    }
  }
});
