// Pins the npm package's results on real transcript data, so that a refactor (the core's
// modules moving, the turn protocol rewritten) can be checked to leave them byte-identical:
// the `Engine` turn by turn (append a turn, then `view` in the ctxkit, OpenAI and Anthropic
// shapes at small windows, so compaction, truncation and nudges happen; `await prepare()` with
// a summarizer that answers and one that throws; usage calibration; the state and its
// round trip), and the stateless functions (planTurn with summaryCheckpoint, the wire
// converters, validate, repairToolPairs, extractiveSummary, renderPrecis, buildSystemPrompt,
// planOffload, estimateTokens, advanceNudges, defaults, and the messages of errors). The data:
// the Claude Code slice of tests/fixtures/pipeline (ctxkit messages), the OpenAI-format `traj`
// of the first 10 tau-bench trajectories of the corpus (tau-bench/gpt-4o-airline.json, found
// by `corpusDir()` in helpers.mjs, the same lookup as the Rust tests' corpus_dir()), and the
// wire and repair fixtures.
//
// Each case runs a fixed sequence of calls and takes the sha256 of the JSON.stringify of every
// result in order (one line each; a call that throws gives `{"error": message}`). The
// digests and byte counts are in corpus_outputs.json (case name -> {digest, bytes}), generated
// on the code before the refactor: they record what the package returned, not what it should.
//
// To update the pin deliberately (an intended change of results), build the package
// (./scripts/build-pkg.sh), then from pkg/ run
//   CTXKIT_PIN_UPDATE=1 node --test test/corpus_outputs.test.mjs
// which rewrites corpus_outputs.json instead of comparing; commit it with the change that
// caused it. To see which call of a case changed, run the file with CTXKIT_PIN_DUMP=<folder>
// on both versions of the code: each case's results are written there, one JSON line per
// call (<case name>.jsonl), ready to diff.
//
// Determinism: the package has no clock (dates and the system prompt are passed in), no
// randomness and no I/O, so the results depend only on these inputs and the order of calls.
// That order matters (views advance the nudge counters and keep the checkpoints they make), so
// it is fixed here, and every format gets an Engine of its own (an Engine's views share
// unchanged message objects through a cache).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ck from 'ctxkit';
import { budget, corpusJson, fixture, fixtureNames, pipelineLog, pkgDir, SYSTEM, TODOS } from './helpers.mjs';

const PIN_FILE = join(pkgDir, 'test', 'corpus_outputs.json');
const UPDATE = process.env.CTXKIT_PIN_UPDATE === '1';
const DUMP = process.env.CTXKIT_PIN_DUMP;
const pinned = UPDATE ? {} : JSON.parse(readFileSync(PIN_FILE, 'utf8'));
const computed = {};

const FORMATS = ['ctxkit', 'openai', 'anthropic'];
const WINDOWS = [4000, 8000];
const DATE = '2026-02-11';

/** What the deterministic summarizer answers: a valid summary, the same every time. */
const SUMMARY = '<analysis>Pinned answer.</analysis><summary>## Goal\nFinish the task the user asked for.\n'
  + '## Progress\nRead the relevant files and ran the tools shown.\n## Key Decisions\nNone yet.\n'
  + '## Next Steps\nContinue from the last tool result.\n## Critical Context\nNothing else.</summary>';

/** The slice of a Claude Code session (tests/fixtures/pipeline), ctxkit messages. */
const slice = pipelineLog();
/** The first 10 tau-bench trajectories of the corpus, OpenAI messages. */
const tau = corpusJson('tau-bench', 'gpt-4o-airline.json').slice(0, 10);

/**
 * Records every result of a case: `add(value)` keeps its JSON, `attempt(fn)` keeps what fn
 * returns or the message it throws (and returns the value, or undefined).
 */
class Recorder {
  constructor() {
    this.lines = [];
  }

  add(value) {
    const json = JSON.stringify(value);
    this.lines.push(json === undefined ? 'undefined' : json);
    return value;
  }

  attempt(fn) {
    try {
      return this.add(fn());
    } catch (error) {
      this.add({ error: String(error?.message ?? error) });
      return undefined;
    }
  }

  async attemptAsync(fn) {
    try {
      return this.add(await fn());
    } catch (error) {
      this.add({ error: String(error?.message ?? error) });
      return undefined;
    }
  }

  pin() {
    const text = this.lines.join('\n');
    return {
      digest: createHash('sha256').update(text, 'utf8').digest('hex'),
      bytes: Buffer.byteLength(text, 'utf8'),
    };
  }
}

/** A pinned case: runs `body(recorder)`, then compares its digest with the pin (or keeps it). */
function pinCase(name, body) {
  test(name, async () => {
    const recorder = new Recorder();
    await body(recorder);
    const result = recorder.pin();
    computed[name] = result;
    if (DUMP) {
      mkdirSync(DUMP, { recursive: true });
      writeFileSync(join(DUMP, `${name.replace(/[^\w.,=+-]+/g, '_')}.jsonl`), `${recorder.lines.join('\n')}\n`);
    }
    if (UPDATE) return;
    assert.ok(pinned[name], `${name}: not in corpus_outputs.json (run with CTXKIT_PIN_UPDATE=1 to add it)`);
    assert.deepEqual(result, pinned[name], `${name}: results differ from the pin`);
  });
}

after(() => {
  if (UPDATE) writeFileSync(PIN_FILE, `${JSON.stringify(computed, null, 2)}\n`);
});

/**
 * The turns of a conversation: each ends with an assistant message and holds what came since
 * the previous one (tool results, user messages); messages after the last assistant message
 * make a last turn.
 */
function turns(messages) {
  const out = [];
  let pending = [];
  for (const message of messages) {
    pending.push(message);
    if (message.role === 'assistant') {
      out.push(pending);
      pending = [];
    }
  }
  if (pending.length > 0) out.push(pending);
  return out;
}

/** The conversations of a source, with the format their messages are in and the family. */
const SOURCES = {
  slice: { family: 'claude', format: 'ctxkit', conversations: () => [slice] },
  tau: { family: 'openai', format: 'openai', conversations: () => tau.map((entry) => entry.traj) },
};

/** tau-bench's system prompt of the first trajectory (the airline policy, a long text). */
const TAU_SYSTEM = tau[0].traj.find((message) => message.role === 'system').content;

/**
 * The turn options of a source at a window: the slice has the pipeline snapshots' system
 * prompt and todos; tau-bench the first 2,000 characters of its airline policy (the
 * trajectories' own system message stays in the log, where `append` puts it).
 */
function options(source, window, format) {
  return source === 'slice'
    ? { system: SYSTEM, budget: budget(window), todos: TODOS, format }
    : { system: TAU_SYSTEM.slice(0, 2_000), budget: budget(window), format };
}

// The Engine, turn by turn: append a turn, view it; at the end the state, the checkpoint, and
// a view from the state restored by fromJSON.
for (const [name, source] of Object.entries(SOURCES)) {
  for (const window of WINDOWS) {
    for (const format of FORMATS) {
      pinCase(`engine view: ${name}, window ${window}, ${format}`, (r) => {
        for (const conversation of source.conversations()) {
          const engine = new ck.Engine({ family: source.family });
          for (const turn of turns(conversation)) {
            r.attempt(() => engine.append(turn, source.format));
            r.attempt(() => engine.view(options(name, window, format)));
          }
          r.add([engine.length, engine.nextSeq, engine.family]);
          r.add(engine.latestCheckpoint);
          r.add(engine.toJSON());
          r.attempt(() => ck.Engine.fromJSON(JSON.stringify(engine)).view(options(name, window, format)));
        }
      });
    }
  }
}

// Usage calibration: after each view the API "reports" a fixed 10% more than the estimate.
pinCase('engine view with recordUsage: slice, window 8000, openai', (r) => {
  const engine = new ck.Engine({ family: 'claude' });
  for (const turn of turns(slice)) {
    r.attempt(() => engine.append(turn));
    const view = r.attempt(() => engine.view(options('slice', 8000, 'openai')));
    if (view) r.attempt(() => engine.recordUsage(view.stats, Math.round(view.stats.total_tokens * 1.1)));
  }
  r.add(engine.toJSON());
});

// prepare with a summarizer that answers the fixed summary, and with one that throws: the
// requests it was given are pinned too.
const SUMMARIZERS = {
  answers: async () => SUMMARY,
  throws: () => {
    throw new Error('the pinned summarizer always fails');
  },
};
for (const [name, source] of Object.entries(SOURCES)) {
  for (const [kind, summarizer] of Object.entries(SUMMARIZERS)) {
    for (const [window, format] of WINDOWS.flatMap((w) => FORMATS.map((f) => [w, f]))) {
      pinCase(`engine prepare (summarizer ${kind}): ${name}, window ${window}, ${format}`, async (r) => {
        for (const conversation of source.conversations()) {
          const engine = new ck.Engine({ family: source.family });
          const summarize = (request) => {
            r.add({ summarize: request });
            return summarizer(request);
          };
          for (const turn of turns(conversation)) {
            r.attempt(() => engine.append(turn, source.format));
            await r.attemptAsync(() => engine.prepare({ ...options(name, window, format), summarize }));
          }
          r.add(engine.toJSON());
        }
      });
    }
  }
}

// planTurn without a session: the caller keeps the checkpoint and the nudge state, answers
// summary requests through summaryCheckpoint (the fixed answer, or none: extractive), and
// plans again.
for (const [name, source] of Object.entries(SOURCES)) {
  for (const window of WINDOWS) {
    for (const answer of [SUMMARY, null]) {
      const format = window === 4000 ? 'anthropic' : 'openai';
      const label = answer ? 'answered' : 'extractive';
      pinCase(`planTurn + summaryCheckpoint (${label}): ${name}, window ${window}, ${format}`, (r) => {
        for (const conversation of source.conversations()) {
          const messages = source.format === 'openai' ? ck.fromOpenAI(conversation) : conversation;
          let log = [];
          let checkpoint = null;
          let nudgeState = {};
          for (const turn of turns(messages)) {
            log = log.concat(turn);
            const input = { ...options(name, window, format), log, checkpoint, nudge_state: nudgeState };
            input.policy = { family: source.family };
            let plan = r.attempt(() => ck.planTurn(input));
            if (plan?.kind === 'summarize') {
              const made = r.attempt(() => ck.summaryCheckpoint({
                request: plan.request, answer, log, policy: input.policy,
              }));
              if (!made) break;
              checkpoint = made.checkpoint;
              plan = r.attempt(() => ck.planTurn({ ...input, checkpoint }));
            }
            if (plan?.kind !== 'ready') break;
            if (plan.new_checkpoint) checkpoint = plan.new_checkpoint;
            nudgeState = plan.next_nudge_state;
          }
        }
      });
    }
  }
}

// The wire converters and the validators over the wire fixtures, the slice and tau-bench.
pinCase('wire and validate: fixtures', (r) => {
  for (const name of fixtureNames('wire', /\.json$/)) {
    const input = fixture('wire', name);
    const from = name.startsWith('openai') ? ck.fromOpenAI : ck.fromAnthropic;
    const messages = r.attempt(() => from(input));
    if (!messages) continue;
    const openai = r.attempt(() => ck.toOpenAI(messages));
    const anthropic = r.attempt(() => ck.toAnthropic(messages));
    r.attempt(() => ck.fromOpenAI(openai));
    r.attempt(() => ck.fromAnthropic(anthropic));
    for (const provider of ['openai', 'anthropic']) {
      r.attempt(() => ck.validate(input, provider));
      r.attempt(() => ck.validate(provider === 'openai' ? openai : anthropic, provider));
    }
  }
});

pinCase('wire and validate: slice and tau-bench', (r) => {
  const conversations = [slice, ...tau.map((entry) => ck.fromOpenAI(entry.traj))];
  for (const [index, messages] of conversations.entries()) {
    const openai = r.attempt(() => ck.toOpenAI(messages));
    const anthropic = r.attempt(() => ck.toAnthropic(messages));
    r.attempt(() => ck.fromOpenAI(openai));
    r.attempt(() => ck.fromAnthropic(anthropic));
    r.attempt(() => ck.validate(openai, 'openai'));
    r.attempt(() => ck.validate(anthropic, 'anthropic'));
    r.attempt(() => ck.validate(messages, 'anthropic'));
    if (index > 0) r.attempt(() => ck.validate(tau[index - 1].traj, 'openai'));
  }
});

// repairToolPairs over the repair fixtures, and over the slice and tau-bench cut at every
// point (cuts orphan tool results and lose results of calls).
pinCase('repairToolPairs: fixtures, slice and tau-bench cuts', (r) => {
  for (const name of fixtureNames('repair', /\.json$/)) {
    r.attempt(() => ck.repairToolPairs(fixture('repair', name)));
  }
  const conversations = [slice, ...tau.slice(0, 3).map((entry) => ck.fromOpenAI(entry.traj))];
  for (const messages of conversations) {
    r.attempt(() => ck.repairToolPairs(messages));
    for (let cut = 1; cut < messages.length; cut += 1) {
      r.attempt(() => ck.repairToolPairs(messages.slice(cut)));
      r.attempt(() => ck.repairToolPairs(messages.slice(0, cut)));
    }
  }
});

// extractiveSummary: incremental over the slice (each summary merged into the next), and per
// tau-bench trajectory, with the default and small limits.
pinCase('extractiveSummary: slice and tau-bench', (r) => {
  let previous = null;
  for (let end = 6; end <= slice.length; end += 6) {
    previous = r.attempt(() => ck.extractiveSummary(slice.slice(end - 6, end), { previous }));
    r.attempt(() => ck.extractiveSummary(slice.slice(0, end), { limits: { max_bytes: 600, recent_calls: 3 } }));
  }
  for (const entry of tau) {
    const messages = ck.fromOpenAI(entry.traj);
    r.attempt(() => ck.extractiveSummary(messages));
    r.attempt(() => ck.extractiveSummary(messages, { previous, limits: { max_bytes: 1_000 } }));
  }
});

// Memories made from the tau-bench tasks' instructions, rendered as the precis and put in
// system prompts with the other parts.
const MEMORIES = tau.map((entry, index) => ({
  id: `task-${entry.task_id}`,
  title: `Task ${entry.task_id} for ${entry.info.task.user_id}`,
  content: entry.info.task.instruction,
  category: ['preference', 'convention', 'decision', 'fact'][index % 4],
  importance: (index % 10) + 1,
  source: ['user', 'agent', 'extracted'][index % 3],
  scope: index % 2 === 0 ? 'project' : 'global',
  updated_at: 1_770_768_000 + index * 3_600,
  tags: entry.info.task.actions.map((action) => action.name),
}));

pinCase('renderPrecis and buildSystemPrompt: tau-bench tasks', (r) => {
  const precis = r.attempt(() => ck.renderPrecis(MEMORIES));
  r.attempt(() => ck.renderPrecis(MEMORIES, { max_entries: 3 }));
  r.attempt(() => ck.renderPrecis(MEMORIES, { max_bytes: 700 }));
  r.attempt(() => ck.renderPrecis([]));
  r.attempt(() => ck.buildSystemPrompt({ date: DATE }));
  r.attempt(() => ck.buildSystemPrompt({
    base: 'You are an airline customer service agent.',
    working_directory: '/home/USER/airline',
    date: DATE,
    agents_md: TAU_SYSTEM,
    skills: [{ name: 'refunds', description: 'Issue a refund within policy.' }, { name: 'book', description: 'Book a flight.' }],
    todo_guidance: 'Keep a todo list.',
    offload_guidance: {},
    memory_precis: precis,
  }));
  r.attempt(() => ck.buildSystemPrompt({ date: DATE, agents_md: TAU_SYSTEM, agents_md_max_bytes: 1_500 }));
  r.attempt(() => ck.buildSystemPrompt({ date: '2026-02-30' }));
});

// planOffload of every tool result of the slice and of tau-bench, at the default threshold
// and at a small one.
pinCase('planOffload: slice and tau-bench tool results', (r) => {
  const conversations = [slice, ...tau.map((entry) => ck.fromOpenAI(entry.traj))];
  for (const [index, messages] of conversations.entries()) {
    const toolNames = new Map();
    for (const [at, message] of messages.entries()) {
      for (const call of message.tool_calls ?? []) toolNames.set(call.id, call.name);
      if (message.role !== 'tool') continue;
      const input = {
        seq: at + 1, session: `pin-${index}`, result: message, tool_name: toolNames.get(message.tool_call_id) ?? null,
      };
      r.attempt(() => ck.planOffload(input));
      r.attempt(() => ck.planOffload({ ...input, policy: { threshold_bytes: 300, excluded_tools: [] } }));
    }
  }
});

// estimateTokens of every message, whole conversations and long texts, in every family;
// advanceNudges turn by turn over the slice and the first tau-bench trajectory.
pinCase('estimateTokens and advanceNudges: slice and tau-bench', (r) => {
  const conversations = [slice, ...tau.map((entry) => ck.fromOpenAI(entry.traj))];
  for (const family of ['openai', 'claude', 'claude-4.7']) {
    for (const messages of conversations) {
      r.add(messages.map((message) => ck.estimateTokens(message, family)));
      r.attempt(() => ck.estimateTokens(messages, family));
    }
    r.attempt(() => ck.estimateTokens(TAU_SYSTEM, family));
    r.attempt(() => ck.estimateTokens(SYSTEM, family));
  }
  for (const messages of conversations.slice(0, 2)) {
    for (const policy of [{}, { memory_every_turns: 3, stall_after_turns: 4 }]) {
      let state = {};
      let log = [];
      for (const turn of turns(messages)) {
        log = log.concat(turn);
        const outcome = r.attempt(() => ck.advanceNudges({ state, log, policy }));
        if (!outcome) break;
        state = outcome.next;
      }
    }
  }
});

// The defaults, and the messages of errors the package gives for bad input.
pinCase('defaults and error messages', (r) => {
  r.attempt(() => ck.defaults());
  const engine = new ck.Engine({ family: 'claude' });
  r.attempt(() => engine.append(slice.slice(0, 5)));
  r.attempt(() => engine.append([{ content: 'no role' }]));
  r.attempt(() => engine.append(tau[0].traj.slice(0, 3), 'anthropic'));
  r.attempt(() => engine.view({ format: 'yaml' }));
  r.attempt(() => engine.view({ budget: { context_window: 10 } }));
  r.attempt(() => engine.view({ windw: 8000 }));
  r.attempt(() => engine.view({ policy: { family: 'openai' } }));
  r.attempt(() => new ck.Engine({ family: 'gpt' }));
  r.attempt(() => ck.Engine.fromJSON('{"family": "claude"'));
  r.attempt(() => ck.planTurn({}));
  r.attempt(() => ck.validate([], 'gemini'));
  r.attempt(() => ck.toAnthropic([{ role: 'tool', tool_call_id: 'x', content: 'orphan' }]));
  r.attempt(() => ck.estimateTokens(42));
  r.add([engine.length, engine.nextSeq]);
});

test('corpus_outputs.json pins exactly the cases of this file', { skip: UPDATE && 'updating the pin' }, () => {
  // Runs after the cases (node --test runs a file's tests in order).
  assert.deepEqual(Object.keys(pinned).sort(), Object.keys(computed).sort());
});
