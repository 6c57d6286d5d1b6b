// Anthropic's server compaction through the JS engine's `summarize` callback: the callback
// POSTs `request.anthropic_compaction` as is to a fake Anthropic server on loopback (which
// checks the beta header and `compaction`, and that `context_management` is absent) and
// answers `{ anthropic_compaction: <the response> }`. The block's text becomes the
// checkpoint's summary, the block is kept byte for byte beside it and sent first in Anthropic
// views only; a refused or malformed response falls back to the extractive summary, saying why.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import * as ck from 'ctxkit';
import { checkedEndpoint } from './checked-endpoint.mjs';
import { budget, pipelineLog, QUIET, SYSTEM } from './helpers.mjs';

const overBudget = { system: SYSTEM, budget: budget(9_000), policy: { nudges: QUIET, max_summary_tokens: 2_000 } };
const TEXT = '## Goal\nShip the spotter fix.\n## Progress\nTests pass.';
// The block's text as the checkpoint keeps it: after the log's Goal, its own goal heading
// renamed to say whose account it is (the user's words own the Goal).
const KEPT = TEXT.replace('## Goal', "## The summarizer's own account of the goal (not the user's words)");
// Spaced as a server might send it: the kept block is these bytes, not a re-serialization.
const BLOCK = `{"type": "compaction",  "content": ${JSON.stringify(TEXT)}, "signature": "c2lnbmVk"}`;

/** A fake Anthropic Messages endpoint answering `answer` (a JSON text); records what it got. */
function fakeAnthropic(answer) {
  return checkedEndpoint(({ path, headers, body }) => path === '/v1/messages'
    && headers['anthropic-beta'] === 'compact-2026-09-04'
    && body.compaction?.type === 'summarize'
    && !('context_management' in body)
    && Array.isArray(body.messages), [answer]);
}

/** A summarize callback that POSTs the server-compaction request; `asText` answers the body text. */
function compactingSummarizer(url, asText) {
  return async (request, { signal }) => {
    const { headers, body } = request.anthropic_compaction;
    const response = await fetch(`${url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...headers },
      body: JSON.stringify({ model: 'claude-test', ...body }),
      signal,
    });
    return { anthropic_compaction: asText ? await response.text() : await response.json() };
  };
}

function sliceEngine() {
  const engine = new ck.Engine({ family: 'claude' });
  engine.append(pipelineLog());
  return engine;
}

/** Every content block of a rendered view whose type is `compaction`. */
function compactionBlocks(value) {
  return JSON.stringify(value).match(/"type":"compaction"/g) ?? [];
}

test('a server-compaction answer becomes the summary, its block first in anthropic views only', async () => {
  const answer = `{"id":"msg_1","type":"message","role":"assistant","stop_reason":"compaction","content":[${BLOCK}],"usage":{"input_tokens":900,"output_tokens":60}}`;
  const server = await fakeAnthropic(answer);
  try {
    const engine = sliceEngine();
    const view = await engine.prepare({ ...overBudget, format: 'anthropic', summarize: compactingSummarizer(server.url, true) });
    assert.equal(server.requests.length, 1, 'one compaction request, accepted by the server');
    assert.equal(view.summary.method, 'llm');
    assert.equal(view.summary.fallback_reason ?? null, null);

    const checkpoint = engine.latestCheckpoint;
    assert.ok(checkpoint.summary.startsWith('## Goal\n- '), `the log's Goal first: ${checkpoint.summary}`);
    assert.ok(checkpoint.summary.includes(KEPT), 'then the block text (pinned facts may follow)');
    assert.equal(checkpoint.compaction_block, BLOCK, 'the block is kept byte for byte');
    assert.equal(engine.toJSON().checkpoints.at(-1).compaction_block, BLOCK, 'and in the state');

    // Anthropic: the summary message opens with the block itself.
    const first = view.messages[0];
    assert.equal(first.role, 'user');
    assert.deepEqual(first.content[0], JSON.parse(BLOCK));
    assert.deepEqual(ck.validate(view, 'anthropic'), []);
    const again = engine.view({ ...overBudget, format: 'anthropic' });
    assert.deepEqual(again.messages[0].content[0], JSON.parse(BLOCK), 'a later turn sends it too');

    // Every other format gets the plaintext summary and no block.
    for (const [format, provider] of [['openai', 'openai'], ['responses', 'responses']]) {
      const other = engine.view({ ...overBudget, format });
      assert.deepEqual(compactionBlocks(other), [], `${format}: no compaction block`);
      assert.ok(JSON.stringify(other).includes(JSON.stringify(KEPT).slice(1, -1)), `${format}: the summary text`);
      assert.deepEqual(ck.validate(format === 'responses' ? other.input ?? other : other, provider), [], format);
    }
  } finally {
    await server.close();
  }
});

test('a refused or malformed server-compaction answer falls back, saying why', async () => {
  const cases = [
    ['{"type":"message","stop_reason":"refusal","content":[]}', /anthropic_compaction response gives no summary: refused: stop_reason "refusal"/],
    ['{"type":"message","stop_reason":"end_turn","content":[{"type":"text","text":"hi"}]}', /gives no summary: malformed answer: stop_reason "end_turn"/],
  ];
  for (const [answer, reason] of cases) {
    const server = await fakeAnthropic(answer);
    try {
      const engine = sliceEngine();
      const view = await engine.prepare({ ...overBudget, format: 'anthropic', summarize: compactingSummarizer(server.url, false) });
      assert.equal(server.requests.length, 1);
      assert.equal(view.summary.method, 'extractive');
      assert.match(view.summary.fallback_reason, reason);
      assert.equal(engine.latestCheckpoint.compaction_block ?? null, null, 'no block is kept');
      assert.deepEqual(compactionBlocks(view), []);
    } finally {
      await server.close();
    }
  }
});
